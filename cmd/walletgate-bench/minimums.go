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
	opBalance: {1, 7, "head + ETH balance + nonce + code + 3 balanceOf fit one batch; token metadata of known tokens is in the table"},
	opVerify:  {1, 3, "tx (value, nonce) + receipt (status, logs, fee) + head (confirmations) in one batch"},
	opQuote:   {1, 3, "head (block/time shown) + QuoterV2 eth_call + the pool's slot0 (the mid price the impact is measured against) in one batch; Uniswap code checks once per process"},
	opSendETHPreview: {1, 6, "head/base fee, tip, nonce, balance, recipient code and gas estimate are independent: one batch; " +
		"the estimate already executes the transfer"},
	opSendETHConfirm: {3, 5, "[base fee + nonce + re-simulation] → eth_sendRawTransaction → receipt (asked once after inclusion)"},
	opSendTokPreview: {1, 7, "as the ETH preview, plus an eth_call for transfer()'s return value, in the same batch"},
	opSendTokConfirm: {3, 5, "as the ETH confirm"},
	opSwapPreviewFirst: {2, 8, "[head/fees, tip, nonce, balance, allowance, quote, slot0] → eth_simulateV1 of the legs built from them " +
		"(+ once per process: Uniswap code checks, batchable into the first)"},
	opSwapConfirmFirst: {7, 10, "[base fee, nonce, allowance, eth_simulateV1] → send approve → its receipt → eth_call of the swap leg " +
		"on the real state with its own gas limit (deliberate: a later leg's gas limit cannot be estimated before the approval is in) → " +
		"send swap → its receipt → the output balance at the block before and at the receipt's block (the balance-delta check the " +
		"swap must pass; its block is known only from the receipt). Legs wait for each other by design; pipelined, without those " +
		"two checks, the floor would be 3"},
	opSwapPreview: {2, 8, "as the 1st swap preview"},
	opSwapConfirm: {7, 10, "as the 1st swap confirm"},
}
