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
// broadcast whose outcome is unknown stays counted. Once a leg was included,
// the plan ends in an Outcome (incomplete when it stops early) and settles
// to what the included legs measurably moved (settle.go). Settlement
// happens only in run.settleMeasured and run.release.

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/chain"
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
	// Policy, again: the recipient and everything the effects give.
	if ref := e.recipientsAllowed(p, p.Traced); ref != nil {
		return nil, ref
	}
	if e.signer == nil {
		return nil, Refuse(CodeWritesDisabled, "no key is configured (watch-only). Nothing was signed or sent.")
	}
	// Ask: deny unless the confirmation mode approves.
	if ref := ask.Ask(ctx, p).Denial(); ref != nil {
		return nil, ref
	}
	if p.Sig != nil {
		return e.confirmSignature(ctx, p, confirmedBy(ask)) // no transaction: nothing to follow up or send
	}
	// Until the first signature, nothing may take longer than the bound.
	pre, cancel := context.WithTimeout(ctx, e.bounds.Confirm)
	defer cancel()
	// Earlier transactions whose fate is unknown come first: a new one
	// would queue behind them unseen.
	if ref := e.followUp(pre); ref != nil {
		return nil, ref
	}
	// Re-read and re-simulate the stored plan, in one round trip, with the
	// wallet's balances the legs will be measured against.
	bound := p.Bound(e.address)
	watch := watchedTokens(p, bound)
	views := balanceViews(e.address, watch)
	pr, prices := e.priceViews() // the USD prices ride along (usd.go)
	st, ref := e.recheck(pre, p, append(append([]*chain.View{}, views...), prices...)...)
	if ref != nil {
		return nil, ref
	}
	spend, usd, ref := e.repriced(p, pr, st.Head.Time)
	if ref != nil {
		return nil, ref
	}
	// Reserve the caps with the first transaction's nonce, atomically
	// across processes.
	res, nonce, ref := e.reserve(spend, p.Fee(), st.Nonce, confirmedBy(ask))
	if ref != nil {
		return nil, ref
	}
	// From here on the work finishes even if the process is asked to stop
	// (Drain waits for it), and the reservation is this run's to end: no
	// follow-up or sweep of another confirm or session releases it.
	e.inflight.Add(1)
	defer e.inflight.Done()
	defer e.hold(res.ID())()
	// The first leg's deadline runs from its nonce's allocation, dated with
	// the reservation (one clock for both).
	r := &run{e: e, p: p, res: res, usd: usd, legAt: res.At(), fees: new(big.Int), bound: bound, moved: newMoved(), watch: watch, before: snapshotOf(st, watch, views)}
	// Once the first leg is signed, no cancellation of the request stops the
	// plan: its later legs, their verification and the settlement run
	// detached, each later leg with its own pre-signing bound.
	detached := context.WithoutCancel(ctx)
	for i := range p.Legs {
		lctx := pre
		if i > 0 {
			var cancelLeg context.CancelFunc
			lctx, cancelLeg = context.WithTimeout(detached, e.bounds.Confirm)
			nonce, ref = r.prepareLeg(lctx, i)
			if ref != nil {
				cancelLeg()
				return r.end(ref)
			}
			defer cancelLeg()
		}
		sent, ref := r.send(lctx, i, nonce)
		if ref != nil {
			return r.end(ref)
		}
		info := r.wait(detached, sent)
		if out := r.decide(detached, i, sent, info); out != nil {
			return r.answer(out), nil
		}
	}
	panic("engine: a plan without legs") // Issue never stores one
}

// recheck reads the wallet's state and simulates the stored plan on it, with
// the plan's own re-checks, in one round trip.
func (e *Engine) recheck(ctx context.Context, p *Plan, extra ...*chain.View) (chain.SendState, *Refusal) {
	calls := make([]chain.Call, len(p.Legs))
	for i, l := range p.Legs {
		calls[i] = l.Call
	}
	var views []*chain.View
	check := func() *Refusal { return nil }
	if p.Recheck != nil {
		views, check = p.Recheck()
	}
	views = append(views, extra...)
	// Each leg's L1 data fee bound again (an OP-stack chain), in the same
	// round trip: one above the preview's is a fee rise like the base fee's.
	l1 := e.chain.L1FeeBounds(calls)
	views = append(views, l1...)
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
		if ref := e.recipientsAllowed(p, &now); ref != nil {
			return st, ref
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
	if ref := l1FeesRose(p.Legs, l1); ref != nil {
		return st, ref
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

// l1FeesRose refuses when a leg's L1 data fee bound, read again in l1
// (chain.L1FeeBounds), is above the one its preview counted: the caps and
// the preview hold the previewed bound, and the chain could now charge more.
func l1FeesRose(legs []Leg, l1 []*chain.View) *Refusal {
	bounds, err := chain.ReadL1FeeBounds(l1)
	if err != nil {
		return RPCRefusal(err)
	}
	for i, now := range bounds {
		was := legs[i].Call.L1Fee
		if was == nil {
			was = new(big.Int)
		}
		if now.Cmp(was) > 0 {
			return Refuse(CodeFeesRose, "the L1 data fee bound of %q (the GasPriceOracle's, now %s ETH) has risen above the previewed %s ETH. Nothing was signed or sent. Call the tool again without confirm for a new preview.",
				legs[i].Label, ETH.Format(now), ETH.Format(was)).
				Because("the L1 data fee bound rose from %s to %s ETH since the preview", ETH.Format(was), ETH.Format(now))
		}
	}
	return nil
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
