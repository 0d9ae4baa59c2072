package policy

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"
)

func TestTokenTablesWellFormed(t *testing.T) {
	for chainID, specs := range tokenSpecs {
		seen := map[string]bool{}
		seenAddr := map[common.Address]bool{}
		for _, s := range specs {
			a, err := ParseAddress(s.address)
			require.NoError(t, err, "chain %d %s", chainID, s.symbol)
			require.Equal(t, a.Hex(), s.address, "chain %d %s: address not written in EIP-55 form", chainID, s.symbol)
			require.NotEqual(t, NativeAsset, a, "chain %d %s: zero address", chainID, s.symbol)
			require.Regexp(t, `^[A-Z0-9]{1,16}$`, s.symbol, "chain %d: symbol must be upper-case ASCII, as cap lists canonicalise it", chainID)
			require.NotEqual(t, NativeSymbol, s.symbol, "chain %d: ETH is the native coin, not a token", chainID)
			require.False(t, seen[s.symbol], "chain %d: symbol %s repeats", chainID, s.symbol)
			require.False(t, seenAddr[a], "chain %d: address %s repeats", chainID, s.address)
			require.NotEmpty(t, s.name)
			require.NotZero(t, s.decimals)
			seen[s.symbol] = true
			seenAddr[a] = true
		}
		// Every chain with tokens is a chain LookupNetwork knows.
		require.NotContains(t, LookupNetwork(chainID).Name, "unknown chain")
	}
}

func TestDevTokensAreDevAccountCreateAddresses(t *testing.T) {
	dev := mustAddress("0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c")
	usdt, ok := TokenBySymbol(1337, "USDT")
	require.True(t, ok)
	dai, ok := TokenBySymbol(1337, "DAI")
	require.True(t, ok)
	require.Equal(t, crypto.CreateAddress(dev, 0), usdt.Address, "USDT is deployed first (nonce 0)")
	require.Equal(t, crypto.CreateAddress(dev, 1), dai.Address, "DAI is deployed second (nonce 1)")
	require.Equal(t, uint8(6), usdt.Decimals)
	require.Equal(t, uint8(18), dai.Decimals)

	weth, ok := TokenBySymbol(1337, "WETH")
	require.True(t, ok)
	require.Equal(t, crypto.CreateAddress(dev, 2), weth.Address, "WETH9 is deployed third (nonce 2), first of the Uniswap contracts")
	require.Equal(t, uint8(18), weth.Decimals)

	// The USD Coin look-alike is deployed by a second dev account (the
	// facilitator's), at its nonce 0: its address depends on nothing the
	// dev account does, with or without Uniswap.
	facilitator := mustAddress("0x055696E7e2c364D6d9bDc69135cD742430f26Dd2")
	usdc, ok := TokenBySymbol(1337, "USDC")
	require.True(t, ok)
	require.Equal(t, crypto.CreateAddress(facilitator, 0), usdc.Address, "USDC is the facilitator account's first deployment (nonce 0)")
	require.Equal(t, uint8(6), usdc.Decimals)
	require.Len(t, KnownTokens(1337), 4)
}

func TestTokenBySymbol(t *testing.T) {
	tests := []struct {
		name    string
		chainID uint64
		symbol  string
		want    string // address hex; "" for not found
	}{
		{"exact", 1, "USDC", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"},
		{"lower case", 1, "usdc", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"},
		{"mixed case", 1, "wEtH", "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"},
		{"other chain table", 8453, "USDC", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
		{"same symbol different chain", 11155111, "USDC", "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"},
		{"not on this chain", 11155111, "DAI", ""},
		{"unknown chain", 999, "USDC", ""},
		{"prefix only", 1, "USD", ""},
		{"surrounding space", 1, " USDC", ""},
		{"long s folds to s in unicode, not here", 1, "U\u017fDC", ""},
		{"kelvin sign", 1, "\u212a", ""},
		{"cyrillic look-alike", 1, "U\u0405DC", ""},
		{"empty", 1, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, ok := TokenBySymbol(tc.chainID, tc.symbol)
			if tc.want == "" {
				require.False(t, ok, "found %+v", tok)
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.want, tok.Address.Hex())
		})
	}
}

func TestTokenByAddress(t *testing.T) {
	usdc := mustAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	tok, ok := TokenByAddress(1, usdc)
	require.True(t, ok)
	require.Equal(t, "USDC", tok.Symbol)
	require.Equal(t, uint8(6), tok.Decimals)

	_, ok = TokenByAddress(8453, usdc)
	require.False(t, ok, "mainnet USDC address is not a token on Base")
	_, ok = TokenByAddress(1, NativeAsset)
	require.False(t, ok)
}

func TestKnownTokensReturnsCopy(t *testing.T) {
	list := KnownTokens(1)
	require.Len(t, list, 5)
	list[0].Symbol = "EVIL"
	list[0].Decimals = 0
	again := KnownTokens(1)
	require.Equal(t, "USDC", again[0].Symbol)
	require.Equal(t, uint8(6), again[0].Decimals)
	require.Nil(t, KnownTokens(999))
}
