package engine

// Broadcasting under the outcome rule (see the package comment), and the
// follow-up of transactions whose outcome is not known: after a lost answer,
// at the next confirm, and at start.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/journal/records"
)

// broadcastResult is what a broadcast showed: OutcomeAccepted,
// KindRefusedFinal, or OutcomeUnknown, with the node's words; info is what
// the broadcast that waits found of the transaction in the same round trip
// (nil otherwise).
type broadcastResult struct {
	outcome string
	detail  string
	info    *chain.TxInfo
	// unrecorded says what of this broadcast the journal could not record
	// (its outcome, a refused-final end): the answer says so.
	unrecorded []string
}

// broadcast sends tx and journals every attempt's outcome. A refusal counts
// as final only when a lookup shows the node does not have the transaction
// and the wallet's nonce has not passed it; a lost answer is followed by
// lookups and re-sends of the identical bytes, a few times.
func (e *Engine) broadcast(ctx context.Context, tx *types.Transaction, from common.Address, nonce uint64) broadcastResult {
	return e.broadcastWaiting(ctx, tx, from, nonce, nil, false)
}

// broadcastWaiting is broadcast whose first attempt, when wait is set and
// the node offers it, is the broadcast that waits (eth_sendRawTransactionSync,
// chain.SendRawWaiting): the node answers with the receipt, and the lookup
// riding after it (with the wallet's balance of each of watch) is returned
// in the result's info. Its answers go through the same outcome rule as a
// plain send's: a transport failure or a lost answer is unknown and followed
// up, the node's refusal is final only when shown; a node found to lack the
// method is sent the same bytes plainly at once.
func (e *Engine) broadcastWaiting(ctx context.Context, tx *types.Transaction, from common.Address, nonce uint64, watch []common.Address, wait bool, views ...*chain.View) broadcastResult {
	hash := tx.Hash()
	var (
		err  error
		info *chain.TxInfo
	)
	// The node's wait is asked in whole milliseconds (0 is its own
	// default): a receipt timeout below one is waited for plainly.
	if wait && e.chain.SyncSend() && e.receiptTimeout >= time.Millisecond {
		if watch == nil {
			watch = []common.Address{}
		}
		info, err = e.chain.SendRawWaiting(ctx, tx, from, watch, e.receiptTimeout, views...)
		if errors.Is(err, chain.ErrNoSyncSend) {
			e.log.Info("the node has no eth_sendRawTransactionSync; sending plainly from now on", "tx", hash.Hex())
			info, err = nil, e.chain.SendRaw(ctx, tx)
		}
	} else {
		err = e.chain.SendRaw(ctx, tx)
	}
	var unrecorded []string
	note := func(what string, err error) {
		if err != nil {
			unrecorded = append(unrecorded, unrecordedWhy(what, err))
		}
	}
	for attempt := 0; ; attempt++ {
		if err == nil {
			note("the broadcast's acceptance", e.recordBroadcast(hash, OutcomeAccepted, ""))
			return broadcastResult{outcome: OutcomeAccepted, info: info, unrecorded: unrecorded}
		}
		var ce *chain.Error
		if errors.As(err, &ce) && !ce.Transport() {
			msg := Inert(ce.Message, 200)
			fam := chain.ClassifySend(ce.Message)
			// Words saying the node has or had it are no refusal: journaled
			// as unknown, so no later follow-up ends it as refused either.
			outcome := OutcomeRefused
			if fam != nil && fam.MayHaveIt {
				outcome = OutcomeUnknown
			}
			note("the broadcast's answer", e.recordBroadcast(hash, outcome, msg))
			b := e.showRefused(ctx, hash, from, nonce, msg, fam)
			b.unrecorded = append(unrecorded, b.unrecorded...)
			return b
		}
		detail := Inert(err.Error(), 200)
		note("the broadcast's lost answer", e.recordBroadcast(hash, OutcomeUnknown, detail))
		if attempt == 2 {
			return broadcastResult{outcome: OutcomeUnknown, detail: detail, unrecorded: unrecorded}
		}
		select {
		case <-ctx.Done():
			return broadcastResult{outcome: OutcomeUnknown, detail: detail, unrecorded: unrecorded}
		case <-time.After(time.Duration(50*(attempt+1)) * time.Millisecond):
		}
		if info, lerr := e.chain.OwnTransaction(ctx, hash, from); lerr == nil && info.Found && info.TxHash == hash {
			note("the broadcast's acceptance", e.recordBroadcast(hash, OutcomeAccepted, ""))
			return broadcastResult{outcome: OutcomeAccepted, unrecorded: unrecorded}
		}
		err = e.chain.SendRaw(ctx, tx)
	}
}

