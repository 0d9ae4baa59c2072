package caps

// The rolling-day record. It is the one seam through which per-day accounting
// flows, so that it can later be persisted through a journal without touching
// the ledger: add records a signed change of spend at a moment, and sumSince
// sums what was recorded at or after a cutoff. It does no I/O and is not safe
// for concurrent use; the Ledger's lock guards it.
//
// A reservation adds its amounts at the moment it was made. Settling or
// releasing it adds the difference (actual - reserved, or -reserved) at that
// same moment, so an entry and its corrections always sit on the same side of
// any cutoff and a sum never goes below zero.

import (
	"math/big"
	"slices"
	"sort"
	"time"
)

// dayLog is the zero-value-ready record of spends for the PerDay window.
type dayLog struct {
	// entries are sorted by at, oldest first; entries with equal at keep
	// the order they were added in.
	entries []dayEntry
	// total is the sum of entries per asset; assets whose sum is zero are
	// absent.
	total Spend
}

// dayEntry is one signed change of spend at a moment.
type dayEntry struct {
	at    time.Time
	spend Spend
}

// add records the change s (amounts may be negative; zero amounts are
// skipped) at the moment at. The log keeps s; the caller must not modify it
// afterwards.
func (d *dayLog) add(at time.Time, s Spend) {
	if len(s) == 0 {
		return
	}
	i := sort.Search(len(d.entries), func(i int) bool { return d.entries[i].at.After(at) })
	d.entries = slices.Insert(d.entries, i, dayEntry{at: at, spend: s})
	if d.total == nil {
		d.total = make(Spend)
	}
	addSpend(d.total, s, 1)
}

// sumSince returns, per asset, the sum of what was recorded at or after
// cutoff. It forgets entries older than cutoff, so cutoffs are expected not to
// go backwards: a clock that jumps back does not bring forgotten spends back.
// (Times from time.Now carry a monotonic reading, so they never compare as
// going backwards within a process.) The result is the log's own map: read it
// only, and only until the next add or sumSince.
func (d *dayLog) sumSince(cutoff time.Time) Spend {
	n := 0
	for n < len(d.entries) && d.entries[n].at.Before(cutoff) {
		addSpend(d.total, d.entries[n].spend, -1)
		n++
	}
	if n > 0 {
		clear(d.entries[:n]) // let the forgotten spends be collected
		d.entries = d.entries[n:]
	}
	return d.total
}

// addSpend adds sign × s to dst in place, deleting assets whose sum becomes
// zero. sign is 1 or -1.
func addSpend(dst, s Spend, sign int) {
	for a, v := range s {
		sum, ok := dst[a]
		if !ok {
			sum = new(big.Int)
			dst[a] = sum
		}
		if sign < 0 {
			sum.Sub(sum, v)
		} else {
			sum.Add(sum, v)
		}
		if sum.Sign() == 0 {
			delete(dst, a)
		}
	}
}
