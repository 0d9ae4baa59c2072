package engine

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// Status is what a confirm's outcome says happened.
type Status string

// The statuses of a confirm. A confirm that did not get this far is a
// Refusal, whose message says whether anything was signed or sent.
const (
	// StatusConfirmed: the signed transaction's own receipt, with the
	// expected effects seen.
	StatusConfirmed Status = "confirmed"
	// StatusReverted: included, and it failed; only the fee was spent.
	StatusReverted Status = "reverted"
	// StatusPending: it may have reached the node, and its inclusion was
	// not seen; it stays counted against the caps.
	StatusPending Status = "pending"
	// StatusEffectMismatch: included and successful, but the receipt does
	// not show the expected effects.
	StatusEffectMismatch Status = "effect_mismatch"
	// StatusIncomplete: some legs of the plan were included and succeeded,
	// then the plan stopped (a later leg was not sent, reverted, or its
	// undo ran): what the included legs moved is settled.
	StatusIncomplete Status = "incomplete"
)

// Leg outcomes, as an Outcome lists them.
const (
	LegIncluded = "included" // included and succeeded
	LegReverted = "reverted" // included, and it failed
	LegPending  = "pending"  // may have reached the node; inclusion not seen
	LegNotSent  = "not_sent" // never broadcast (refused before, or shown refused)
)

// LegOutcome is what became of one leg of a plan, undo legs included.
type LegOutcome struct {
	Label  string
	Status string      // LegIncluded, LegReverted, LegPending, LegNotSent
	Tx     common.Hash // zero when nothing was signed
	Nonce  uint64
	Block  uint64 // when included
	Fee    *big.Int
	Code   string // LegNotSent: the refusal's code
	Reason string // LegNotSent / LegPending: why, in the refusal's or the node's words
	Undo   bool   // a leg that takes back what earlier legs left standing
}

// AssetChange is what a plan moved of one asset, as the wallet's balances
// show it just before and at each included leg's block, beside what its
// preview showed. Amounts are base units; ETH's exclude the network fees.
type AssetChange struct {
	Asset      common.Address // policy.NativeAsset for ETH
	Out, In    *big.Int
	PreviewOut *big.Int
	PreviewIn  *big.Int
	// Measured is false when the balances could not be read: Out is then
	// the larger of what the logs show leaving and what the preview showed.
	Measured bool
}

// Included is a leg that was included in a block and succeeded.
type Included struct {
	Label string
	Tx    common.Hash
	Nonce uint64
	Block uint64
	Fee   *big.Int
}

// Outcome is how a confirm ended once something was broadcast.
type Outcome struct {
	Status Status
	Leg    string // the label of the leg it is about: the final one, or the one that reverted or is pending
	Tx     common.Hash
	Nonce  uint64
	// Block, Confirmations and GasUsed are the leg's receipt's; Block is nil
	// when it was not seen included.
	Block         *uint64
	Confirmations uint64
	GasUsed       uint64
	Fee           *big.Int // the network fees of every included leg
	Effects       []Moved  // verified movements (confirmed), or what the receipt's logs show (effect_mismatch)
	Missing       []string // effect_mismatch: what the receipt did not show
	Earlier       []Included
	// Legs is every leg's fate, in the order they were tried (undo legs
	// last).
	Legs []LegOutcome
	// Changes is what moved, per asset, measured, beside the preview; the
	// caps settled to it (plus fees and exposures).
	Changes []AssetChange
	// Why says, for pending, why the outcome is not known.
	Why string
	// Signed is the signature of a signature plan (StatusSigned); nothing
	// was sent.
	Signed *Signed
	// Unrecorded lists what the journal could not record (a receipt, a
	// broadcast's outcome, the caps' settlement): the caps then keep the
	// larger amount counted, and the answer says so.
	Unrecorded []string
}
