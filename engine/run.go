package engine

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/policy"
)

// run is one confirm's execution of a plan.
type run struct {
	e     *Engine
	p     *Plan
	res   *caps.Reservation
	usd   *USDValue // the USD value reserved and the rounds it used (usd.go)
	legAt time.Time // when the current leg's nonce was taken: it is signed within bounds.Confirm of it, or not at all
	fees  *big.Int  // fees of the included legs
	// earlier are the included, successful legs before the current one.
	earlier []Included
	infos   []*chain.TxInfo  // the receipts of the included legs
	legs    []LegOutcome     // every leg's fate so far
	bound   Changes          // what the preview showed the plan doing
	moved   moved            // what the included legs moved, measured
	watch   []common.Address // tokens read along with every state read and receipt lookup
	before  *chain.Snapshot  // the wallet before the next leg: after the last one, or as the confirm read it
	// nextSim is the next leg's simulation riding in this leg's broadcast
	// that waits; lastInfo the receipt it came with.
	nextSim  *chain.View
	lastInfo *chain.TxInfo
	// nextL1 is the next leg's L1 data fee bound (an OP-stack chain),
	// riding with nextSim; nil elsewhere.
	nextL1 []*chain.View
	// final is the outcome of a plan that stopped after a leg was included.
	final *Outcome
	// unrecorded is what the journal could not record along the way (a
	// receipt, a broadcast's outcome, the settlement): the outcome says it.
	unrecorded []string
}

// note keeps what the journal could not record, for the outcome.
func (r *run) note(what string, err error) {
	if err != nil {
		r.unrecorded = append(r.unrecorded, unrecordedWhy(what, err))
	}
}

// sentTx is a leg that may have reached the node.
type sentTx struct {
	tx    *types.Transaction
	nonce uint64
	why   string // when the broadcast's outcome is unknown: why
	// info is what the broadcast that waits found in its own round trip
	// (nil after a plain broadcast), and when that broadcast began: the node
	// waited for the receipt part of the receipt timeout already.
	info   *chain.TxInfo
	sentAt time.Time
}

// send signs leg i at nonce, journals it, and broadcasts it under the
// outcome rule. It returns the Refusal only when the transaction is shown
// not to have reached the node (or was never broadcast); the reservation is
// then settled or released.
func (r *run) send(ctx context.Context, i int, nonce uint64) (*sentTx, *Refusal) {
	e, leg := r.e, r.p.Legs[i]
	if e.now().Sub(r.legAt) > e.bounds.Confirm {
		return nil, r.stop(i, int64(nonce), Refuse(CodeTooSlow, "the confirm took longer than %s before its transaction could be signed (a slow node). Nothing was signed or sent. Call the tool again without confirm for a new preview.", e.bounds.Confirm).
			Because("it could not be signed within %s of taking its nonce (a slow node)", e.bounds.Confirm))
	}
	tx, err := e.signer.SignTx(leg.Call.Tx(e.chainID, nonce), e.chainID)
	if err != nil {
		return nil, r.stop(i, int64(nonce), Refuse(CodeSendFailed, "the transaction could not be signed (%s). Nothing was sent.", err).Because("it could not be signed (%s)", err))
	}
	raw, _ := tx.MarshalBinary()
	if err := e.Record(KindSigned, SignedRecord{V: records.Version, Tool: r.p.Tool, Leg: leg.Label, Reservation: r.res.ID(), Tx: tx.Hash().Hex(),
		Nonce: nonce, From: leg.Call.From.Hex(), Raw: hexutil.Encode(raw)}); err != nil {
		// Not journaled, so not broadcast — now or ever: the only copy of
		// the signed bytes is dropped here, and recovery never sends a
		// signed record that no broadcast record follows.
		cause := fmt.Sprintf("transaction %s was signed but could not be journaled, so it was not broadcast and never will be; its signed bytes are discarded", tx.Hash().Hex())
		ref := Refuse(CodeNotSent, "%s. %s", cause, e.LedgerUnavailable(err).Reason()).Because("%s", cause)
		return nil, r.stop(i, int64(nonce), ref)
	}
	// From the journaled signature to the journaled outcome of the
	// broadcast, the request's cancellation must not cut the work short.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.bounds.Send)
	defer cancel()
	e.log.Info("broadcasting", "tool", r.p.Tool, "leg", leg.Label, "tx", tx.Hash().Hex(), "nonce", nonce)
	// The next leg's simulation on the state this one leaves rides in the
	// broadcast that waits (prepareLeg uses it when it ran at the receipt's
	// block).
	var ride []*chain.View
	r.nextSim, r.nextL1 = nil, nil
	if i+1 < len(r.p.Legs) {
		next := r.p.Legs[i+1].Call
		r.nextSim, r.nextL1 = chain.SimView(next), e.chain.L1FeeBounds([]chain.Call{next})
		ride = append(append(ride, r.nextSim), r.nextL1...)
	}
	sentAt := time.Now() // real time: the node waits in it
	b := e.broadcastWaiting(bctx, tx, leg.Call.From, nonce, r.watch, true, ride...)
	r.unrecorded = append(r.unrecorded, b.unrecorded...)
	switch b.outcome {
	case OutcomeAccepted:
		return &sentTx{tx: tx, nonce: nonce, info: b.info, sentAt: sentAt}, nil
	case KindRefusedFinal:
		return nil, r.stop(i, -1, Refuse(CodeSendFailed, "the node refused the transaction (%s) and does not have it; the wallet's nonce has not passed it. Nothing was sent; the caps are as before, and walletgate will never send it. Call the tool again without confirm for a new preview.", b.detail).
			Because("the node refused it (%s) and does not have it; walletgate will never send it", b.detail))
	}
	e.log.Warn("broadcast outcome unknown", "tx", tx.Hash().Hex(), "detail", b.detail)
	return &sentTx{tx: tx, nonce: nonce, why: "the node's answer to the broadcast did not show whether it has the transaction (" + b.detail + ")"}, nil
}