// showRefused decides a refused broadcast: final only when shown — and
// never when the node's words (fam, from chain.SendFamilies) say it has or
// had the transaction, or its nonce is used: a load-balanced provider's
// other node may have it while the one asked next does not.
func (e *Engine) showRefused(ctx context.Context, hash common.Hash, from common.Address, nonce uint64, msg string, fam *chain.SendFamilyInfo) broadcastResult {
	info, err := e.chain.OwnTransaction(ctx, hash, from)
	switch {
	case err != nil:
		return broadcastResult{outcome: OutcomeUnknown, detail: "the node refused it (" + msg + ") and could not be asked whether it has it"}
	case info.Found && info.TxHash == hash:
		b := broadcastResult{outcome: OutcomeAccepted}
		if err := e.recordBroadcast(hash, OutcomeAccepted, ""); err != nil {
			b.unrecorded = []string{unrecordedWhy("the broadcast's acceptance", err)}
		}
		return b
	case info.SenderNonce == nil || *info.SenderNonce > nonce:
		return broadcastResult{outcome: OutcomeUnknown, detail: fmt.Sprintf("the node refused it (%s) and does not know it, but the wallet's nonce has passed %d", msg, nonce)}
	case fam != nil && fam.MayHaveIt:
		return broadcastResult{outcome: OutcomeUnknown, detail: fmt.Sprintf("the node answered %q (%s), which does not show it was not sent, though it does not know it now", msg, fam.Says)}
	}
	// Shown not sent: ended refused-final under the lock, its reservation
	// released there unless a live run holds it (the run releases it). An
	// end that could not be journaled leaves it unknown and counted.
	ended, err := e.endTx(hash.Hex(), nonce, KindRefusedFinal, msg)
	switch {
	case err != nil:
		return broadcastResult{outcome: OutcomeUnknown, detail: "the node refused it (" + msg + ") and does not have it, but the journal could not record that (" + Inert(err.Error(), 200) + "), so it stays counted",
			unrecorded: []string{unrecordedWhy("its refused-final end", err)}}
	case !ended:
		return broadcastResult{outcome: OutcomeUnknown, detail: "the node refused it (" + msg + "), and the journal no longer lists it as pending: another session or process decided its fate"}
	}
	return broadcastResult{outcome: KindRefusedFinal, detail: msg}
}

// recordBroadcast journals one broadcast attempt's outcome.
func (e *Engine) recordBroadcast(hash common.Hash, outcome, detail string) error {
	return e.Record(KindBroadcast, BroadcastRecord{V: records.Version, Tx: hash.Hex(), Outcome: outcome, Error: detail})
}

// followUp resolves the wallet's open transactions before a new one is
// signed: those whose broadcast outcome is not known, and those the node
// accepted, which it may since have lost (dropped from its pool): a lost one
// is sent again, its identical bytes. One that stays unknown refuses the new
// write: its nonce would queue behind it, unseen.
func (e *Engine) followUp(ctx context.Context) *Refusal {
	defer e.adoptEnded()
	w, err := e.state()
	if err != nil {
		return e.LedgerUnavailable(err)
	}
	for _, t := range w.open() {
		if t.from != e.address || (!t.broadcast() && t.inFlight(e.now(), e.bounds.Confirm)) {
			continue // being broadcast right now
		}
		if line, done := e.resolve(ctx, t); !done {
			return Refuse(CodeTxOutstanding, "an earlier transaction of this wallet, %s (nonce %d, %s), has an unknown outcome: %s. A new transaction would wait behind it unseen, so nothing was signed or sent. It resolves when the node has it (walletgate re-sends its identical signed bytes on every confirm and at start) or when its nonce is used; check the node (WALLETGATE_RPC), then call the tool again without confirm.",
				t.Tx, t.Nonce, t.Tool, line)
		}
	}
	return nil
}

