package tools_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain/uniswap"
)

type pricedQuoteOut struct {
	AmountIn          string `json:"amount_in"`
	AmountOut         string `json:"amount_out"`
	Rate              string `json:"rate"`
	RateInverse       string `json:"rate_inverse"`
	MidRate           string `json:"mid_rate"`
	PriceImpactPct    string `json:"price_impact_pct"`
	SqrtPriceX96      string `json:"sqrt_price_x96"`
	SqrtPriceX96After string `json:"sqrt_price_x96_after"`
}

func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	require.True(t, ok, "%q is a decimal", s)
	return r
}

// A quote gives both rates and its price impact against the pool's mid
// price, computed exactly from the pool's own slot0, and its text reads as
// a person reads a price: no Q64.96 number.
func TestQuoteGivesBothRatesAndThePriceImpact(t *testing.T) {
	e := swapEnv(t)
	u := e.dev.Contracts.Uniswap
	// The pool walletgate computes is the pool the factory made.
	node := ethclient.NewClient(e.dev.RPC())
	sel := crypto.Keccak256([]byte("getPool(address,address,uint24)"))[:4]
	data := append(append(append(sel, common.LeftPadBytes(e.dev.Contracts.USDT.Bytes(), 32)...), common.LeftPadBytes(u.WETH9.Bytes(), 32)...), common.LeftPadBytes(big.NewInt(500).Bytes(), 32)...)
	ret, err := node.CallContract(e.ctx, ethereum.CallMsg{To: &u.Factory, Data: data}, nil)
	require.NoError(t, err)
	require.Equal(t, common.BytesToAddress(ret), uniswap.PoolAddress(u.Factory, u.WETH9, e.dev.Contracts.USDT, 500))

	var small, large pricedQuoteOut
	text := e.ok("wallet_swap_quote", `{"token_in":"USDT","token_out":"WETH","amount_in":"10"}`, &small)
	e.ok("wallet_swap_quote", `{"token_in":"USDT","token_out":"WETH","amount_in":"100"}`, &large)

	// The mid rate is the pool's price before the swap, in the tokens' units:
	// sqrtPriceX96² / 2^192 is token1 per token0 in base units.
	sqrt, ok := new(big.Int).SetString(small.SqrtPriceX96, 10)
	require.True(t, ok)
	mid := new(big.Rat).SetFrac(new(big.Int).Mul(sqrt, sqrt), new(big.Int).Lsh(big.NewInt(1), 192))
	if strings.ToLower(e.dev.Contracts.USDT.Hex()) > strings.ToLower(u.WETH9.Hex()) {
		mid.Inv(mid) // USDT is token1
	}
	mid.Mul(mid, big.NewRat(1_000_000, 1)).Quo(mid, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)))
	require.Equal(t, mid.FloatString(18), rat(t, small.MidRate).FloatString(18))

	// impact = 1 - (out/in) / mid, in percent: at least the pool's 0.05 % fee,
	// and more for a larger amount.
	exec := new(big.Rat).Quo(rat(t, small.AmountOut), rat(t, small.AmountIn))
	want := new(big.Rat).Mul(new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Quo(exec, mid)), big.NewRat(100, 1))
	require.Equal(t, want.FloatString(4), rat(t, small.PriceImpactPct).FloatString(4))
	require.GreaterOrEqual(t, rat(t, small.PriceImpactPct).Cmp(big.NewRat(5, 100)), 0, "the 0.05%% fee is in the impact")
	require.Equal(t, 1, rat(t, large.PriceImpactPct).Cmp(rat(t, small.PriceImpactPct)), "a larger amount moves the price more")

	// Both rates: rate × rate_inverse is 1 up to their rounding.
	prod := new(big.Rat).Mul(rat(t, small.Rate), rat(t, small.RateInverse))
	diff := new(big.Rat).Sub(prod, big.NewRat(1, 1))
	require.Equal(t, -1, new(big.Rat).Abs(diff).Cmp(big.NewRat(1, 10_000)), "rate %s, inverse %s", small.Rate, small.RateInverse)

	require.Regexp(t, `Rate: 1 USDT [=≈] 0\.000[0-9]+ WETH; 1 WETH [=≈] [0-9],[0-9]{3}(\.[0-9]+)? USDT\.`, text)
	require.Regexp(t, `Price impact: 0\.0[0-9]+% against the pool's mid price before the swap \(1 USDT [=≈] 0\.000[0-9]+ WETH\), the pool's fee included\.`, text)
	require.NotContains(t, text, "sqrtPriceX96")
	require.NotContains(t, text, small.SqrtPriceX96After)
	require.NotContains(t, text, small.SqrtPriceX96)
}