// decide turns a leg's wait into the outcome, or nil to go on with the next
// leg. Every final outcome settles here or in incomplete.
func (r *run) decide(ctx context.Context, i int, sent *sentTx, info *chain.TxInfo) *Outcome {
	e, leg := r.e, r.p.Legs[i]
	out := &Outcome{Leg: leg.Label, Tx: sent.tx.Hash(), Nonce: sent.nonce, Earlier: r.earlier, Fee: new(big.Int).Set(r.fees), Effects: []Moved{}}
	if !e.included(info, sent) {
		// Counted as reserved until its outcome is known (and, for the
		// legs before it, what they moved stays within that reservation).
		out.Status = StatusPending
		out.Why = sent.why
		if info.Mined && !e.ours(info, sent.nonce) {
			out.Why = "the node answered a receipt that is not this transaction's (" + notOurs(info, e, sent.nonce) + "), so it is not counted as included"
		}
		r.legs = append(r.legs, LegOutcome{Label: leg.Label, Status: LegPending, Tx: sent.tx.Hash(), Nonce: sent.nonce, Reason: out.Why})
		out.Legs = r.legs
		if len(r.p.Legs) == 1 {
			e.keepPending(r.res) // settled when its receipt turns up, by whichever session sees it
		}
		return out
	}
	r.note("the receipt of "+info.Hash.Hex(), e.recordReceipt(info))
	r.fees.Add(r.fees, info.Fee())
	r.infos = append(r.infos, info)
	block := info.Block
	out.Block, out.Confirmations, out.GasUsed, out.Fee = &block, info.Confirmations, info.GasUsed, new(big.Int).Set(r.fees)
	if info.Status != 1 {
		r.legs = append(r.legs, LegOutcome{Label: leg.Label, Status: LegReverted, Tx: info.Hash, Nonce: sent.nonce, Block: block, Fee: info.Fee()})
		if len(r.earlier) > 0 {
			// Earlier legs landed: what they moved counts, and what they
			// left standing is taken back.
			return r.incomplete(i)
		}
		r.settleMeasured(false)
		out.Status, out.Legs, out.Changes = StatusReverted, r.legs, r.changes()
		return out
	}
	r.measure(ctx, info)
	r.legs = append(r.legs, LegOutcome{Label: leg.Label, Status: LegIncluded, Tx: info.Hash, Nonce: sent.nonce, Block: block, Fee: info.Fee()})
	if i < len(r.p.Legs)-1 {
		r.earlier = append(r.earlier, Included{Label: leg.Label, Tx: info.Hash, Nonce: sent.nonce, Block: block, Fee: info.Fee()})
		return nil
	}
	missing := r.beyondBound()
	switch {
	case r.p.Traced != nil:
		out.Effects = MovedOf(e.address, r.infos, e.asset)
		missing = append(missing, e.receiptsAllowed(r.p, r.infos)...)
	case r.p.Verify != nil:
		var short []string
		out.Effects, short = r.p.Verify(ctx, info, r.moved.measuredIn())
		missing = append(missing, short...)
	default:
		missing = append(missing, verifyEffects(r.p.Effects, info)...)
		for _, ef := range r.p.Effects {
			out.Effects = append(out.Effects, ef.Moved())
		}
	}
	r.settleMeasured(false)
	out.Status, out.Legs, out.Changes = StatusConfirmed, r.legs, r.changes()
	if len(missing) > 0 {
		out.Status, out.Missing = StatusEffectMismatch, missing
		if r.p.Traced == nil {
			out.Effects = MovedOf(e.address, r.infos, e.asset)
		}
	}
	return out
}

