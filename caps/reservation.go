package caps

import (
	"math/big"
	"time"
)

// Reservation is spend that Ledger.Reserve recorded before a transaction is
// sent. It stays counted, in full, until Settle or Release is called; a
// reservation whose outcome is never learned is never returned. Only the
// first Settle or Release has an effect: later calls, of either, are no-ops.
// It is safe for concurrent use. A nil *Reservation's methods do nothing.
type Reservation struct {
	l     *Ledger
	at    time.Time // when it was reserved; the PerDay window dates it so
	spend Spend     // what was reserved; positive amounts only
	done  bool      // guarded by l.mu
	id    string    // its id in the Ledger's DayStore, if any
}

// Settle replaces the reserved amounts with what was actually spent, such as
// the fee from a receipt: a reverted transaction still spent its fee, so its
// actual spend is the ETH fee and no token. An asset absent from actual, or
// with a zero or nil amount, is settled to zero. An amount above what was
// reserved is recorded as given, even past a cap (the spend happened; it
// should not). A negative amount is a caller bug, and that asset keeps its
// reserved amount. The spend keeps the moment it was reserved in the PerDay
// window.
func (r *Reservation) Settle(actual Spend) {
	if r == nil || r.l == nil {
		return
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if r.done {
		return
	}
	r.done = true
	delta := make(Spend, len(r.spend)+len(actual))
	for a, v := range r.spend {
		delta[a] = new(big.Int).Neg(v)
	}
	for a, v := range actual {
		switch {
		case v == nil || v.Sign() == 0:
			// settled to zero: the negated reservation stands
		case v.Sign() < 0:
			delete(delta, a) // fail closed: keep what was reserved
		default:
			d, ok := delta[a]
			if !ok {
				d = new(big.Int)
				delta[a] = d
			}
			d.Add(d, v)
		}
	}
	r.l.correctLocked(r, delta)
	r.spend = nil
}

// correctLocked records a settlement or release of r: in memory, or in the
// store and the session. If the store cannot record it, the reservation stays
// counted there in full, which errs on the side of less spending.
func (l *Ledger) correctLocked(r *Reservation, delta Spend) {
	if l.store == nil {
		l.recordLocked(r.at, delta)
		return
	}
	for a, v := range delta {
		if v.Sign() == 0 {
			delete(delta, a)
		}
	}
	addSpend(l.session, copySpend(delta), 1)
	_ = l.store.Correct(r.id, r.at, delta)
}

// Release returns everything reserved, for when nothing was broadcast. Call
// it only when the transaction certainly never left the process; if its fate
// is unknown, leave the reservation counted (or Settle it later).
func (r *Reservation) Release() {
	if r == nil || r.l == nil {
		return
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if r.done {
		return
	}
	r.done = true
	delta := make(Spend, len(r.spend))
	for a, v := range r.spend {
		delta[a] = new(big.Int).Neg(v)
	}
	r.l.correctLocked(r, delta)
	r.spend = nil
}

// Spend is what r reserved, a copy.
func (r *Reservation) Spend() Spend {
	out := Spend{}
	if r == nil || r.l == nil {
		return out
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	for a, v := range r.spend {
		out[a] = new(big.Int).Set(v)
	}
	return out
}

// ID is the reservation's id in the Ledger's DayStore ("" without one).
func (r *Reservation) ID() string {
	if r == nil {
		return ""
	}
	return r.id
}
