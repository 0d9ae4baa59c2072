package policy

import (
	"errors"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var amountGrammar = regexp.MustCompile(AmountGrammar)

func bigString(t *testing.T, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 10)
	require.True(t, ok, "bad test constant %q", s)
	return v
}

func TestParseAmountAccepts(t *testing.T) {
	maxU256 := "115792089237316195423570985008687907853269984665640564039457584007913129639935"
	tests := []struct {
		name     string
		in       string
		decimals uint8
		want     string // base units
	}{
		{"whole", "1", 6, "1000000"},
		{"fraction", "0.05", 6, "50000"},
		{"trailing zero within decimals", "0.050", 6, "50000"},
		{"trailing zeros beyond decimals", "1.500000", 2, "150"},
		{"many trailing zeros beyond decimals", "1.0000000000", 6, "1000000"},
		{"exactly decimals", "1.000001", 6, "1000001"},
		{"zero", "0", 18, "0"},
		{"zero with fraction", "0.000", 6, "0"},
		{"leading zeros", "007.5", 1, "75"},
		{"zero decimals whole", "42", 0, "42"},
		{"zero decimals with zero fraction", "42.000", 0, "42"},
		{"one wei", "0.000000000000000001", 18, "1"},
		{"large", "1000000.000001", 6, "1000000000001"},
		{"max uint256 base units", maxU256, 0, maxU256},
		{"max uint256 with zero fraction", maxU256 + ".0", 0, maxU256},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAmount(tc.in, tc.decimals)
			require.NoError(t, err)
			require.Equal(t, 0, got.Cmp(bigString(t, tc.want)), "got %s", got)
		})
	}
}

func TestParseAmountRefuses(t *testing.T) {
	maxU256 := "115792089237316195423570985008687907853269984665640564039457584007913129639935"
	tests := []struct {
		name     string
		in       string
		decimals uint8
		reason   string // a fragment the reason must contain
	}{
		{"empty", "", 6, "is empty"},
		{"leading space", " 1", 6, "whitespace"},
		{"trailing space", "1 ", 6, "whitespace"},
		{"inner space", "1 000", 6, "whitespace"},
		{"tab", "1\t", 6, "whitespace"},
		{"newline", "1\n", 6, "whitespace"},
		{"nul", "1\x00", 6, "control character"},
		{"plus", "+1", 6, "has a sign"},
		{"minus", "-1", 6, "has a sign"},
		{"minus zero", "-0", 6, "has a sign"},
		{"exponent", "1e18", 6, "exponent"},
		{"exponent upper", "1E6", 6, "exponent"},
		{"exponent signed", "1.5e+3", 6, "exponent"},
		{"hex", "0x10", 6, "hexadecimal"},
		{"hex upper", "0X10", 6, "hexadecimal"},
		{"underscore", "1_000", 6, "underscore"},
		{"comma thousands", "1,000", 6, "comma"},
		{"comma decimal", "0,5", 6, "comma"},
		{"leading dot", ".5", 6, "starts with a dot"},
		{"trailing dot", "5.", 6, "ends with a dot"},
		{"only dot", ".", 6, "starts with a dot"},
		{"two dots", "1.2.3", 6, "not a decimal number"},
		{"letters", "abc", 6, "not a decimal number"},
		{"eth suffix", "1eth", 6, "not a decimal number"},
		{"infinity", "Inf", 6, "not a decimal number"},
		{"nan", "NaN", 6, "not a decimal number"},
		{"arabic-indic digit", "\u0663", 6, "non-ASCII character U+0663"},
		{"fullwidth digit", "\uff11", 6, "non-ASCII character U+FF11"},
		{"fullwidth in number", "1\uff10", 6, "non-ASCII"},
		{"nbsp", "1\u00a0", 6, "non-ASCII"},
		{"invalid utf8", "1\xff", 6, "not valid UTF-8"},
		{"too many decimals", "1.0000001", 6, "has 7 decimal places but this asset has only 6"},
		{"too many decimals with trailing zeros", "0.0012300", 4, "has 5 decimal places"},
		{"fraction on zero-decimal asset", "1.5", 0, "no decimals"},
		{"too long", strings.Repeat("1", MaxAmountLength+1), 0, "limit is 100"},
		{"uint256 overflow", "115792089237316195423570985008687907853269984665640564039457584007913129639936", 0, "too large"},
		{"uint256 overflow via decimals", maxU256, 1, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseAmount(tc.in, tc.decimals)
			require.Error(t, err, "accepted as %v", v)
			var ae *AmountError
			require.True(t, errors.As(err, &ae), "error %T is not *AmountError", err)
			require.Contains(t, ae.Reason, tc.reason)
			require.True(t, strings.HasPrefix(err.Error(), `amount "`), "message %q", err)
			// Refusals for length, decimals or magnitude concern inputs the
			// grammar admits; every other refusal must be a grammar violation.
			grammatical := strings.Contains(tc.reason, "limit") || strings.Contains(tc.reason, "decimal places") || tc.reason == "no decimals" || tc.reason == "too large"
			require.Equal(t, grammatical, amountGrammar.MatchString(tc.in), "grammar match of %q", tc.in)
		})
	}
}

