package uniswap

import (
	"bytes"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/shopspring/decimal"
)

// Pricing is a quote's inverse rate, the pool's mid rate and the price
// impact against it, as decimal strings; Mid, ImpactPct and SqrtPrice are ""
// when the pool's price before the swap was not read.
type Pricing struct{ Inverse, Mid, ImpactPct, SqrtPrice string }

// Price computes Pricing exactly, in rationals (never floats), and rounds
// only the results: inverse and mid to 18 decimals, the impact to 4.
// tokenIn is the token the pool takes (WETH for ETH). Uniswap's
// sqrtPriceX96 is sqrt(token1/token0) in base units, times 2^96; token0 is
// the lower address.
func Price(tokenIn, tokenOut common.Address, decIn, decOut uint8, amountIn, amountOut, sqrtPrice *big.Int) Pricing {
	scale := func(dec uint8) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec)), nil) }
	// out per in, in the tokens' units: (out / 10^decOut) / (in / 10^decIn)
	exec := new(big.Rat).SetFrac(new(big.Int).Mul(amountOut, scale(decIn)), new(big.Int).Mul(amountIn, scale(decOut)))
	var p Pricing
	if exec.Sign() > 0 {
		p.Inverse = decimal.NewFromBigRat(new(big.Rat).Inv(exec), 18).String()
	}
	if sqrtPrice == nil || sqrtPrice.Sign() == 0 || exec.Sign() == 0 {
		return p
	}
	// token1 per token0 in base units: sqrtPrice² / 2^192
	mid := new(big.Rat).SetFrac(new(big.Int).Mul(sqrtPrice, sqrtPrice), new(big.Int).Lsh(big.NewInt(1), 192))
	if bytes.Compare(tokenIn.Bytes(), tokenOut.Bytes()) > 0 {
		mid.Inv(mid) // token_in is token1: out (token0) per in is the inverse
	}
	mid.Mul(mid, new(big.Rat).SetFrac(scale(decIn), scale(decOut)))
	impact := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Quo(exec, mid))
	p.Mid = decimal.NewFromBigRat(mid, 18).String()
	p.ImpactPct = decimal.NewFromBigRat(impact.Mul(impact, big.NewRat(100, 1)), 4).String()
	p.SqrtPrice = sqrtPrice.String()
	return p
}
