package engine

// The wallet's state as the records show it: the per-day cap window, the
// nonces taken, and the signed transactions with what became of them. Every
// process on a state directory derives the same state from the same records,
// under the journal's lock when it is about to change it.

import (
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/journal"
)

// txState is one signed transaction and what the records say became of it.
type txState struct {
	SignedRecord
	hash       common.Hash
	from       common.Address
	at         time.Time // when it was signed
	pid        int       // the signing process
	broadcasts []string  // each attempt's outcome, in order
	end        string    // "", KindReceipt, KindRefusedFinal, KindAbandoned or KindDropped
}

// inFlight reports whether its signing process may be broadcasting it right
// now: signed within bound, by a process that is still there.
func (t *txState) inFlight(now time.Time, bound time.Duration) bool {
	return now.Sub(t.at) < bound && processAlive(t.pid)
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

// raw is its signed bytes.
func (t *txState) raw() ([]byte, error) { return hexutil.Decode(t.Raw) }

// allocation is a nonce taken by a reservation.
type allocation struct {
	reservation string
	nonce       uint64
	at          time.Time
	freed       bool
}

// walletState is what the records say.
type walletState struct {
	txs      []*txState
	byHash   map[common.Hash]*txState
	allocs   []*allocation
	reserves map[string]caps.Spend // net recorded change per reservation id
	reserved map[string]time.Time  // when each reservation was made
}

func readState(records []journal.Record) (*walletState, error) {
	w := &walletState{byHash: map[common.Hash]*txState{}, reserves: map[string]caps.Spend{}, reserved: map[string]time.Time{}}
	for _, r := range records {
		switch r.Kind {
		case KindCapReserve, KindCapCorrect:
			var c CapRecord
			if err := Decode(r, &c); err != nil {
				return nil, err
			}
			s, err := DecodeSpend(c.Change)
			if err != nil {
				return nil, fmt.Errorf("journal record %d: %w", r.Seq, err)
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
			if r.Kind == KindCapReserve {
				w.reserved[c.ID] = c.At
				if c.Nonce != nil {
					w.allocs = append(w.allocs, &allocation{reservation: c.ID, nonce: *c.Nonce, at: c.At})
				}
			}
		case KindNonce, KindNonceFree:
			var n NonceRecord
			if err := Decode(r, &n); err != nil {
				return nil, err
			}
			if r.Kind == KindNonce {
				w.allocs = append(w.allocs, &allocation{reservation: n.Reservation, nonce: n.Nonce, at: n.At})
				continue
			}
			for _, a := range w.allocs {
				if a.reservation == n.Reservation && a.nonce == n.Nonce {
					a.freed = true
				}
			}
		case KindSigned:
			var s SignedRecord
			if err := Decode(r, &s); err != nil {
				return nil, err
			}
			if !common.IsHexAddress(s.From) || len(s.Tx) != 66 {
				return nil, fmt.Errorf("journal record %d: malformed signed transaction", r.Seq)
			}
			t := &txState{SignedRecord: s, hash: common.HexToHash(s.Tx), from: common.HexToAddress(s.From), at: r.Time, pid: r.PID}
			w.txs = append(w.txs, t)
			w.byHash[t.hash] = t
		case KindBroadcast:
			var b BroadcastRecord
			if err := Decode(r, &b); err != nil {
				return nil, err
			}
			if t := w.byHash[common.HexToHash(b.Tx)]; t != nil {
				t.broadcasts = append(t.broadcasts, b.Outcome)
			}
		case KindReceipt, KindRefusedFinal, KindAbandoned, KindDropped:
			var e EndRecord // a receipt's tx field decodes the same way
			if err := Decode(r, &e); err != nil {
				return nil, err
			}
			if t := w.byHash[common.HexToHash(e.Tx)]; t != nil {
				// A receipt found later wins over an earlier guess.
				if t.end == "" || r.Kind == KindReceipt {
					t.end = r.Kind
				}
			}
		}
	}
	return w, nil
}

// open lists the signed transactions whose outcome is not final.
func (w *walletState) open() []*txState {
	var out []*txState
	for _, t := range w.txs {
		if t.end == "" {
			out = append(out, t)
		}
	}
	return out
}

// nextNonce is the lowest nonce at or above chainNonce that no live
// transaction or allocation holds. Live: every signed transaction not shown
// never to be included (a mined one's nonce is taken for good, even when a
// lagging node's count does not show it yet), and every allocation not yet
// signed with, given back, or older than bound (its process died before
// signing; a live process never signs past bound).
func (w *walletState) nextNonce(chainNonce uint64, now time.Time, bound time.Duration) uint64 {
	held := map[uint64]bool{}
	signed := map[string]map[uint64]bool{}
	for _, t := range w.txs {
		if signed[t.Reservation] == nil {
			signed[t.Reservation] = map[uint64]bool{}
		}
		signed[t.Reservation][t.Nonce] = true
		switch t.end {
		case KindRefusedFinal, KindAbandoned, KindDropped:
		default:
			held[t.Nonce] = true
		}
	}
	for _, a := range w.allocs {
		if a.freed || signed[a.reservation][a.nonce] || now.Sub(a.at) > bound {
			continue
		}
		held[a.nonce] = true
	}
	n := chainNonce
	for held[n] {
		n++
	}
	return n
}

// daySum sums every cap change dated at or after since.
func daySum(records []journal.Record, since time.Time) (caps.Spend, error) {
	total := make(caps.Spend)
	for _, r := range records {
		if r.Kind != KindCapReserve && r.Kind != KindCapCorrect {
			continue
		}
		var c CapRecord
		if err := Decode(r, &c); err != nil {
			return nil, err
		}
		if c.At.Before(since) {
			continue
		}
		s, err := DecodeSpend(c.Change)
		if err != nil {
			return nil, fmt.Errorf("journal record %d: %w", r.Seq, err)
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
