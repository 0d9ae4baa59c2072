package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

const usdtChecksum = "0xdAC17F958D2ee523a2206206994597C13D831ec7"

func TestParseAddressAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"checksummed", usdtChecksum},
		{"all lowercase", strings.ToLower(usdtChecksum)},
		{"all uppercase hex", "0x" + strings.ToUpper(usdtChecksum[2:])},
		{"digits only", "0x4200000000000000000000000000000000000006"},
		{"zero address", "0x0000000000000000000000000000000000000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseAddress(tc.in)
			require.NoError(t, err)
			require.True(t, strings.EqualFold(tc.in, a.Hex()), "%s parsed as %s", tc.in, a.Hex())
		})
	}
}

func TestParseAddressRefuses(t *testing.T) {
	// One letter of the checksummed form with its case flipped.
	badChecksum := "0xDAC17F958D2ee523a2206206994597C13D831ec7"
	tests := []struct {
		name   string
		in     string
		reason string
	}{
		{"empty", "", "is empty"},
		{"bad checksum", badChecksum, "wrong EIP-55 checksum"},
		{"upper 0X prefix", "0X" + usdtChecksum[2:], "lowercase 0x"},
		{"no prefix", usdtChecksum[2:], "does not start with 0x"},
		{"only prefix", "0x", "has 0 characters after 0x"},
		{"too short", usdtChecksum[:41], "has 39 characters"},
		{"too long", usdtChecksum + "0", "has 41 characters"},
		{"much too long (HexToAddress would crop)", usdtChecksum + strings.Repeat("0", 24), "has 64 characters"},
		{"non-hex letter", "0xgAC17F958D2ee523a2206206994597C13D831ec7", `'g'`},
		{"leading space", " " + usdtChecksum, "whitespace"},
		{"trailing newline", usdtChecksum + "\n", "whitespace"},
		{"nul", usdtChecksum[:41] + "\x00", "control character"},
		{"fullwidth digit", "0x\uff10" + usdtChecksum[5:], "non-ASCII character U+FF10"},
		{"cyrillic a", "0x" + strings.Repeat("\u0430", 40), "non-ASCII character U+0430"},
		{"invalid utf8", "0x\xff" + usdtChecksum[3:], "not valid UTF-8"},
		{"ens name", "vitalik.eth", "does not start with 0x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseAddress(tc.in)
			require.Error(t, err, "accepted as %s", a.Hex())
			var ae *AddressError
			require.True(t, errors.As(err, &ae), "error %T is not *AddressError", err)
			require.Contains(t, ae.Reason, tc.reason)
			require.True(t, strings.HasPrefix(err.Error(), `address "`), "message %q", err)
		})
	}
}

func TestParseRecipient(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{"ordinary", usdtChecksum, ""},
		{"zero address", "0x0000000000000000000000000000000000000000", "zero address"},
		{"syntax still checked", "0x123", "has 3 characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseRecipient(tc.in)
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, tc.in, a.Hex())
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
			require.Equal(t, common.Address{}, a)
		})
	}
}

func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{
		usdtChecksum, strings.ToLower(usdtChecksum), "0x" + strings.ToUpper(usdtChecksum[2:]),
		"0xDAC17F958D2ee523a2206206994597C13D831ec7", "0X" + usdtChecksum[2:], usdtChecksum[2:],
		"0x0000000000000000000000000000000000000000", "0x", "", usdtChecksum + "00", " " + usdtChecksum,
		"0x\uff10" + usdtChecksum[5:],
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress(s)
		if err != nil {
			var ae *AddressError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T is not *AddressError: %v", err, err)
			}
			return
		}
		if !strings.EqualFold(s, a.Hex()) {
			t.Fatalf("accepted %q as %s", s, a.Hex())
		}
		if s != a.Hex() && s != strings.ToLower(a.Hex()) && s != "0x"+strings.ToUpper(a.Hex()[2:]) {
			t.Fatalf("accepted %q, which is neither checksummed nor single-case", s)
		}
	})
}