// wait waits for the leg's own receipt: the one the broadcast that waits
// brought back when it is the leg's, else by polling.
func (r *run) wait(ctx context.Context, s *sentTx) *chain.TxInfo {
	r.lastInfo = nil
	if s.info != nil && r.e.included(s.info, s) {
		r.lastInfo = s.info
		return s.info
	}
	timeout := r.e.receiptTimeout
	if s.info != nil {
		timeout = max(timeout-time.Since(s.sentAt), 0)
	}
	// Detached: a cancelled request still gets the true outcome recorded.
	return r.e.chain.WaitOwnWatching(context.WithoutCancel(ctx), s.tx.Hash(), r.e.address, r.watch, timeout, func(info *chain.TxInfo) bool { return r.e.included(info, s) })
}

// included reports whether info is the leg's own receipt with enough
// confirmations.
func (e *Engine) included(info *chain.TxInfo, s *sentTx) bool {
	return info.Mined && e.ours(info, s.nonce) && info.Confirmations >= e.confirmations
}

// ours reports whether info is the signed transaction's: the hash in the
// transaction and the receipt, the sender and the nonce, and a sender whose
// nonce at the latest block has passed it. One node lying consistently about
// all of these cannot be caught by asking it (THREAT-MODEL.md).
func (e *Engine) ours(info *chain.TxInfo, nonce uint64) bool {
	return notOurs(info, e, nonce) == ""
}

func notOurs(info *chain.TxInfo, e *Engine, nonce uint64) string {
	switch {
	case !info.Found:
		return "the node does not know the transaction"
	case info.TxHash != info.Hash:
		return "the transaction it returned has hash " + info.TxHash.Hex()
	case info.Mined && info.ReceiptHash != info.Hash:
		return "the receipt is for " + info.ReceiptHash.Hex()
	case info.From != e.address:
		return "its sender is " + info.From.Hex()
	case info.Nonce != nonce:
		return fmt.Sprintf("its nonce is %d, not %d", info.Nonce, nonce)
	case info.SenderNonce == nil || *info.SenderNonce <= nonce:
		return "the wallet's nonce has not passed it"
	}
	return ""
}

// prepareLeg readies leg i once the legs before it were included: it is
// simulated again on the real state with its own gas limit, its L1 data fee
// bound read again with it (an OP-stack chain) must still fit, and it takes
// the next free nonce.
func (r *run) prepareLeg(ctx context.Context, i int) (uint64, *Refusal) {
	e, leg := r.e, r.p.Legs[i]
	l1 := r.nextL1
	if rode, info := r.nextSim, r.lastInfo; rode != nil && info != nil && info.Mined && info.AtHead != nil && info.AtHead.Block == info.Block {
		// It ran on the state the previous leg left, at its receipt's block.
		if rode.Err != nil {
			return 0, r.stop(i, -1, e.revertRefusal(r.p.Explain, rode.Err))
		}
	} else if l1 = e.chain.L1FeeBounds([]chain.Call{leg.Call}); l1 != nil {
		// The simulation and the bound, again in one round trip.
		sim := chain.SimView(leg.Call)
		if _, err := e.chain.StateAndViews(ctx, leg.Call.From, append([]*chain.View{sim}, l1...)...); err != nil {
			return 0, r.stop(i, -1, RPCRefusal(err))
		}
		if sim.Err != nil {
			return 0, r.stop(i, -1, e.revertRefusal(r.p.Explain, sim.Err))
		}
	} else if _, err := e.chain.Simulate(ctx, leg.Call); err != nil {
		return 0, r.stop(i, -1, e.revertRefusal(r.p.Explain, err))
	}
	r.nextSim, r.nextL1 = nil, nil
	if ref := r.l1FeeFits(i, l1); ref != nil {
		return 0, r.stop(i, -1, ref)
	}
	prev := r.earlier[len(r.earlier)-1].Nonce
	n, at, err := e.allocate(r.res.ID(), prev+1)
	if err != nil {
		return 0, r.stop(i, -1, e.LedgerUnavailable(err).Because("the journal could not record its nonce (%s)", Inert(err.Error(), 200)))
	}
	r.legAt = at
	return n, nil
}

