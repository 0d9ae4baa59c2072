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
)

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
	// Why says, for pending, why the outcome is not known.
	Why string
	// Signed is the signature of a signature plan (StatusSigned); nothing
	// was sent.
	Signed *Signed
}
