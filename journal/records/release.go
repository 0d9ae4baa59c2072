package records

// The one way a reservation ends. Rules of this file:
//
//   - A reservation ends once. Its first cap_correct ends it; a later
//     EndReservation of the same id appends nothing and returns the change
//     that ended it, so a settlement, a release, a phantom's release and a
//     sweep racing each other (in one process or several) count it once.
//   - It is decided from the live state inside a locked update (a journal's
//     or a database's Update), never from a copy read before the lock.
//   - A correction is dated like its reservation, so that it leaves the
//     per-day window with it.

import (
	"fmt"
	"math/big"
	"time"
)

// Reserved returns reservation id's cap_reserve entry, while it is in the
// window the live state keeps.
func (l *Live) Reserved(id string) (CapEntry, bool) {
	if id == "" {
		return CapEntry{}, false
	}
	for _, c := range l.Caps {
		if c.ID == id && c.Kind == KindCapReserve {
			return c, true
		}
	}
	return CapEntry{}, false
}

// Corrected returns the change of the cap_correct that ended reservation
// id, and whether one is in the window.
func (l *Live) Corrected(id string) (map[string]string, bool) {
	if id == "" {
		return nil, false
	}
	for _, c := range l.Caps {
		if c.ID == id && c.Kind == KindCapCorrect {
			return c.Change, true
		}
	}
	return nil, false
}

// EndReservation appends, with appendRecord, the cap_correct that ends
// reservation id with change (per asset, base units, as CapChange holds
// them), dated at (the reservation's date when at is zero), with Reason
// reason. When id has already ended it appends nothing, and returns the
// change that ended it with wrote false. Call it only inside an Update,
// with the live state that Update holds.
func EndReservation(live *Live, appendRecord AppendFunc, id string, at time.Time, change map[string]string, reason string) (recorded map[string]string, wrote bool, err error) {
	if id == "" {
		return nil, false, fmt.Errorf("records: a correction without a reservation id")
	}
	if done, ok := live.Corrected(id); ok {
		return done, false, nil
	}
	if at.IsZero() {
		r, ok := live.Reserved(id)
		if !ok {
			return nil, false, fmt.Errorf("records: reservation %s is not in the window, and the correction has no date", id)
		}
		at = r.At
	}
	if change == nil {
		change = map[string]string{}
	}
	if _, err := appendRecord(KindCapCorrect, CapChange{V: Version, ID: id, At: at.UTC(), Change: change, Reason: reason}); err != nil {
		return nil, false, err
	}
	return change, true, nil
}

// ReleaseReservation ends reservation id by giving back everything it
// recorded: the negation of its cap_reserve. It is EndReservation's release;
// a reservation no longer in the window has nothing left to give back, and
// is left as it is (wrote false, nothing recorded).
func ReleaseReservation(live *Live, appendRecord AppendFunc, id, reason string) (recorded map[string]string, wrote bool, err error) {
	if done, ok := live.Corrected(id); ok {
		return done, false, nil
	}
	r, ok := live.Reserved(id)
	if !ok {
		return nil, false, nil
	}
	neg, err := Negate(r.Change)
	if err != nil {
		return nil, false, fmt.Errorf("records: reservation %s: %w", id, err)
	}
	return EndReservation(live, appendRecord, id, r.At, neg, reason)
}

// Negate is change with every amount negated (zero amounts left out).
func Negate(change map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(change))
	for asset, v := range change {
		n, ok := new(big.Int).SetString(v, 10)
		if !ok {
			return nil, fmt.Errorf("bad amount %q of %s", v, asset)
		}
		if n.Sign() != 0 {
			out[asset] = n.Neg(n).String()
		}
	}
	return out, nil
}