// l1FeeFits judges leg i's L1 data fee bound read again just before it is
// signed (l1; nil on a chain without one). At or below its preview's, it
// fits. Above, the sequencer's L1 values rose since the confirm's re-check:
// the leg is sent only when what the reservation has left covers the rise —
// the reservation less what the included legs sent and paid, and less the
// previewed max cost of this leg and the ones after it — so the caps never
// hold less than the chain may charge; otherwise FEES_ROSE, and it is not
// sent.
func (r *run) l1FeeFits(i int, l1 []*chain.View) *Refusal {
	bounds, err := chain.ReadL1FeeBounds(l1)
	if err != nil {
		return RPCRefusal(err)
	}
	if bounds == nil {
		return nil
	}
	leg := r.p.Legs[i]
	was := leg.Call.L1Fee
	if was == nil {
		was = new(big.Int)
	}
	rise := new(big.Int).Sub(bounds[0], was)
	if rise.Sign() <= 0 {
		return nil
	}
	left := r.unspent(i)
	for _, l := range r.p.Legs[i:] {
		left.Sub(left, l.Call.MaxCost())
	}
	if rise.Cmp(left) <= 0 {
		return nil
	}
	if left.Sign() < 0 {
		left.SetInt64(0)
	}
	return Refuse(CodeFeesRose, "the L1 data fee bound of %q (the GasPriceOracle's, now %s ETH) rose above the previewed %s ETH while the legs before it were included, by more than the reservation has left (%s ETH). It was not signed or sent. Call the tool again without confirm for a new preview.",
		leg.Label, ETH.Format(bounds[0]), ETH.Format(was), ETH.Format(left)).
		Because("its L1 data fee bound rose from %s to %s ETH after the earlier legs, more than the reservation has left (%s ETH)", ETH.Format(was), ETH.Format(bounds[0]), ETH.Format(left))
}

// stop ends a plan whose leg i will not be sent (nonce is the one it held,
// given back; -1 for none). Before any leg was included it releases the
// reservation: nothing moved. After, the plan is incomplete: it takes back
// what the included legs left standing (Plan.Undo) inside the same
// reservation, settles the caps to what the included legs moved, and keeps
// the outcome in r.final.
func (r *run) stop(i int, nonce int64, why *Refusal) *Refusal {
	e := r.e
	if nonce >= 0 {
		if err := e.Record(KindNonceFree, NonceRecord{V: records.Version, Reservation: r.res.ID(), Nonce: uint64(nonce), At: e.now().UTC()}); err != nil {
			// Nothing was signed with it: it stays taken until its
			// allocation's bound passes, then is free again.
			e.log.Warn("a nonce given back could not be journaled; it is free again once its allocation's bound passes", "nonce", nonce, "err", Inert(err.Error(), 200))
		}
	}
	if len(r.earlier) == 0 {
		if err := r.release(); err != nil {
			why.Message += " The journal could not record the release of the caps (" + Inert(err.Error(), 200) + "), so they stay counted as reserved."
		}
		return why
	}
	r.legs = append(r.legs, LegOutcome{Label: r.p.Legs[i].Label, Status: LegNotSent, Code: why.Code, Reason: why.Reason()})
	r.final = r.incomplete(i)
	return why
}