func TestAmountErrorDisplay(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // exact Error()
	}{
		{"newline escaped", "1\n2", `amount "1\n2": contains whitespace; expected a decimal number like 0.05 with no spaces`},
		{"bidi override escaped", "1\u202e", `amount "1\u202e": contains the non-ASCII character U+202E; write the ASCII digits 0-9 only`},
		{"quote escaped", `1"`, `amount "1\"": is not a decimal number; expected a decimal number like 0.05`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAmount(tc.in, 6)
			require.EqualError(t, err, tc.want)
		})
	}
	t.Run("long input truncated", func(t *testing.T) {
		_, err := ParseAmount(strings.Repeat("9", 500), 6)
		var ae *AmountError
		require.ErrorAs(t, err, &ae)
		require.LessOrEqual(t, len(ae.Input), maxDisplay+len("…"))
		require.True(t, strings.HasSuffix(ae.Input, "…"))
	})
}

func TestParsePositiveAmount(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{"positive", "0.000001", ""},
		{"zero", "0", "is zero"},
		{"zero with fraction", "0.000", "is zero"},
		{"zero beyond decimals", "0.00000000", "is zero"},
		{"syntax still checked", "-1", "has a sign"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParsePositiveAmount(tc.in, 6)
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, 1, v.Sign())
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestFormatAmount(t *testing.T) {
	tests := []struct {
		name     string
		v        string
		decimals uint8
		want     string
	}{
		{"fraction", "50000", 6, "0.05"},
		{"whole", "1000000", 6, "1"},
		{"mixed", "1000000000001", 6, "1000000.000001"},
		{"zero", "0", 18, "0"},
		{"one wei", "1", 18, "0.000000000000000001"},
		{"zero decimals", "42", 0, "42"},
		{"negative", "-1500000", 6, "-1.5"},
		{"negative small", "-1", 6, "-0.000001"},
		{"trailing zeros trimmed", "1230000", 6, "1.23"},
		{"many decimals", "1", 255, "0." + strings.Repeat("0", 254) + "1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, FormatAmount(bigString(t, tc.v), tc.decimals))
		})
	}
	t.Run("nil", func(t *testing.T) {
		require.Equal(t, "<nil>", FormatAmount(nil, 6))
	})
}

func FuzzParseAmount(f *testing.F) {
	seeds := []struct {
		s string
		d uint8
	}{
		{"0", 0}, {"1", 18}, {"0.05", 6}, {"0.050", 6}, {"1.500000", 2}, {"1.0000001", 6},
		{"1e18", 18}, {"0x10", 18}, {"+1", 6}, {"-1", 6}, {"1_000", 6}, {".5", 6}, {"5.", 6},
		{"\u0663", 6}, {"\uff11", 6}, {" 1", 6}, {"1.2.3", 6}, {"", 6}, {"00.10", 2},
		{"115792089237316195423570985008687907853269984665640564039457584007913129639935", 0},
		{"115792089237316195423570985008687907853269984665640564039457584007913129639936", 0},
		{"1." + strings.Repeat("0", 90), 255},
	}
	for _, s := range seeds {
		f.Add(s.s, s.d)
	}
	f.Fuzz(func(t *testing.T, s string, decimals uint8) {
		v, err := ParseAmount(s, decimals)
		if err != nil {
			var ae *AmountError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T is not *AmountError: %v", err, err)
			}
			return
		}
		if !amountGrammar.MatchString(s) {
			t.Fatalf("accepted %q, which does not match %s", s, AmountGrammar)
		}
		if v.Sign() < 0 || v.Cmp(maxUint256) > 0 {
			t.Fatalf("accepted %q as %s, outside uint256", s, v)
		}
		formatted := FormatAmount(v, decimals)
		back, err := ParseAmount(formatted, decimals)
		if err != nil {
			t.Fatalf("FormatAmount(%s, %d) = %q does not re-parse: %v", v, decimals, formatted, err)
		}
		if back.Cmp(v) != 0 {
			t.Fatalf("%q → %s → %q → %s", s, v, formatted, back)
		}
	})
}
