package engine

// The confirm, in its fixed order. Rules of this file:
//
// consume the token (spent on every outcome) → policy again → ask → follow up
// earlier transactions of unknown fate → re-read and re-simulate the stored
// plan → reserve the caps with the first nonce (one step under the journal's
// lock) → for each leg: sign → journal → broadcast (detached from the
// request) → the outcome rule → wait → verify it is ours → settle.
//
// Anything refused before the first broadcast releases the reservation and
// gives its nonce back: nothing signed, nothing sent, no cap consumed. A
// broadcast whose outcome is unknown stays counted. Settlement happens only
// in run.settle and run.release.

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
)

// Confirm executes the plan previewed under confirm, for tool and its
// canonical arguments. It returns the Outcome once something was broadcast,
// or a Refusal that says exactly what was and was not signed and sent.
func (e *Engine) Confirm(ctx context.Context, ask Asker, confirm, tool string, canonical []byte) (*Outcome, *Refusal) {
	// Consume: from here on the token is spent, whatever happens.
	token, ref := ask.Redeem(ctx, confirm, tool, canonical)
	if ref != nil {
		return nil, ref
	}
	v, err := e.gate.Consume(token, tool, canonical)
	if err != nil {
		return nil, GateRefusal(err)
	}
	p := v.(*Plan)
	// Policy, again.
	if ref := e.allowed(p.Recipient); ref != nil {
		return nil, ref
	}
	if e.signer == nil {
		return nil, Refuse(CodeWritesDisabled, "no key is configured (watch-only). Nothing was signed or sent.")
	}
	// Ask: deny unless the confirmation mode approves.
	if ref := ask.Ask(ctx, p); ref != nil {
		return nil, ref
	}
	if p.Sig != nil {
		return e.confirmSignature(ctx, p) // no transaction: nothing to follow up or send
	}
	// Until the first signature, nothing may take longer than the bound.
	pre, cancel := context.WithTimeout(ctx, e.bounds.Confirm)
	defer cancel()
	// Earlier transactions whose fate is unknown come first: a new one
	// would queue behind them unseen.
	if ref := e.followUp(pre); ref != nil {
		return nil, ref
	}
	// Re-read and re-simulate the stored plan, in one round trip.
	st, ref := e.recheck(pre, p)
	if ref != nil {
		return nil, ref
	}
	// Reserve the caps with the first transaction's nonce, atomically
	// across processes.
	res, nonce, ref := e.reserve(p.Spend, st.Nonce)
	if ref != nil {
		return nil, ref
	}
	// From here on the work finishes even if the process is asked to stop
	// (Drain waits for it).
	e.inflight.Add(1)
	defer e.inflight.Done()
	r := &run{e: e, p: p, res: res, reservedAt: e.now(), fees: new(big.Int)}
	// The legs, in order, each only after the one before it was included
	// and succeeded.
	for i := range p.Legs {
		if i > 0 {
			if nonce, ref = r.prepareLeg(pre, i); ref != nil {
				return nil, ref
			}
		}
		sent, ref := r.send(ctx, i, nonce)
		if ref != nil {
			return nil, ref
		}
		info := r.wait(ctx, sent)
		if out := r.decide(ctx, i, sent, info); out != nil {
			return out, nil
		}
	}
	panic("engine: a plan without legs") // Issue never stores one
}