// end is how the confirm answers a leg's refusal: the refusal itself when
// nothing was included, else the incomplete outcome stop built.
func (r *run) end(why *Refusal) (*Outcome, *Refusal) {
	if r.final != nil {
		return r.answer(r.final), nil
	}
	return nil, why
}

// answer is out with what the journal could not record along the way.
func (r *run) answer(out *Outcome) *Outcome {
	out.Unrecorded = append(out.Unrecorded, r.unrecorded...)
	return out
}

// recordReceipt journals an included transaction's own receipt, ending in
// the same locked step any other of the wallet's transactions at its nonce
// (appendReceiptLocked).
func (e *Engine) recordReceipt(info *chain.TxInfo) error {
	if e.recErr != nil {
		return e.recErr
	}
	var released map[string]map[string]string
	err := e.rec.Update(func(live *records.Live, appendRecord records.AppendFunc) (err error) {
		released, err = e.appendReceiptLocked(live, appendRecord, receiptOf(info))
		return err
	})
	e.adoptAll(released)
	return err
}

// receiptOf is the receipt record of an included transaction.
func receiptOf(info *chain.TxInfo) ReceiptRecord {
	return ReceiptRecord{V: records.Version, Tx: info.Hash.Hex(), Status: info.Status, Block: info.Block, GasUsed: info.GasUsed, Fee: info.Fee().String()}
}

// incomplete ends a plan that stopped at leg i after earlier legs were
// included: the undo legs, then the settlement of what moved.
func (r *run) incomplete(i int) *Outcome {
	standing := true
	if r.p.Undo != nil {
		standing = !r.undo(i)
	} else if r.p.Traced != nil {
		standing = false // its exposures are counted from the bound
	}
	r.settleMeasured(standing)
	last := r.earlier[len(r.earlier)-1]
	block := last.Block
	return &Outcome{Status: StatusIncomplete, Leg: r.p.Legs[i].Label, Tx: last.Tx, Nonce: last.Nonce, Block: &block,
		Fee: new(big.Int).Set(r.fees), Earlier: r.earlier, Legs: r.legs, Changes: r.changes(), Effects: MovedOf(r.e.address, r.infos, r.e.asset)}
}

// undo sends the legs that take back what the included legs before leg i
// left standing, within what the reservation still holds for fees, each
// recorded in r.legs. It reports whether every one was included and
// succeeded (then nothing the plan granted is left standing).
func (r *run) undo(i int) bool {
	e := r.e
	legs := r.p.Undo(i)
	if len(legs) == 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.bounds.Confirm+e.receiptTimeout)
	defer cancel()
	budget := r.unspent(i)
	notSent := func(l Leg, code, reason string) bool {
		r.legs = append(r.legs, LegOutcome{Label: l.Label, Status: LegNotSent, Code: code, Reason: reason, Undo: true})
		return false
	}
	for _, l := range legs {
		b, ref := e.prepare(ctx, l.Call)
		if ref != nil {
			return notSent(l, ref.Code, "it failed before signing: "+ref.Reason())
		}
		if b.MaxCost().Cmp(budget) > 0 {
			return notSent(l, CodeInsufficientFunds, fmt.Sprintf("it would cost up to %s ETH, more than the reservation has left (%s ETH); do it yourself (e.g. wallet_approve with amount \"0\")", ETH.Format(b.MaxCost()), ETH.Format(budget)))
		}
		nonce, at, err := e.allocate(r.res.ID(), r.earlier[len(r.earlier)-1].Nonce+1)
		if err != nil {
			return notSent(l, CodeNotSent, "the journal could not record its nonce ("+Inert(err.Error(), 200)+")")
		}
		r.legAt = at
		r.p.Legs = append(r.p.Legs, Leg{Label: l.Label, Call: b})
		sent, ref := r.sendUndo(ctx, len(r.p.Legs)-1, nonce)
		if ref != nil {
			return notSent(l, ref.Code, ref.Reason())
		}
		info := r.wait(ctx, sent)
		if !e.included(info, sent) {
			r.legs = append(r.legs, LegOutcome{Label: l.Label, Status: LegPending, Tx: sent.tx.Hash(), Nonce: nonce, Reason: "sent, not seen included yet (check it with wallet_verify_tx)", Undo: true})
			return false
		}
		r.note("the receipt of "+info.Hash.Hex(), e.recordReceipt(info))
		r.fees.Add(r.fees, info.Fee())
		budget.Sub(budget, info.Fee())
		r.infos = append(r.infos, info)
		if info.Status != 1 {
			r.legs = append(r.legs, LegOutcome{Label: l.Label, Status: LegReverted, Tx: info.Hash, Nonce: nonce, Block: info.Block, Fee: info.Fee(), Undo: true})
			return false
		}
		r.measure(ctx, info)
		r.legs = append(r.legs, LegOutcome{Label: l.Label, Status: LegIncluded, Tx: info.Hash, Nonce: nonce, Block: info.Block, Fee: info.Fee(), Undo: true})
		r.earlier = append(r.earlier, Included{Label: l.Label, Tx: info.Hash, Nonce: nonce, Block: info.Block, Fee: info.Fee()})
	}
	return true
}