// resolve finds out what became of an open transaction and journals it: its
// receipt, acceptance, or a proven end (dropped, refused-final, abandoned);
// when the journal shows a broadcast and the node does not have it (its
// outcome was unknown, or the node accepted it and lost it), the identical
// signed bytes are sent again while they can still be included (their max
// fee per gas at or above the base fee); bytes that cannot be included now
// may be later, so they are neither ended nor replaced. Every end and
// release is decided under the journal's lock (endTx, journalReceipt), so
// that resolvers racing each other end it once. done is false while the
// outcome stays unknown and a new transaction would wait behind it.
func (e *Engine) resolve(ctx context.Context, t *txState) (line string, done bool) {
	info, err := e.chain.OwnTransaction(ctx, t.hash, t.from)
	if err != nil {
		return "the node could not be asked (" + Inert(err.Error(), 200) + ")", false
	}
	unjournaled := func(what string, err error) (string, bool) {
		return fmt.Sprintf("%s %s, but the journal could not record it (%s): it stays counted", t.Tx, what, Inert(err.Error(), 200)), false
	}
	switch {
	case info.Mined && notOurs(info, e, t.Nonce) == "":
		if err := e.journalReceipt(ctx, t, info); err != nil {
			return unjournaled(fmt.Sprintf("was included in block %d", info.Block), err)
		}
		return fmt.Sprintf("%s was included in block %d (status %d); its receipt is now journaled", t.Tx, info.Block, info.Status), true
	case info.Found && info.TxHash == t.hash:
		if !t.accepted() {
			if err := e.recordBroadcast(t.hash, OutcomeAccepted, ""); err != nil {
				return unjournaled("is waiting in the node's pool", err)
			}
		}
		return t.Tx + " is waiting in the node's pool", true
	case info.SenderNonce != nil && *info.SenderNonce > t.Nonce:
		return e.droppedOnEvidence(ctx, t)
	case !t.broadcast() && t.end == KindAbandoned:
		return fmt.Sprintf("%s has no journaled broadcast and the node does not have it: walletgate does not send it; it stays counted until nonce %d is used by another transaction, or until it turns up included", t.Tx, t.Nonce), true
	case !t.broadcast():
		if err := e.Record(KindAbandoned, EndRecord{V: records.Version, Tx: t.Tx, Nonce: t.Nonce, Reason: "signed, but no broadcast was ever journaled and the node does not have it: walletgate never sends these bytes"}); err != nil {
			return unjournaled("was signed but never broadcast", err)
		}
		t.end = KindAbandoned
		return fmt.Sprintf("%s was signed but its broadcast was never journaled, and the node does not have it: walletgate does not send it; it stays counted until nonce %d is used by another transaction, or until it turns up included (bytes already on their way when walletgate stopped may still arrive)", t.Tx, t.Nonce), true
	case t.onlyRefused():
		if _, err := e.endTx(t.Tx, t.Nonce, KindRefusedFinal, "refused by the node, unknown to it, nonce not passed"); err != nil {
			return unjournaled("was refused by the node and it does not have it", err)
		}
		t.end = KindRefusedFinal
		return fmt.Sprintf("%s was refused by the node and it does not have it: marked refused-final, never sent again", t.Tx), true
	}
	tx, ok := t.signedTx()
	if !ok {
		return "its journaled bytes are not transaction " + t.Tx, false
	}
	st, err := e.chain.StateAndViews(ctx, t.from)
	if err != nil {
		return "the node does not know it, and its base fee could not be read to send it again (" + Inert(err.Error(), 200) + ")", false
	}
	if tx.GasFeeCap().Cmp(st.BaseFee) < 0 {
		return fmt.Sprintf("the node does not know it, and its max fee per gas (%s gwei) is below the network's base fee (%s gwei): it cannot be included now but may be once the base fee falls, so walletgate neither signs other bytes for nonce %d nor ends it; it sends its identical bytes again once they can be included", gwei(tx.GasFeeCap()), gwei(st.BaseFee), t.Nonce), false
	}
	lost := t.accepted()
	b := e.broadcast(ctx, tx, t.from, t.Nonce)
	switch b.outcome {
	case OutcomeAccepted:
		if lost {
			e.log.Warn("the node had lost an accepted transaction; its identical signed bytes were broadcast again", "tx", t.Tx, "nonce", t.Nonce)
			return t.Tx + " was accepted by the node earlier but it no longer has it: its identical signed bytes were broadcast again and accepted", true
		}
		return t.Tx + " was unknown to the node: its identical signed bytes were broadcast again and accepted", true
	case KindRefusedFinal:
		t.end = KindRefusedFinal // showRefused ended it, under the lock
		return t.Tx + " was unknown to the node and refused when re-sent (" + b.detail + "): marked refused-final", true
	}
	return "the node does not know it and re-sending its identical signed bytes failed (" + b.detail + ")", false
}

