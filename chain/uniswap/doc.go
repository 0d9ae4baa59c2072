// Package uniswap knows Uniswap v3's QuoterV2 and SwapRouter02 for
// exact-input single-pool swaps: their calldata, quotes and pricing, a
// swap's legs as chain calls, what the confirm re-checks, the calls that
// undo an approval, and what a swap's receipt shows.
package uniswap
