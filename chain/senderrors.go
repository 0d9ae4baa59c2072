package chain

// The answers nodes give to a broadcast they refuse, in one table: each
// family with every major client's wording, read from their sources —
// go-ethereum core/error.go, core/txpool/errors.go and
// core/txpool/legacypool; reth crates/rpc/rpc-eth-types/src/error/mod.rs
// (RpcPoolError, RpcInvalidTransactionError: geth's wording on purpose);
// Nethermind Nethermind.TxPool TxPoolErrorMessages (geth's wording since
// 2026) and AcceptTxResult (its result names, which older versions
// answered); Erigon txnprovider/txpool/txpoolcfg DiscardReason.String; Besu
// RpcErrorType. A message is matched case-insensitively, by substring, in
// the table's order (the more specific wording first).

import "strings"

// SendFamily names what a node's refusal of a broadcast says.
type SendFamily string

const (
	SendOther                  SendFamily = ""
	SendAlreadyKnown           SendFamily = "already_known"
	SendNonceTooLow            SendFamily = "nonce_too_low"
	SendNonceTooHigh           SendFamily = "nonce_too_high"
	SendReplacementUnderpriced SendFamily = "replacement_underpriced"
	SendFeeCapBelowBaseFee     SendFamily = "fee_cap_below_base_fee"
	SendUnderpriced            SendFamily = "underpriced"
	SendInsufficientFunds      SendFamily = "insufficient_funds"
	SendPoolFull               SendFamily = "txpool_full"
	SendGasLimit               SendFamily = "exceeds_block_gas_limit"
)

// Wording is one client's words for a family.
type Wording struct {
	Client string // geth, reth, nethermind, erigon, besu
	Words  string // a substring of its message, lower case
}

// SendFamilyInfo is one row of the table.
type SendFamilyInfo struct {
	Family SendFamily
	// Says is what the refusal means, for the person.
	Says string
	// MayHaveIt: the words say the node has, or had, this transaction (or
	// that its nonce is used, possibly by it): such an answer never shows
	// the transaction was not sent, whatever a lookup finds.
	MayHaveIt bool
	Wordings  []Wording
}

// SendFamilies is the table, in matching order.
var SendFamilies = []SendFamilyInfo{
	{SendAlreadyKnown, "the node already has this transaction", true, []Wording{
		{"geth", "already known"}, {"reth", "already known"}, {"nethermind", "already known"},
		{"nethermind", "alreadyknown"}, {"erigon", "already known"}, {"erigon", "existing txn with same hash"},
		{"besu", "known transaction"},
	}},
	{SendNonceTooLow, "the wallet's nonce has already been used, perhaps by this very transaction", true, []Wording{
		{"geth", "nonce too low"}, {"reth", "nonce too low"}, {"nethermind", "nonce too low"},
		{"nethermind", "oldnonce"}, {"erigon", "nonce too low"}, {"besu", "nonce too low"},
	}},
	{SendNonceTooHigh, "the node expects an earlier nonce first", false, []Wording{
		{"geth", "nonce too high"}, {"reth", "nonce too high"}, {"nethermind", "nonce too high"},
		{"nethermind", "noncegap"}, {"besu", "nonce too high"},
	}},
	{SendReplacementUnderpriced, "another transaction with this nonce is waiting in the node's pool and this one does not pay enough more to replace it", false, []Wording{
		{"geth", "replacement transaction underpriced"}, {"reth", "replacement transaction underpriced"},
		{"nethermind", "replacement transaction underpriced"}, {"nethermind", "replacementnotallowed"},
		{"erigon", "replacement transaction underpriced"}, {"erigon", "could not replace existing tx"},
		{"besu", "replacement transaction underpriced"},
	}},
	{SendFeeCapBelowBaseFee, "its max fee per gas is below the block's base fee", false, []Wording{
		{"geth", "max fee per gas less than block base fee"}, {"reth", "max fee per gas less than block base fee"},
		{"besu", "gas price below current base fee"},
	}},
	{SendUnderpriced, "its fee is below what the node's pool accepts", false, []Wording{
		{"geth", "transaction underpriced"}, {"geth", "transaction gas price below minimum"},
		{"reth", "transaction underpriced"}, {"nethermind", "transaction underpriced"},
		{"nethermind", "feetoolow"}, {"erigon", "underpriced"}, {"erigon", "fee too low"},
		{"besu", "gas price below configured minimum gas price"},
	}},
	{SendInsufficientFunds, "the wallet cannot pay its value and max fee", false, []Wording{
		{"geth", "insufficient funds for gas * price + value"}, {"reth", "insufficient funds for gas * price + value"},
		{"nethermind", "insufficient funds for gas * price + value"}, {"nethermind", "insufficientfunds"},
		{"erigon", "insufficient funds"}, {"besu", "upfront cost exceeds account balance"},
	}},
	{SendPoolFull, "the node's pool is full", false, []Wording{
		{"geth", "txpool is full"}, {"reth", "txpool is full"}, {"erigon", "sub-pool is full"},
	}},
	{SendGasLimit, "its gas limit exceeds the block's", false, []Wording{
		{"geth", "exceeds block gas limit"}, {"reth", "exceeds block gas limit"},
		{"nethermind", "gas limit reached"}, {"nethermind", "gaslimitexceeded"},
		{"erigon", "gas limit is too high"}, {"besu", "transaction gas limit exceeds block gas limit"},
	}},
}

// ClassifySend finds the family of a node's refusal of a broadcast, and its
// row (nil: none of the table's).
func ClassifySend(msg string) *SendFamilyInfo {
	m := strings.ToLower(msg)
	for i := range SendFamilies {
		for _, w := range SendFamilies[i].Wordings {
			if strings.Contains(m, w.Words) {
				return &SendFamilies[i]
			}
		}
	}
	return nil
}
