package main

// The operations the bench measures, and the fewest RPC round trips (HTTP
// requests) and JSON-RPC calls each needs. BENCHMARKS.md gives the full
// reasoning; Reason is its one-line form.

const (
	opStartup          = "start-up (before initialize answer)"
	opAddress          = "wallet_address"
	opPolicy           = "wallet_policy"
	opBalance          = "wallet_balance"
	opQuote            = "wallet_swap_quote"
	opSendETHPreview   = "wallet_send ETH preview"
	opSendETHConfirm   = "wallet_send ETH confirm"
	opSendTokPreview   = "wallet_send USDT preview"
	opSendTokConfirm   = "wallet_send USDT confirm"
	opVerify           = "wallet_verify_tx"
	opSwapPreviewFirst = "wallet_swap preview, 1st"
	opSwapConfirmFirst = "wallet_swap confirm, 1st"
	opSwapPreview      = "wallet_swap preview"
	opSwapConfirm      = "wallet_swap confirm"
	opPreviewLoop      = "wallet_send ETH preview ×1000 loop"
)

// opOrder is the order of the report.
var opOrder = []string{
	opAddress, opPolicy, opBalance, opVerify, opQuote,
	opSendETHPreview, opSendETHConfirm, opSendTokPreview, opSendTokConfirm,
	opSwapPreviewFirst, opSwapConfirmFirst, opSwapPreview, opSwapConfirm,
}

type minimum struct {
	RoundTrips int    `json:"round_trips"`
	Calls      int    `json:"calls"`
	Reason     string `json:"reason"`
}

var minimums = map[string]minimum{
	opStartup: {0, 0, "the chain-id check (1 call) is needed before the first chain read, not before answering initialize"},
	opAddress: {0, 0, "address, chain id, network and signer are known at start-up"},
	opPolicy:  {0, 0, "caps, usage and configuration are local state"},
	opBalance: {1, 8, "head + ETH balance + nonce + code + 3 balanceOf + head again fit one batch (equal heads: every read was at that block); token metadata of known tokens is in the table"},
	opVerify:  {1, 3, "tx (value, nonce) + receipt (status, logs, fee) + head (confirmations) in one batch"},
	opQuote:   {1, 3, "head (block/time shown) + QuoterV2 eth_call + the pool's slot0 (the mid price the impact is measured against) in one batch; Uniswap code checks once per process"},
	opSendETHPreview: {1, 6, "head/base fee, tip, nonce, balance, recipient code and gas estimate are independent: one batch; " +
		"the estimate already executes the transfer"},
	opSendETHConfirm: {2, 5, "[base fee + nonce + re-simulation] → [eth_sendRawTransactionSync + the lookup and balances riding after it]; 3 on a node without it (a receipt asked once after inclusion)"},
	opSendTokPreview: {1, 7, "as the ETH preview, plus an eth_call for transfer()'s return value, in the same batch"},
	opSendTokConfirm: {2, 5, "as the ETH confirm"},
	opSwapPreviewFirst: {2, 8, "[head/fees, tip, nonce, balance, allowance, quote, slot0] → eth_simulateV1 of the legs built from them " +
		"(+ once per process: Uniswap code checks, batchable into the first)"},
	opSwapConfirmFirst: {3, 10, "[base fee, nonce, allowance, eth_simulateV1] → [approve's eth_sendRawTransactionSync + its lookup, the balances " +
		"at its block and the swap leg's own eth_call on the state it left, all riding after it] → [swap's eth_sendRawTransactionSync + " +
		"lookup + balances]. Each leg is signed only after the one before is included and the next simulated on what it left: one round " +
		"trip for the re-check and one per leg (6 on a node without eth_sendRawTransactionSync)"},
	opSwapPreview: {2, 8, "as the 1st swap preview"},
	opSwapConfirm: {3, 10, "as the 1st swap confirm"},
}