// recheck reads the wallet's state and simulates the stored plan on it, with
// the plan's own re-checks, in one round trip.
func (e *Engine) recheck(ctx context.Context, p *Plan) (chain.SendState, *Refusal) {
	calls := make([]chain.Call, len(p.Legs))
	for i, l := range p.Legs {
		calls[i] = l.Call
	}
	var views []*chain.View
	check := func() *Refusal { return nil }
	if p.Recheck != nil {
		views, check = p.Recheck()
	}
	var sims []chain.SimResult
	var st chain.SendState
	if p.Traced != nil {
		var now Changes
		var ref *Refusal
		if st, now, ref = e.Trace(ctx, p.Legs, p.Explain, views...); ref != nil {
			return st, ref
		}
		if why := p.Traced.Grew(now, e.asset); why != "" {
			return st, Refuse(CodeEffectsChanged, "simulated again on the current state, this does more than the preview showed: %s. Nothing was signed or sent. Call the tool again without confirm for a new preview, and read it.", why)
		}
	} else {
		var err error
		if st, sims, err = e.chain.StateAndSimulate(ctx, p.Legs[0].Call.From, calls, views...); err != nil {
			return st, RPCRefusal(err)
		}
	}
	for _, l := range p.Legs {
		if st.BaseFee.Cmp(l.Call.MaxFee) > 0 {
			return st, Refuse(CodeFeesRose, "the network's base fee (%s gwei) has risen above the previewed max fee per gas (%s gwei). Nothing was signed or sent. Call the tool again without confirm for a new preview.",
				gwei(st.BaseFee), gwei(l.Call.MaxFee))
		}
	}
	if st.ETH.Cmp(p.MaxCost()) < 0 {
		return st, Refuse(CodeInsufficientFunds, "the wallet now holds %s ETH but this needs up to %s ETH. Nothing was signed or sent.",
			ETH.Format(st.ETH), ETH.Format(p.MaxCost()))
	}
	if ref := check(); ref != nil {
		return st, ref
	}
	for _, s := range sims {
		if s.Revert != nil {
			return st, e.revertRefusal(p.Explain, s.Revert)
		}
	}
	return st, nil
}

// run is one confirm's execution of a plan.
type run struct {
	e          *Engine
	p          *Plan
	res        *caps.Reservation
	reservedAt time.Time
	fees       *big.Int // fees of the included legs
	earlier    []Included
	infos      []*chain.TxInfo // the receipts of the included legs
}

// decide turns a leg's wait into the outcome, or nil to go on with the next
// leg. It settles whenever the outcome is final.
func (r *run) decide(ctx context.Context, i int, sent *sentTx, info *chain.TxInfo) *Outcome {
	e, leg := r.e, r.p.Legs[i]
	out := &Outcome{Leg: leg.Label, Tx: sent.tx.Hash(), Nonce: sent.nonce, Earlier: r.earlier, Fee: new(big.Int).Set(r.fees), Effects: []Moved{}}
	if !r.e.included(info, sent) {
		out.Status = StatusPending
		out.Why = sent.why
		if info.Mined && !e.ours(info, sent.nonce) {
			out.Why = "the node answered a receipt that is not this transaction's (" + notOurs(info, e, sent.nonce) + "), so it is not counted as included"
		}
		return out
	}
	_ = e.Record(KindReceipt, ReceiptRecord{V: journal.Version, Tx: info.Hash.Hex(), Status: info.Status, Block: info.Block, GasUsed: info.GasUsed, Fee: info.Fee().String()})
	r.fees.Add(r.fees, info.Fee())
	r.infos = append(r.infos, info)
	block := info.Block
	out.Block, out.Confirmations, out.GasUsed, out.Fee = &block, info.Confirmations, info.GasUsed, new(big.Int).Set(r.fees)
	if info.Status != 1 {
		r.settle(caps.Spend{policy.NativeAsset: new(big.Int).Set(r.fees)})
		out.Status = StatusReverted
		return out
	}
	if i < len(r.p.Legs)-1 {
		r.earlier = append(r.earlier, Included{Label: leg.Label, Tx: info.Hash, Nonce: sent.nonce, Block: block, Fee: info.Fee()})
		return nil
	}
	if r.p.Traced != nil {
		return r.decideTraced(out)
	}
	var missing []string
	if r.p.Verify != nil {
		out.Effects, missing = r.p.Verify(ctx, info)
	} else {
		missing = verifyEffects(r.p.Effects, info)
		for _, ef := range r.p.Effects {
			out.Effects = append(out.Effects, ef.Moved())
		}
	}
	// What moved counts: the fees, and the previewed amounts (also when the
	// receipt does not show them: conservatively, the intent stays counted).
	actual := caps.Spend{policy.NativeAsset: new(big.Int).Set(r.fees)}
	for _, ef := range r.p.Effects {
		if ef.Asset.Native {
			actual[policy.NativeAsset].Add(actual[policy.NativeAsset], ef.Amount)
		} else {
			actual[ef.Asset.Address] = new(big.Int).Set(ef.Amount)
		}
	}
	r.settle(actual)
	out.Status = StatusConfirmed
	if len(missing) > 0 {
		out.Status, out.Missing = StatusEffectMismatch, missing
		out.Effects = []Moved{}
		for _, t := range info.Transfers {
			out.Effects = append(out.Effects, e.transferMoved(t))
		}
	}
	return out
}

