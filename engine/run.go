package engine

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
)

// sentTx is a leg that may have reached the node.
type sentTx struct {
	tx    *types.Transaction
	nonce uint64
	why   string // when the broadcast's outcome is unknown: why
}

// send signs leg i at nonce, journals it, and broadcasts it under the
// outcome rule. It returns the Refusal only when the transaction is shown
// not to have reached the node (or was never broadcast); the reservation is
// then settled or released.
func (r *run) send(ctx context.Context, i int, nonce uint64) (*sentTx, *Refusal) {
	e, leg := r.e, r.p.Legs[i]
	if e.now().Sub(r.reservedAt) > e.bounds.Confirm {
		return nil, r.stop(i, int64(nonce), Refuse(CodeTooSlow, "the confirm took longer than %s before its transaction could be signed (a slow node). Nothing was signed or sent. Call the tool again without confirm for a new preview.", e.bounds.Confirm))
	}
	tx, err := e.signer.SignTx(leg.Call.Tx(e.chainID, nonce), e.chainID)
	if err != nil {
		return nil, r.stop(i, int64(nonce), Refuse(CodeSendFailed, "the transaction could not be signed (%s). Nothing was sent.", err))
	}
	raw, _ := tx.MarshalBinary()
	if err := e.Record(KindSigned, SignedRecord{V: journal.Version, Tool: r.p.Tool, Leg: leg.Label, Reservation: r.res.ID(), Tx: tx.Hash().Hex(),
		Nonce: nonce, From: leg.Call.From.Hex(), Raw: hexutil.Encode(raw)}); err != nil {
		// Not journaled, so not broadcast — now or ever: the only copy of
		// the signed bytes is dropped here, and recovery never sends a
		// signed record that no broadcast record follows.
		ref := e.LedgerUnavailable(err)
		ref.Code = CodeNotSent
		ref.Message = fmt.Sprintf("transaction %s was signed but could not be journaled, so it was not broadcast and never will be; its signed bytes are discarded. %s", tx.Hash().Hex(), withoutNothingSent(ref.Message))
		return nil, r.stop(i, int64(nonce), ref)
	}
	// From the journaled signature to the journaled outcome of the
	// broadcast, the request's cancellation must not cut the work short.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.bounds.Send)
	defer cancel()
	e.log.Info("broadcasting", "tool", r.p.Tool, "leg", leg.Label, "tx", tx.Hash().Hex(), "nonce", nonce)
	b := e.broadcast(bctx, tx, leg.Call.From, nonce)
	switch b.outcome {
	case OutcomeAccepted:
		return &sentTx{tx: tx, nonce: nonce}, nil
	case KindRefusedFinal:
		return nil, r.stop(i, -1, Refuse(CodeSendFailed, "the node refused the transaction (%s) and does not have it; the wallet's nonce has not passed it. Nothing was sent; the caps are as before, and walletgate will never send it. Call the tool again without confirm for a new preview.", b.detail))
	}
	e.log.Warn("broadcast outcome unknown", "tx", tx.Hash().Hex(), "detail", b.detail)
	return &sentTx{tx: tx, nonce: nonce, why: "the node's answer to the broadcast did not show whether it has the transaction (" + b.detail + ")"}, nil
}

