package policy

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

func TestParseCapListAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []CapEntry
	}{
		{"empty string is empty list", "", nil},
		{"brief example", "ETH=0.01,USDC=25,0xdAC17F958D2ee523a2206206994597C13D831ec7=25", []CapEntry{
			{"ETH", "0.01", 0}, {"USDC", "25", 0}, {usdtChecksum, "25", 0},
		}},
		{"eth any case", "eTh=1", []CapEntry{{"ETH", "1", 0}}},
		{"symbol upper-cased", "usdc=1", []CapEntry{{"USDC", "1", 0}}},
		{"lowercase address checksummed", strings.ToLower(usdtChecksum) + "=1", []CapEntry{{usdtChecksum, "1", 0}}},
		{"spaces around items and '='", " ETH = 0.5 ,\tUSDC\t=\t2 ", []CapEntry{{"ETH", "0.5", 0}, {"USDC", "2", 0}}},
		{"zero cap", "ETH=0", []CapEntry{{"ETH", "0", 0}}},
		{"many decimals kept as written", "DAI=0.000000000000000001", []CapEntry{{"DAI", "0.000000000000000001", 0}}},
		{"16-character symbol", "ABCDEFGHIJKLMNOP=1", []CapEntry{{"ABCDEFGHIJKLMNOP", "1", 0}}},
		{"unlimited any case", "ETH=Unlimited, USDC = unlimited", []CapEntry{{"ETH", Unlimited, 0}, {"USDC", Unlimited, 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCapList(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParseCapListRefuses(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		reason string
	}{
		{"only spaces", "  ", "is empty"},
		{"trailing comma", "ETH=1,", "is empty"},
		{"double comma", "ETH=1,,USDC=2", "is empty"},
		{"no equals", "ETH", "has no '='"},
		{"colon instead of equals", "ETH:1", "has no '='"},
		{"no asset", "=1", "has no asset"},
		{"no amount", "ETH=", "is empty"},
		{"two equals", "ETH=1=2", "not a decimal number"},
		{"exponent amount", "ETH=1e18", "exponent"},
		{"negative amount", "ETH=-1", "has a sign"},
		{"hex amount", "ETH=0x10", "hexadecimal"},
		{"duplicate symbol", "USDC=1,usdc=2", "repeats the asset USDC"},
		{"duplicate eth", "ETH=1,eth=2", "repeats the asset ETH"},
		{"duplicate address in two cases", usdtChecksum + "=1," + strings.ToLower(usdtChecksum) + "=2", "repeats the asset " + usdtChecksum},
		{"bad checksum address", "0xDAC17F958D2ee523a2206206994597C13D831ec7=1", "wrong EIP-55 checksum"},
		{"short address", "0x1234=1", "bad token address"},
		{"zero address", "0x0000000000000000000000000000000000000000=1", "zero address"},
		{"symbol too long", "ABCDEFGHIJKLMNOPQ=1", "1-16 ASCII letters and digits"},
		{"symbol with dash", "USD-C=1", "1-16 ASCII letters and digits"},
		{"unicode symbol", "U\u0405DC=1", `has the asset "U\u0405DC"`},
		{"inner space in symbol", "US DC=1", "1-16 ASCII letters and digits"},
		{"newline", "ETH=1\n", "whitespace"},
		{"too many items", strings.Repeat("A=1,", MaxCapEntries) + "B=1", "limit is 64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCapList(tc.in)
			require.Error(t, err, "accepted as %+v", got)
			var ce *CapListError
			require.True(t, errors.As(err, &ce), "error %T is not *CapListError", err)
			require.Contains(t, err.Error(), tc.reason)
			require.True(t, strings.HasPrefix(err.Error(), "cap list"), "message %q", err)
		})
	}
}

func TestResolveCapList(t *testing.T) {
	unknownToken := mustAddress("0x1111111111111111111111111111111111111111")
	decimalsOf := func(a common.Address) (uint8, error) {
		if a == unknownToken {
			return 4, nil
		}
		return 0, errors.New("node said no at https://user:secret@node.example/v3/KEY")
	}
	usdc := mustAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	usdt := mustAddress(usdtChecksum)

	t.Run("mainnet mix", func(t *testing.T) {
		entries, err := ParseCapList("ETH=0.01,usdc=25," + strings.ToLower(usdtChecksum) + "=2.5,0x1111111111111111111111111111111111111111=1.0001,DAI=0")
		require.NoError(t, err)
		got, err := ResolveCapList(entries, 1, decimalsOf)
		require.NoError(t, err)
		require.Equal(t, map[common.Address]*big.Int{
			NativeAsset:  big.NewInt(10_000_000_000_000_000),
			usdc:         big.NewInt(25_000_000),
			usdt:         big.NewInt(2_500_000),
			unknownToken: big.NewInt(10_001),
			mustAddress("0x6B175474E89094C44Da98b954EedeAC495271d0F"): big.NewInt(0),
		}, got)
	})

	tests := []struct {
		name       string
		list       string
		chainID    uint64
		decimalsOf func(common.Address) (uint8, error)
		reason     []string
	}{
		{"unknown symbol lists known ones and suggests address", "PEPE=1", 1, decimalsOf,
			[]string{"PEPE", "not a known token on Ethereum mainnet", "ETH, USDC, USDT, DAI, WETH, WBTC", "write its address"}},
		{"symbol on chain without tokens", "USDC=1", 10, decimalsOf,
			[]string{"not a known token on OP Mainnet", "no token symbols are known"}},
		{"symbol known elsewhere only", "WBTC=1", 8453, decimalsOf, []string{"not a known token on Base"}},
		{"too many decimals for token", "USDC=0.0000001", 1, decimalsOf, []string{"7 decimal places", "only 6"}},
		{"too many decimals for eth", "ETH=0.0000000000000000001", 1, decimalsOf, []string{"19 decimal places", "only 18"}},
		{"too many decimals for on-chain token", "0x1111111111111111111111111111111111111111=0.00001", 1, decimalsOf, []string{"5 decimal places", "only 4"}},
		{"symbol and address of same token", "USDC=1,0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48=2", 1, decimalsOf,
			[]string{"second time", "USDC (0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48)"}},
		{"unknown address without decimalsOf", "0x1111111111111111111111111111111111111111=1", 1, nil, []string{"decimals are not known"}},
		{"decimals read fails", "0x2222222222222222222222222222222222222222=1", 1, decimalsOf, []string{"could not be read"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := ParseCapList(tc.list)
			require.NoError(t, err)
			got, err := ResolveCapList(entries, tc.chainID, tc.decimalsOf)
			require.Error(t, err, "resolved to %v", got)
			var ce *CapListError
			require.ErrorAs(t, err, &ce)
			for _, r := range tc.reason {
				require.Contains(t, err.Error(), r)
			}
			require.NotContains(t, err.Error(), "secret", "a node error's text must not reach the message")
		})
	}

	t.Run("decimals error stays reachable", func(t *testing.T) {
		entries, err := ParseCapList("0x2222222222222222222222222222222222222222=1")
		require.NoError(t, err)
		_, err = ResolveCapList(entries, 1, decimalsOf)
		require.ErrorContains(t, errors.Unwrap(err), "node said no")
	})

	t.Run("hand-built entries are re-checked", func(t *testing.T) {
		for _, e := range []CapEntry{
			{Asset: "0x0000000000000000000000000000000000000000", Amount: "1"},
			{Asset: "0xDAC17F958D2ee523a2206206994597C13D831ec7", Amount: "1"},
			{Asset: "ETH", Amount: "1e18"},
		} {
			_, err := ResolveCapList([]CapEntry{e}, 1, decimalsOf)
			require.Error(t, err, "%+v", e)
		}
	})
}

func FuzzParseCapList(f *testing.F) {
	for _, s := range []string{
		"", "ETH=0.01,USDC=25,0xdAC17F958D2ee523a2206206994597C13D831ec7=25", " eth = 1 ", "ETH=1,", "=1",
		"USDC=1,usdc=2", "0x0000000000000000000000000000000000000000=1", "A=1e18", "ETH=1=2",
		"1:0=0", "base:USDC=25,8453:ETH=1,USDC=2", "nowhere:ETH=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries, err := ParseCapList(s)
		if err != nil {
			var ce *CapListError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not *CapListError: %v", err, err)
			}
			return
		}
		// Accepted entries are canonical: writing them back out parses to
		// the same entries.
		for _, e := range entries {
			if !amountGrammar.MatchString(e.Amount) {
				t.Fatalf("accepted amount %q", e.Amount)
			}
		}
		again, err := ParseCapList(formatCapList(entries))
		if err != nil {
			t.Fatalf("canonical form of %q does not re-parse: %v", s, err)
		}
		if len(again) != len(entries) {
			t.Fatalf("%q: %d entries, then %d", s, len(entries), len(again))
		}
		for i := range entries {
			if again[i] != entries[i] {
				t.Fatalf("%q: entry %d %+v became %+v", s, i, entries[i], again[i])
			}
		}
	})
}

// Every capped asset has every window: a cap list naming an asset in one
// window only refuses, naming the asset, the missing windows and the line
// to write; "unlimited" written for a window satisfies it.
func TestResolveCapWindows(t *testing.T) {
	usdc := mustAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	lists := func(tx, session, day string) [3][]CapEntry {
		var out [3][]CapEntry
		for i, s := range []string{tx, session, day} {
			if s == "-" {
				continue // unset: the default
			}
			e, err := ParseCapList(s)
			require.NoError(t, err)
			out[i] = e
		}
		return out
	}
	t.Run("the bundle's form: one window only", func(t *testing.T) {
		_, err := ResolveCapWindows(lists("USDC=25", "-", "-"), DefaultCaps, 1, nil)
		var we *CapWindowsError
		require.ErrorAs(t, err, &we)
		require.Equal(t, []AssetWindows{
			{Asset: "ETH", In: []string{EnvCapPerSession, EnvCapPerDay}, Missing: []string{EnvCapPerTx}},
			{Asset: "USDC", In: []string{EnvCapPerTx}, Missing: []string{EnvCapPerSession, EnvCapPerDay}},
		}, we.Assets)
		for _, s := range []string{
			"USDC is in WALLETGATE_CAP_PER_TX but missing from WALLETGATE_CAP_PER_SESSION (not set, so its default ETH=0.05 applies) and WALLETGATE_CAP_PER_DAY (not set, so its default ETH=0.1 applies)",
			"ETH is in WALLETGATE_CAP_PER_SESSION and WALLETGATE_CAP_PER_DAY but missing from WALLETGATE_CAP_PER_TX",
			"WALLETGATE_CAP_PER_TX=USDC=25,ETH=<amount>",
			"WALLETGATE_CAP_PER_SESSION=ETH=0.05,USDC=<amount>",
			"WALLETGATE_CAP_PER_DAY=ETH=0.1,USDC=<amount>",
			"USDC=unlimited",
		} {
			require.Contains(t, err.Error(), s)
		}
	})
	t.Run("a symbol and its address are one asset", func(t *testing.T) {
		_, err := ResolveCapWindows(lists("ETH=1,USDC=25", "ETH=1,"+usdc.Hex()+"=50", "ETH=1"), DefaultCaps, 1, nil)
		var we *CapWindowsError
		require.ErrorAs(t, err, &we)
		require.Equal(t, []AssetWindows{{Asset: "USDC", In: []string{EnvCapPerTx, EnvCapPerSession}, Missing: []string{EnvCapPerDay}}}, we.Assets)
		require.Contains(t, err.Error(), "WALLETGATE_CAP_PER_DAY=ETH=1,USDC=<amount>")
	})
	t.Run("unlimited everywhere caps nothing", func(t *testing.T) {
		_, err := ResolveCapWindows(lists("ETH=1,USDC=unlimited", "ETH=1,USDC=Unlimited", "ETH=1,USDC=UNLIMITED"), DefaultCaps, 1, nil)
		var we *CapWindowsError
		require.ErrorAs(t, err, &we)
		require.Equal(t, []AssetWindows{{Asset: "USDC", In: []string{EnvCapPerTx, EnvCapPerSession, EnvCapPerDay}, AllUnlimited: true}}, we.Assets)
		require.Contains(t, err.Error(), "USDC is unlimited in every window, which caps nothing")
	})
	t.Run("every window named, unlimited where written", func(t *testing.T) {
		got, err := ResolveCapWindows(lists("ETH=0.01,USDC=25", "ETH=unlimited,USDC=unlimited", "ETH=0.1,USDC=100"), DefaultCaps, 1, nil)
		require.NoError(t, err)
		require.Equal(t, map[common.Address]*big.Int{NativeAsset: big.NewInt(1e16), usdc: big.NewInt(25e6)}, got[0])
		require.Empty(t, got[1], "unlimited: absent from the window's caps")
		require.Equal(t, map[common.Address]*big.Int{NativeAsset: big.NewInt(1e17), usdc: big.NewInt(100e6)}, got[2])
	})
	t.Run("the defaults and the dev defaults keep the rule", func(t *testing.T) {
		_, err := ResolveCapWindows([3][]CapEntry{}, DefaultCaps, 1, nil)
		require.NoError(t, err)
		_, err = ResolveCapWindows([3][]CapEntry{}, DevCaps, 1337, nil)
		require.NoError(t, err)
	})
	t.Run("ETH named in one window only", func(t *testing.T) {
		_, err := ResolveCapWindows(lists("ETH=1,USDC=1", "USDC=2", "USDC=3"), DefaultCaps, 1, nil)
		require.ErrorContains(t, err, "ETH is in WALLETGATE_CAP_PER_TX but missing from WALLETGATE_CAP_PER_SESSION and WALLETGATE_CAP_PER_DAY")
	})
}