// transferMoved renders a logged Transfer.
func (e *Engine) transferMoved(t chain.Transfer) Moved {
	as := e.asset(t.Token)
	return Moved{Kind: MovedERC20, Asset: t.Token.Hex(), Symbol: as.Symbol, From: t.From.Hex(), To: t.To.Hex(), Amount: as.Format(t.Amount), Raw: t.Amount.String(), Known: as.Known}
}

// verifyEffects checks the receipt for each expected effect and returns what
// is missing.
func verifyEffects(effects []Effect, info *chain.TxInfo) []string {
	var missing []string
	for _, ef := range effects {
		if ef.Asset.Native {
			if info.To == nil || *info.To != ef.To || info.Value.Cmp(ef.Amount) != 0 || info.From != ef.From {
				missing = append(missing, fmt.Sprintf("expected %s ETH from %s to %s", ETH.Format(ef.Amount), ef.From.Hex(), ef.To.Hex()))
			}
			continue
		}
		found := false
		for _, t := range info.Transfers {
			if t.Token == ef.Asset.Address && t.From == ef.From && t.To == ef.To && t.Amount.Cmp(ef.Amount) == 0 {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, fmt.Sprintf("no Transfer of exactly %s %s from %s to %s in the receipt's logs",
				ef.Asset.Format(ef.Amount), ef.Asset.Marked(), ef.From.Hex(), ef.To.Hex()))
		}
	}
	return missing
}

// decideTraced ends an effects-bound plan: what the receipts show left the
// wallet must not exceed what the simulation showed; the caps settle to
// what actually moved, the fees and the exposures granted.
func (r *run) decideTraced(out *Outcome) *Outcome {
	e, bound := r.e, r.p.Traced
	moved := receiptChanges(e.address, r.infos)
	var missing []string
	for a, v := range moved {
		if was, ok := bound.Out[a]; !ok || v.Cmp(was) > 0 {
			as := e.asset(a)
			limit := "nothing"
			if ok {
				limit = as.Format(was) + " " + as.Marked()
			}
			missing = append(missing, fmt.Sprintf("%s %s left the wallet, the preview showed %s", as.Format(v), as.Marked(), limit))
		}
	}
	actual := caps.Spend{policy.NativeAsset: new(big.Int).Set(r.fees)}
	for a, v := range moved {
		if cur, ok := actual[a]; ok {
			cur.Add(cur, v)
		} else {
			actual[a] = new(big.Int).Set(v)
		}
	}
	for p, v := range bound.Exposure {
		if cur, ok := actual[p.Token]; ok {
			cur.Add(cur, v)
		} else {
			actual[p.Token] = new(big.Int).Set(v)
		}
	}
	r.settle(actual)
	out.Effects = MovedOf(e.address, r.infos, e.asset)
	out.Status = StatusConfirmed
	if len(missing) > 0 {
		sort.Strings(missing)
		out.Status, out.Missing = StatusEffectMismatch, missing
	}
	return out
}

// MovedOf lists what the receipts show moving from or to wallet: ETH value,
// ERC-20 transfers and the wallet's approvals.
func MovedOf(wallet common.Address, infos []*chain.TxInfo, asset func(common.Address) Asset) []Moved {
	out := []Moved{}
	for _, info := range infos {
		if info.Value != nil && info.Value.Sign() > 0 && info.To != nil {
			out = append(out, Moved{Kind: MovedETH, Asset: ETH.ID(), Symbol: ETH.Symbol, From: info.From.Hex(), To: info.To.Hex(), Amount: ETH.Format(info.Value), Raw: info.Value.String(), Known: true})
		}
		for _, t := range info.Transfers {
			if t.From != wallet && t.To != wallet {
				continue
			}
			as := asset(t.Token)
			out = append(out, Moved{Kind: MovedERC20, Asset: t.Token.Hex(), Symbol: as.Symbol, From: t.From.Hex(), To: t.To.Hex(), Amount: as.Format(t.Amount), Raw: t.Amount.String(), Known: as.Known})
		}
		for _, a := range info.Approvals {
			if a.Owner != wallet {
				continue
			}
			as := asset(a.Token)
			out = append(out, Moved{Kind: MovedApproval, Asset: a.Token.Hex(), Symbol: as.Symbol, From: a.Owner.Hex(), To: a.Spender.Hex(), Amount: as.Format(a.Amount), Raw: a.Amount.String(), Known: as.Known})
		}
	}
	return out
}