// sendUndo is send for an undo leg: its failures are reported, not stopped
// on again.
func (r *run) sendUndo(ctx context.Context, i int, nonce uint64) (*sentTx, *Refusal) {
	e, leg := r.e, r.p.Legs[i]
	tx, err := e.signer.SignTx(leg.Call.Tx(e.chainID, nonce), e.chainID)
	if err != nil {
		return nil, Refuse(CodeSendFailed, "it could not be signed (%s).", err).Because("it could not be signed (%s)", err)
	}
	raw, _ := tx.MarshalBinary()
	if err := e.Record(KindSigned, SignedRecord{V: records.Version, Tool: r.p.Tool, Leg: leg.Label, Reservation: r.res.ID(), Tx: tx.Hash().Hex(),
		Nonce: nonce, From: leg.Call.From.Hex(), Raw: hexutil.Encode(raw)}); err != nil {
		return nil, Refuse(CodeNotSent, "it was signed but could not be journaled (%s), so it was not broadcast.", err).Because("it was signed but could not be journaled (%s), so it was not broadcast", err)
	}
	b := e.broadcast(ctx, tx, leg.Call.From, nonce)
	if b.outcome == KindRefusedFinal {
		return nil, Refuse(CodeSendFailed, "the node refused it (%s).", b.detail).Because("the node refused it (%s)", b.detail)
	}
	return &sentTx{tx: tx, nonce: nonce, why: b.detail}, nil
}

// prepare estimates gas and fees for call on the current state and
// simulates it with them. On an OP-stack chain the call carries its L1 data
// fee bound, read in the same round trip as the estimate (chain.Prepare), so
// that its MaxCost — what an undo leg is measured against the reservation
// with — counts it as every other leg's does.
func (e *Engine) prepare(ctx context.Context, call chain.Call) (chain.Call, *Refusal) {
	st, gas, _, _, err := e.chain.Prepare(ctx, call, call.To)
	if err != nil {
		return call, e.revertRefusal(nil, err)
	}
	gas += gas * gasMargin / 100
	call.Gas, call.MaxFee, call.Tip = gas, st.MaxFee(), st.Tip
	call.L1Fee = st.L1FeeBound
	if _, err := e.chain.Simulate(ctx, call); err != nil {
		return call, e.revertRefusal(nil, err)
	}
	return call, nil
}

// unspent is the ETH of the reservation that the legs before leg i (all
// included) have not used: the reservation less their fees and the value
// they sent. A later leg's risen L1 fee, or an undo, can be paid from it,
// never from what already left the wallet.
func (r *run) unspent(i int) *big.Int {
	left := new(big.Int).Sub(r.reservedETH(), r.fees)
	for _, l := range r.p.Legs[:i] {
		if l.Call.Value != nil {
			left.Sub(left, l.Call.Value)
		}
	}
	return left
}

// reservedETH is the ETH the reservation holds.
func (r *run) reservedETH() *big.Int {
	if v, ok := r.p.Spend[policy.NativeAsset]; ok {
		return new(big.Int).Set(v)
	}
	return new(big.Int)
}

// settle and release are the only places a confirm's reservation ends
// (through the store's one release path, caps.DayStore.Correct); what
// moved settles at the reservation's prices.
func (r *run) settle(actual caps.Spend) {
	r.note("the settlement of the caps", r.res.Settle(r.e.settleUSD(actual, r.usd, r.res.Spend())))
}
func (r *run) release() error { return r.res.Release() }
