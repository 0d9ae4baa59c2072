package engine

import (
	"context"
	"math/big"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
)

// Leg is one transaction of a plan.
type Leg struct {
	Label string // "send", "approve", "reset approval", "swap"
	Call  chain.Call
}

// Effect is what a confirmed transaction must show on chain: amount of
// asset moved from one address to another.
type Effect struct {
	Asset    Asset
	From, To common.Address
	Amount   *big.Int
}

// Kinds of Moved.
const (
	MovedETH     = "eth_transfer"
	MovedERC20   = "erc20_transfer"
	MovedSwapIn  = "swap_in"
	MovedSwapOut = "swap_out"
	// MovedApproval is an allowance the wallet set: To may move Amount.
	MovedApproval = "erc20_approval"
)

// Moved is one on-chain movement a result reports: verified from a receipt,
// or expected by a preview.
type Moved struct {
	Kind   string `json:"kind"`
	Asset  string `json:"asset"` // ETH or the token address
	Symbol string `json:"symbol"`
	From   string `json:"from"`
	To     string `json:"to"`
	Amount string `json:"amount"` // in the asset's units
	Raw    string `json:"raw"`    // in base units
	Known  bool   `json:"-"`      // ETH or a known-table token: shown without an UNVERIFIED mark
}

// Moved renders the effect.
func (e Effect) Moved() Moved {
	kind := MovedERC20
	if e.Asset.Native {
		kind = MovedETH
	}
	return Moved{Kind: kind, Asset: e.Asset.ID(), Symbol: e.Asset.Symbol, From: e.From.Hex(), To: e.To.Hex(),
		Amount: e.Asset.Format(e.Amount), Raw: e.Amount.String(), Known: e.Asset.Native || e.Asset.Known}
}

// Plan is a previewed write: exactly what the confirm executes. Its legs are
// sent in order, each only after the one before it was included and
// succeeded. A Plan is built by a write kind and not changed after Issue.
// Payment is what an x402 payment pays: the payee and the resource host
// the paying server states.
type Payment struct {
	PayTo common.Address
	Host  string
}

type Plan struct {
	Tool  string
	Legs  []Leg
	Spend caps.Spend // what the caps are reserved for: ETH (value + max fees) and tokens
	// USD is the preview's USD value of Spend (usd.go), when a USD window
	// is capped; the confirm values it again at its own prices.
	USD       *USDValue
	Recipient *common.Address // checked against the allow-list; nil: none (the wallet itself, a revoke)
	// Payment is set for an x402 payment: its payee is checked against the
	// operator's payees (WALLETGATE_ALLOW_PAY_TO) at preview and at confirm.
	Payment *Payment
	// Counterparties are addresses the write kind itself took from
	// walletgate's table (a swap's router): what its effects give them is
	// not checked against the allow-list (recipients.go).
	Counterparties []common.Address
	Effects        []Effect // what the receipt of the final leg must show
	// MinIn is the least the plan must bring into the wallet, per asset (a
	// swap's minimum output): measured less is effect_mismatch.
	MinIn caps.Spend
	// Recheck, if set, returns reads to make with the confirm's state read
	// and a check of their answers: what the plan assumed at preview (an
	// allowance, say) must still hold before anything is signed.
	Recheck func() ([]*chain.View, func() *Refusal)
	// Verify, if set, replaces the default check of Effects against the
	// final leg's receipt: it returns the movements found and what is
	// missing. measuredIn is what the wallet's balances show arriving, per
	// asset measured (an asset it lacks could not be measured).
	Verify func(ctx context.Context, info *chain.TxInfo, measuredIn caps.Spend) ([]Moved, []string)
	// Explain turns a simulation revert into plain words for this plan.
	Explain func(re *chain.RevertError) *Refusal
	// Undo, if set, returns the legs that take back what the included legs
	// before leg i left standing (an approval back to its previous value),
	// for when leg i cannot be sent. They are sent inside the same
	// reservation.
	Undo func(i int) []Leg
	// Traced, when set, makes the plan effects-bound: these are the
	// changes its preview simulated (BuildTraced), the confirm refuses if
	// its own simulation grew them, and the receipts are checked against
	// them. Spend, Effects and Verify are then derived, not given.
	Traced *Changes
	// ByToken: in human mode, a token may confirm this plan — it is at or
	// below WALLETGATE_HUMAN_ABOVE; otherwise only the person's code may.
	ByToken bool
	// ConfirmBy is journaled with the preview: "token", "person", or "" when
	// the mode has no tiers.
	ConfirmBy string
	// Sig, when set, makes this a signature plan: no legs; the confirm
	// signs Sig.Data instead of sending anything (signature.go).
	Sig *SignaturePlan

	text atomic.Pointer[string]
}

// SetText keeps the preview text a person approves (elicit mode asks with it).
func (p *Plan) SetText(s string) { p.text.Store(&s) }

// Text is the preview text, or "" before SetText.
func (p *Plan) Text() string {
	if t := p.text.Load(); t != nil {
		return *t
	}
	return ""
}

// MaxCost is the most all legs together can cost in ETH.
func (p *Plan) MaxCost() *big.Int {
	total := new(big.Int)
	for _, l := range p.Legs {
		total.Add(total, l.Call.MaxCost())
	}
	return total
}

// Fee is the most all legs together can pay in network fees, in ETH:
// MaxCost without the value.
func (p *Plan) Fee() *big.Int { return new(big.Int).Sub(p.MaxCost(), p.Value()) }

// Value is the ETH all legs send as value.
func (p *Plan) Value() *big.Int {
	total := new(big.Int)
	for _, l := range p.Legs {
		if l.Call.Value != nil {
			total.Add(total, l.Call.Value)
		}
	}
	return total
}
