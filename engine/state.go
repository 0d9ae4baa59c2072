package engine

// The wallet's state as the journal's live state shows it: the per-day cap
// window, the nonces taken, and the signed transactions whose outcome is not
// final, with what the records say of them. Every process on a state
// directory derives the same state from the same records, under the
// journal's lock when it is about to change it.

import (
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/journal"
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

// raw is its signed bytes.
func (t *txState) raw() ([]byte, error) { return hexutil.Decode(t.Raw) }

// walletState is what the live state says, in the engine's terms.
type walletState struct {
	txs       []*txState // not final: pending and abandoned
	allocs    []journal.Alloc
	nextMined uint64
	reserves  map[string]caps.Spend // net recorded change per reservation id in the window
	reserved  map[string]time.Time  // when each reservation was made
	signedPer map[string]int
	endedPer  map[string]int
}

func readState(live *journal.Live) (*walletState, error) {
	w := &walletState{allocs: append([]journal.Alloc(nil), live.Allocs...), nextMined: live.NextMined, reserves: map[string]caps.Spend{}, reserved: map[string]time.Time{},
		signedPer: map[string]int{}, endedPer: map[string]int{}}
	for k, v := range live.SignedPer {
		w.signedPer[k] = v
	}
	for k, v := range live.EndedPer {
		w.endedPer[k] = v
	}
	for _, c := range live.Caps {
		s, err := DecodeSpend(c.Change)
		if err != nil {
			return nil, fmt.Errorf("journal record %d: %w", c.Seq, err)
		}
		net := w.reserves[c.ID]
		if net == nil {
			net = caps.Spend{}
			w.reserves[c.ID] = net
		}
		for a, v := range s {
			if cur, ok := net[a]; ok {
				cur.Add(cur, v)
			} else {
				net[a] = new(big.Int).Set(v)
			}
		}
		if c.Kind == KindCapReserve {
			w.reserved[c.ID] = c.At
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
// ended, and every allocation not yet signed with, given back, or older than
// bound (its process died before signing; a live process never signs past
// bound).
func (w *walletState) nextNonce(chainNonce uint64, now time.Time, bound time.Duration) uint64 {
	held := map[uint64]bool{}
	for _, t := range w.txs {
		if t.end == "" {
			held[t.Nonce] = true
		}
	}
	for _, a := range w.allocs {
		if now.Sub(a.At) <= bound {
			held[a.Nonce] = true
		}
	}
	n := max(chainNonce, w.nextMined)
	for held[n] {
		n++
	}
	return n
}

// daySum sums every cap change dated at or after since.
func daySum(live *journal.Live, since time.Time) (caps.Spend, error) {
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