// wait waits for the leg's own receipt.
func (r *run) wait(ctx context.Context, s *sentTx) *chain.TxInfo {
	// Detached: a cancelled request still gets the true outcome recorded.
	return r.e.chain.WaitOwn(context.WithoutCancel(ctx), s.tx.Hash(), r.e.address, r.e.receiptTimeout, func(info *chain.TxInfo) bool { return r.e.included(info, s) })
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
// simulated again on the real state with its own gas limit, and takes the
// next free nonce.
func (r *run) prepareLeg(ctx context.Context, i int) (uint64, *Refusal) {
	e, leg := r.e, r.p.Legs[i]
	if _, err := e.chain.Simulate(ctx, leg.Call); err != nil {
		return 0, r.stop(i, -1, e.revertRefusal(r.p.Explain, err))
	}
	prev := r.earlier[len(r.earlier)-1].Nonce
	n, err := e.allocate(r.res.ID(), prev+1)
	if err != nil {
		return 0, r.stop(i, -1, e.LedgerUnavailable(err))
	}
	return n, nil
}

// stop ends a plan whose leg i will not be sent (nonce is the one it held,
// given back; -1 for none). Before any leg was included it releases the
// reservation: nothing moved. After, it takes back what the included legs
// left standing (Plan.Undo) inside the same reservation, settles the caps to
// the fees spent, and says exactly what was signed, included and left.
func (r *run) stop(i int, nonce int64, why *Refusal) *Refusal {
	e := r.e
	if nonce >= 0 {
		_ = e.Record(KindNonceFree, NonceRecord{V: journal.Version, Reservation: r.res.ID(), Nonce: uint64(nonce), At: e.now().UTC()})
	}
	if len(r.earlier) == 0 {
		r.release()
		return why
	}
	var b strings.Builder
	for _, in := range r.earlier {
		fmt.Fprintf(&b, "%s (%s) was included in block %d; ", in.Label, in.Tx.Hex(), in.Block)
	}
	fmt.Fprintf(&b, "then %q was not sent: %s", r.p.Legs[i].Label, withoutNothingSent(why.Message))
	if r.p.Undo != nil {
		b.WriteString(" " + r.undo(i))
	}
	r.settle(caps.Spend{policy.NativeAsset: new(big.Int).Set(r.fees)})
	fmt.Fprintf(&b, " Network fees spent: %s ETH, counted against the ETH caps; nothing else moved.", ETH.Format(r.fees))
	return &Refusal{Code: why.Code, Message: b.String()}
}

// undo sends the legs that take back what the included legs left standing,
// within what the reservation still holds for fees, and says what happened.
func (r *run) undo(i int) string {
	e := r.e
	legs := r.p.Undo(i)
	if len(legs) == 0 {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.bounds.Confirm+e.receiptTimeout)
	defer cancel()
	budget := new(big.Int).Sub(r.reservedETH(), r.fees)
	var done []string
	for _, l := range legs {
		b, ref := e.prepare(ctx, l.Call)
		if ref != nil {
			return fmt.Sprintf("Taking it back (%s) failed before signing: %s It is still standing.", l.Label, withoutNothingSent(ref.Message))
		}
		if b.MaxCost().Cmp(budget) > 0 {
			return fmt.Sprintf("Taking it back (%s) would cost up to %s ETH, more than the reservation has left (%s ETH), so it was not sent: it is still standing; do it yourself (e.g. wallet_approve with amount \"0\").", l.Label, ETH.Format(b.MaxCost()), ETH.Format(budget))
		}
		nonce, err := e.allocate(r.res.ID(), r.earlier[len(r.earlier)-1].Nonce+1)
		if err != nil {
			return "Taking it back failed: " + err.Error() + ". It is still standing."
		}
		r.p.Legs = append(r.p.Legs, Leg{Label: l.Label, Call: b})
		sent, ref := r.sendUndo(ctx, len(r.p.Legs)-1, nonce)
		if ref != nil {
			return fmt.Sprintf("Taking it back (%s) was not sent: %s It is still standing.", l.Label, withoutNothingSent(ref.Message))
		}
		info := r.wait(ctx, sent)
		if !e.included(info, sent) {
			return fmt.Sprintf("Taking it back (%s) was sent as %s but not seen included yet (check it with wallet_verify_tx).", l.Label, sent.tx.Hash().Hex())
		}
		_ = e.Record(KindReceipt, ReceiptRecord{V: journal.Version, Tx: info.Hash.Hex(), Status: info.Status, Block: info.Block, GasUsed: info.GasUsed, Fee: info.Fee().String()})
		r.fees.Add(r.fees, info.Fee())
		budget.Sub(budget, info.Fee())
		if info.Status != 1 {
			return fmt.Sprintf("Taking it back (%s, %s) reverted in block %d: it is still standing.", l.Label, info.Hash.Hex(), info.Block)
		}
		r.earlier = append(r.earlier, Included{Label: l.Label, Tx: info.Hash, Nonce: nonce, Block: info.Block, Fee: info.Fee()})
		done = append(done, fmt.Sprintf("%s (%s, block %d)", l.Label, info.Hash.Hex(), info.Block))
	}
	return "It was taken back: " + strings.Join(done, ", ") + "."
}

// sendUndo is send for an undo leg: its failures are reported, not stopped
// on again.
func (r *run) sendUndo(ctx context.Context, i int, nonce uint64) (*sentTx, *Refusal) {
	e, leg := r.e, r.p.Legs[i]
	tx, err := e.signer.SignTx(leg.Call.Tx(e.chainID, nonce), e.chainID)
	if err != nil {
		return nil, Refuse(CodeSendFailed, "it could not be signed (%s).", err)
	}
	raw, _ := tx.MarshalBinary()
	if err := e.Record(KindSigned, SignedRecord{V: journal.Version, Tool: r.p.Tool, Leg: leg.Label, Reservation: r.res.ID(), Tx: tx.Hash().Hex(),
		Nonce: nonce, From: leg.Call.From.Hex(), Raw: hexutil.Encode(raw)}); err != nil {
		return nil, Refuse(CodeNotSent, "it was signed but could not be journaled (%s), so it was not broadcast.", err)
	}
	b := e.broadcast(ctx, tx, leg.Call.From, nonce)
	if b.outcome == KindRefusedFinal {
		return nil, Refuse(CodeSendFailed, "the node refused it (%s).", b.detail)
	}
	return &sentTx{tx: tx, nonce: nonce, why: b.detail}, nil
}

// prepare estimates gas and fees for call on the current state and
// simulates it with them.
func (e *Engine) prepare(ctx context.Context, call chain.Call) (chain.Call, *Refusal) {
	st, gas, _, err := e.chain.Prepare(ctx, call, call.To)
	if err != nil {
		return call, e.revertRefusal(nil, err)
	}
	gas += gas * gasMargin / 100
	call.Gas, call.MaxFee, call.Tip = gas, st.MaxFee(), st.Tip
	if _, err := e.chain.Simulate(ctx, call); err != nil {
		return call, e.revertRefusal(nil, err)
	}
	return call, nil
}

// reservedETH is the ETH the reservation holds.
func (r *run) reservedETH() *big.Int {
	if v, ok := r.p.Spend[policy.NativeAsset]; ok {
		return new(big.Int).Set(v)
	}
	return new(big.Int)
}

// settle and release are the only places a confirm's reservation ends.
func (r *run) settle(actual caps.Spend) { r.res.Settle(actual) }
func (r *run) release()                 { r.res.Release() }

// withoutNothingSent drops the sentences of a refusal that say nothing was
// signed or sent, or that the caps are as before: after an earlier leg was
// included they are no longer true.
func withoutNothingSent(msg string) string {
	parts := strings.SplitAfter(msg, ". ")
	var keep []string
	for _, p := range parts {
		l := strings.ToLower(p)
		if strings.Contains(l, "nothing was") || strings.Contains(l, "caps are as before") || strings.Contains(l, "without confirm") {
			continue
		}
		keep = append(keep, p)
	}
	return strings.TrimSpace(strings.Join(keep, ""))
}
