package engine

// The wallet's state as the journal's live state shows it: the per-day cap
// window, the nonces taken, and the signed transactions whose outcome is not
// final, with what the records say of them. Every process on a state
// directory derives the same state from the same records, under the
// journal's lock when it is about to change it.

import (
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/records"
)

// txState is one signed transaction whose outcome is not final.
type txState struct {
	SignedRecord
	hash       common.Hash
	from       common.Address
	at         time.Time // when it was signed
	pid        int       // the signing process
	broadcasts []string  // each journaled attempt's outcome, in order
	end        string    // "", or KindAbandoned; set by resolve as it ends it
}

// inFlight reports whether its signing process may be broadcasting it right
// now: signed within bound, by a process that is still there.
func (t *txState) inFlight(now time.Time, bound time.Duration) bool {
	return now.Sub(t.at) < bound && (t.pid == 0 || journal.ProcessAlive(t.pid))
}

// broadcast reports whether a broadcast of it was ever journaled: only then
// may its bytes be sent again.
func (t *txState) broadcast() bool { return len(t.broadcasts) > 0 }

// onlyRefused reports whether every journaled broadcast was refused.
func (t *txState) onlyRefused() bool {
	for _, o := range t.broadcasts {
		if o != OutcomeRefused {
			return false
		}
	}
	return len(t.broadcasts) > 0
}

// accepted reports whether the node ever accepted it.
func (t *txState) accepted() bool {
	for _, o := range t.broadcasts {
		if o == OutcomeAccepted {
			return true
		}
	}
	return false
}

// signedTx is its journaled signed bytes, checked to be transaction t.
func (t *txState) signedTx() (*types.Transaction, bool) {
	raw, err := hexutil.Decode(t.Raw)
	tx := new(types.Transaction)
	if err != nil || tx.UnmarshalBinary(raw) != nil || tx.Hash() != t.hash {
		return nil, false
	}
	return tx, true
}

// fillable reports whether its nonce will be used without walletgate
// signing anything else for it: the node accepted it, or its process may be
// broadcasting it right now. Only such a transaction lets a later one take
// the nonce after it (see nextNonce).
func (t *txState) fillable(now time.Time, bound time.Duration) bool {
	return t.accepted() || t.inFlight(now, bound)
}

// walletState is what the live state says, in the engine's terms.
type walletState struct {
	txs    []*txState // not final: pending and abandoned
	allocs []records.Alloc
	// reservedBy is the process of each reservation that no signed
	// transaction or correction followed yet: a nonce it took is free once
	// that process is gone (it died before signing).
	reservedBy map[string]int
	nextMined  uint64
}

func readState(live *records.Live) (*walletState, error) {
	w := &walletState{allocs: append([]records.Alloc(nil), live.Allocs...), nextMined: live.NextMined, reservedBy: map[string]int{}}
	for _, o := range live.Reservations {
		w.reservedBy[o.ID] = o.PID
	}
	// A cap change that cannot be read fails the state closed (the one
	// release path reads the reservations from the live state itself).
	for _, c := range live.Caps {
		if _, err := DecodeSpend(c.Change); err != nil {
			return nil, fmt.Errorf("journal record %d: %w", c.Seq, err)
		}
	}
	for _, p := range live.Pending {
		s := p.Signed
		if !common.IsHexAddress(s.From) || len(s.Tx) != 66 {
			return nil, fmt.Errorf("journal record %d: malformed signed transaction", p.Seq)
		}
		t := &txState{SignedRecord: s, hash: common.HexToHash(s.Tx), from: common.HexToAddress(s.From), at: p.At, pid: p.PID,
			broadcasts: append([]string(nil), p.Broadcasts...)}
		if p.Abandoned {
			t.end = KindAbandoned
		}
		w.txs = append(w.txs, t)
	}
	return w, nil
}

// open lists the signed transactions whose outcome is not known yet.
func (w *walletState) open() []*txState {
	var out []*txState
	for _, t := range w.txs {
		if t.end == "" {
			out = append(out, t)
		}
	}
	return out
}

// nextNonce is the lowest nonce at or above chainNonce (and above every
// mined transaction's: a lagging node's count may not show it yet) that no
// live transaction or allocation holds. Live: every signed transaction not
// ended, and every allocation not yet signed with or given back, younger than
// bound (a live process never signs past bound) and not of a reservation
// whose process is gone (it died before signing).
//
// It never leaves a gap the node cannot fill: a nonce it would skip must be
// held by an allocation (about to be signed) or by a fillable transaction.
// When one is held by a transaction that is neither — its bytes may still
// reach the node, so its nonce cannot be signed again, and a transaction
// after it would wait behind it unseen — that transaction is returned
// instead, and nothing may be signed.
func (w *walletState) nextNonce(chainNonce uint64, now time.Time, bound time.Duration) (uint64, *txState) {
	held := map[uint64]bool{}
	stuck := map[uint64]*txState{}
	for _, t := range w.txs {
		if t.end == "" {
			held[t.Nonce] = true
			if !t.fillable(now, bound) {
				stuck[t.Nonce] = t
			}
		}
	}
	allocated := map[uint64]bool{}
	for _, a := range w.allocs {
		if pid, open := w.reservedBy[a.Reservation]; open && !journal.ProcessAlive(pid) {
			continue // reserved by a process that died before signing
		}
		if now.Sub(a.At) <= bound {
			held[a.Nonce], allocated[a.Nonce] = true, true
		}
	}
	n := max(chainNonce, w.nextMined)
	for held[n] {
		if t := stuck[n]; t != nil && !allocated[n] {
			return n, t
		}
		n++
	}
	return n, nil
}

// daySum sums every cap change dated at or after since.
func daySum(live *records.Live, since time.Time) (caps.Spend, error) {
	total := make(caps.Spend)
	for _, c := range live.Caps {
		if c.At.Before(since) {
			continue
		}
		s, err := DecodeSpend(c.Change)
		if err != nil {
			return nil, fmt.Errorf("journal record %d: %w", c.Seq, err)
		}
		for a, v := range s {
			if cur, ok := total[a]; ok {
				cur.Add(cur, v)
			} else {
				total[a] = v
			}
		}
	}
	return total, nil
}