// droppedOnEvidence decides a transaction the node does not know whose
// nonce the wallet has passed. A lookup that found nothing is no evidence:
// a node whose index lags says exactly that of a transaction it mined. The
// evidence is another transaction of the wallet's at that nonce whose
// receipt is journaled (its hash known: it ends this one as it is journaled,
// endReplacedLocked), or the node's own refusal of the identical bytes as
// "nonce too low", with the transaction still unknown to it after that
// refusal (bytes without a journaled broadcast are never sent, not even to
// ask). Then it is dropped (under the lock, its reservation
// released once nothing under it can move). Anything else leaves it pending
// and counted; done is true, since no later write waits behind a nonce that
// is used.
func (e *Engine) droppedOnEvidence(ctx context.Context, t *txState) (string, bool) {
	counted := fmt.Sprintf("%s is not known to the node and nonce %d is used, but that alone does not show it was not included (a node's index can lag): it stays pending and counted until its receipt or the node's refusal of its identical bytes shows its fate", t.Tx, t.Nonce)
	tx, ok := t.signedTx()
	if !ok || !t.broadcast() {
		return counted, true // never sent again: bytes without a journaled broadcast stay unsent
	}
	err := e.chain.SendRaw(ctx, tx)
	var ce *chain.Error
	if err == nil {
		// The node took it: pending, as before.
		if rerr := e.recordBroadcast(t.hash, OutcomeAccepted, ""); rerr != nil {
			e.log.Warn("a re-sent transaction's acceptance could not be journaled; it stays counted", "tx", t.Tx, "err", Inert(rerr.Error(), 200))
		}
		return counted, true
	}
	if !errors.As(err, &ce) || ce.Transport() {
		return counted, true
	}
	msg := Inert(ce.Message, 200)
	if rerr := e.recordBroadcast(t.hash, OutcomeUnknown, msg); rerr != nil {
		return counted, true
	}
	fam := chain.ClassifySend(ce.Message)
	if fam == nil || fam.Family != chain.SendNonceTooLow {
		return counted, true
	}
	info, err := e.chain.OwnTransaction(ctx, t.hash, t.from)
	if err != nil || info.Found || info.Mined {
		return counted, true
	}
	if _, err := e.endTx(t.Tx, t.Nonce, KindDropped, "its nonce was used by another transaction: the node refused its identical bytes as nonce too low ("+msg+") and does not know it"); err != nil {
		return fmt.Sprintf("%s never executed (nonce %d was used by another transaction), but the journal could not record that (%s): it stays counted", t.Tx, t.Nonce, Inert(err.Error(), 200)), true
	}
	t.end = KindDropped
	return fmt.Sprintf("%s never executed: nonce %d was used by another transaction (the node refused its identical bytes as nonce too low); marked dropped", t.Tx, t.Nonce), true
}

// state reads the wallet's state from the live state, under the shared lock.
func (e *Engine) state() (w *walletState, err error) {
	err = e.rec.View(func(live *records.Live) error {
		w, err = readState(live)
		return err
	})
	return w, err
}

// SettleIncluded looks up each open transaction of the wallet that was
// broadcast and journals (and settles, under the lock) those the chain has
// included, so that what is listed as pending is not on chain. Lookups that
// fail leave a transaction as it is.
func (e *Engine) SettleIncluded(ctx context.Context) {
	defer e.adoptEnded()
	w, err := e.state()
	if err != nil {
		return
	}
	for _, t := range w.open() {
		if t.from != e.address || !t.broadcast() {
			continue
		}
		info, err := e.chain.OwnTransaction(ctx, t.hash, t.from)
		if err != nil || !info.Mined || notOurs(info, e, t.Nonce) != "" {
			continue
		}
		if err := e.journalReceipt(ctx, t, info); err != nil {
			e.log.Warn("an included transaction's receipt could not be journaled; it stays listed as pending and counted", "tx", t.Tx, "err", Inert(err.Error(), 200))
		}
	}
}

// PendingTransactions lists the signed transactions whose outcome is not
// final yet.
func (e *Engine) PendingTransactions() []string {
	w, err := e.state()
	if err != nil {
		return nil
	}
	out := []string{}
	for _, t := range w.open() {
		out = append(out, t.Tx)
	}
	return out
}

// Reconcile settles what the records left open, typically after a crash or
// a lost connection, under the outcome rule (see resolve); a transaction
// whose identical bytes were re-sent is waited for. It returns a line per
// transaction for the log.
func (e *Engine) Reconcile(ctx context.Context) ([]string, error) {
	if e.recErr != nil {
		return nil, nil
	}
	w, err := e.state()
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, t := range w.txs {
		if !t.broadcast() && t.end == "" && t.inFlight(e.now(), e.bounds.Confirm) {
			continue // another process is broadcasting it right now
		}
		line, done := e.resolve(ctx, t)
		// A start often races a busy node: a lookup that failed is tried
		// again a few times before the transaction is left to the next
		// confirm's follow-up.
		for try := 0; !done && t.end == "" && !t.broadcast() && try < 3; try++ {
			select {
			case <-ctx.Done():
				return lines, ctx.Err()
			case <-time.After(time.Second):
			}
			line, done = e.resolve(ctx, t)
		}
		if t.end == "" {
			nonce := t.Nonce
			info := e.chain.WaitOwn(ctx, t.hash, t.from, e.receiptTimeout, func(i *chain.TxInfo) bool { return i.Mined && notOurs(i, e, nonce) == "" })
			if info.Mined && notOurs(info, e, t.Nonce) == "" {
				if err := e.journalReceipt(ctx, t, info); err != nil {
					line += fmt.Sprintf("; included in block %d, but its receipt could not be journaled (%s)", info.Block, Inert(err.Error(), 200))
				} else {
					line += fmt.Sprintf("; included in block %d", info.Block)
				}
			}
		}
		lines = append(lines, line)
	}
	return lines, nil
}
