// Package uniswap builds, quotes and verifies exact-input single-pool swaps
// through Uniswap v3's QuoterV2 and SwapRouter02: calldata, quotes and their
// pricing, and the swap plan the engine runs (its legs, re-check, undo and
// receipt check).
package uniswap
