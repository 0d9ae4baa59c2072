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
// window. An error says the store could not record it: see correctLocked.
func (r *Reservation) Settle(actual Spend) error {
	if r == nil || r.l == nil {
		return nil
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if r.done {
		return nil
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
	err := r.l.correctLocked(r, delta)
	r.spend = nil
	return err
}

// correctLocked records a settlement or release of r: in memory, or in the
// store and the session. The session window takes what the store recorded
// as ending r, which is another process's or session's correction when one
// ended it first (the store's Correct is the one release path). If the store
// cannot record it, the store keeps the reservation counted in full, and the
// session keeps the larger of the reserved and the settled amount of each
// asset: never the smaller. The error is returned for the caller to say.
func (l *Ledger) correctLocked(r *Reservation, delta Spend) error {
	if l.store == nil {
		l.recordLocked(r.at, delta)
		return nil
	}
	for a, v := range delta {
		if v.Sign() == 0 {
			delete(delta, a)
		}
	}
	recorded, err := l.store.Correct(r.id, r.at, delta)
	if err != nil {
		up := Spend{}
		for a, v := range delta {
			if v.Sign() > 0 {
				up[a] = new(big.Int).Set(v)
			}
		}
		addSpend(l.session, up, 1)
		return &Error{Code: CodeNoLedger, Cause: err}
	}
	addSpend(l.session, copySpend(recorded), 1)
	return nil
}

// Adopt ends r with recorded, a correction that the store already holds
// (another session or process settled or released r): the session window
// takes it, and nothing is written. Later Settle, Release or Adopt calls
// are no-ops.
func (r *Reservation) Adopt(recorded Spend) {
	if r == nil || r.l == nil {
		return
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if r.done {
		return
	}
	r.done = true
	if r.l.store == nil {
		r.l.recordLocked(r.at, copySpend(recorded))
	} else {
		addSpend(r.l.session, copySpend(recorded), 1)
	}
	r.spend = nil
}

// Release returns everything reserved, for when nothing was broadcast. Call
// it only when the transaction certainly never left the process; if its fate
// is unknown, leave the reservation counted (or Settle it later). An error
// says the store could not record it: it stays counted there.
func (r *Reservation) Release() error {
	if r == nil || r.l == nil {
		return nil
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if r.done {
		return nil
	}
	r.done = true
	delta := make(Spend, len(r.spend))
	for a, v := range r.spend {
		delta[a] = new(big.Int).Neg(v)
	}
	err := r.l.correctLocked(r, delta)
	r.spend = nil
	return err
}

// At is when r was reserved: the date of its day-window entry and of the
// nonce taken with it.
func (r *Reservation) At() time.Time {
	if r == nil {
		return time.Time{}
	}
	return r.at
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
