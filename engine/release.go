package engine

// Where a reservation ends. Rules of this file:
//
//   - Every settlement, release and correction of a reservation is decided
//     and appended inside one locked Update of the records, from the live
//     state that Update holds (records.EndReservation): never from a copy
//     read before the lock, and never twice. A second end of the same
//     reservation appends nothing; the in-memory reservation, if this
//     process holds one, takes what was recorded (caps.Reservation.Adopt).
//   - A reservation held by a live run of this process (from its reserve
//     to its answer) is ended by that run alone: a follow-up or a sweep
//     from another confirm, session or start-up never releases it.
//   - A transaction ends (dropped, refused-final) in the same Update that
//     checks it is still pending; its reservation is released there once
//     every transaction signed under it has ended.
//   - An error of any of these writes is returned: nothing is released on
//     a failed write, so what stays counted is the larger amount.

import (
	"strings"
	"sync"
	"time"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/journal/records"
)

// holdKey names a reservation in one process: its records and its id.
type holdKey struct {
	rec Recorder
	id  string
}

// Process-wide: the reservations held by a live run (a confirm between its
// reserve and its answer), and the in-memory reservations of single-leg
// confirms that answered pending, kept to be settled when their receipt
// turns up (by any session of this process). Every Engine on the same
// records in this process shares them (service mode: a session each).
var (
	holds = struct {
		sync.Mutex
		n map[holdKey]int // how many live runs hold each
	}{n: map[holdKey]int{}}
	pendingRes sync.Map // holdKey → *caps.Reservation
)

// hold marks reservation id as held by a live run until the returned
// function is called.
func (e *Engine) hold(id string) func() {
	if id == "" {
		return func() {}
	}
	k := holdKey{e.rec, id}
	holds.Lock()
	holds.n[k]++
	holds.Unlock()
	return func() {
		holds.Lock()
		defer holds.Unlock()
		if holds.n[k]--; holds.n[k] <= 0 {
			delete(holds.n, k)
		}
	}
}

// held reports whether a live run of this process holds reservation id.
func (e *Engine) held(id string) bool {
	holds.Lock()
	defer holds.Unlock()
	return holds.n[holdKey{e.rec, id}] > 0
}

// keepPending keeps res, a single-leg confirm's reservation that answered
// pending, for whichever session of this process sees its receipt.
func (e *Engine) keepPending(res *caps.Reservation) {
	if res.ID() != "" {
		pendingRes.Store(holdKey{e.rec, res.ID()}, res)
	}
}

// takePending returns (and forgets) the kept reservation id, if any.
func (e *Engine) takePending(id string) (*caps.Reservation, bool) {
	v, ok := pendingRes.LoadAndDelete(holdKey{e.rec, id})
	if !ok {
		return nil, false
	}
	return v.(*caps.Reservation), true
}

// adopt gives a correction the records hold for reservation id to this
// process's in-memory reservation of it, if it keeps one: its session
// window then counts what the records count.
func (e *Engine) adopt(id string, recorded map[string]string) {
	if recorded == nil {
		return
	}
	res, ok := e.takePending(id)
	if !ok {
		return
	}
	s, err := DecodeSpend(recorded)
	if err != nil {
		e.keepPending(res) // stays counted in the session window: the larger amount
		return
	}
	res.Adopt(s)
}

// adoptEnded gives every kept pending reservation of this process that the
// records show ended (another process or session settled or released it)
// its recorded correction. It runs with every follow-up, outside the
// records' lock (the ledger's lock is always taken first).
func (e *Engine) adoptEnded() {
	var ids []string
	pendingRes.Range(func(k, _ any) bool {
		if hk := k.(holdKey); hk.rec == e.rec {
			ids = append(ids, hk.id)
		}
		return true
	})
	if len(ids) == 0 {
		return
	}
	ended := map[string]map[string]string{}
	if err := e.rec.View(func(live *records.Live) error {
		for _, id := range ids {
			if done, ok := live.Corrected(id); ok {
				ended[id] = done
			}
		}
		return nil
	}); err != nil {
		return
	}
	for id, done := range ended {
		e.adopt(id, done)
	}
}

// Correct is the caps.DayStore's one release path: the correction that
// ends reservation id, decided under the records' lock.
func (d *store) Correct(id string, at time.Time, change caps.Spend) (caps.Spend, error) {
	var recorded caps.Spend
	err := d.rec.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
		got, _, err := records.EndReservation(live, appendRecord, id, at, EncodeSpend(change), "")
		if err != nil {
			return err
		}
		recorded, err = DecodeSpend(got)
		return err
	})
	return recorded, err
}

// endTx journals the proven end of pending transaction tx (kind
// KindDropped or KindRefusedFinal, with why), and, in the same locked step,
// releases its reservation once every transaction signed under it has
// ended — unless a live run of this process holds it (that run ends it).
// A transaction no longer pending (another process or session ended it,
// or its receipt was journaled) is left as it is: ended is false then.
func (e *Engine) endTx(tx string, nonce uint64, kind, why string) (ended bool, err error) {
	if e.recErr != nil {
		return false, e.recErr
	}
	var released map[string]map[string]string
	err = e.rec.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
		for _, p := range live.Pending {
			if p.Signed.Tx == tx {
				ended = true
				var err error
				released, err = e.endLocked(live, appendRecord, p.Signed, kind, why)
				return err
			}
		}
		return nil
	})
	e.adoptAll(released)
	return ended, err
}

// endLocked journals the end of pending transaction s inside an update and
// releases its reservation there once every transaction signed under it has
// ended, unless a live run of this process holds it. It returns the
// release, by reservation id, for adopt.
func (e *Engine) endLocked(live *records.Live, appendRecord records.AppendFunc, s records.Signed, kind, why string) (map[string]map[string]string, error) {
	if _, err := appendRecord(kind, EndRecord{V: records.Version, Tx: s.Tx, Nonce: s.Nonce, Reason: why}); err != nil {
		return nil, err
	}
	id := s.Reservation
	if id == "" || e.held(id) || live.EndedPer[id] < live.SignedPer[id] {
		return nil, nil
	}
	rec, _, err := records.ReleaseReservation(live, appendRecord, id, "")
	if err != nil || rec == nil {
		return nil, err
	}
	return map[string]map[string]string{id: rec}, nil
}

// appendReceiptLocked journals mined's receipt inside an update and ends,
// in the same step, every other pending transaction of its sender at its
// nonce: mined was included there, so they never can be (its hash is the
// evidence). It returns their releases, by reservation id, for adopt.
func (e *Engine) appendReceiptLocked(live *records.Live, appendRecord records.AppendFunc, r ReceiptRecord) (map[string]map[string]string, error) {
	var mined *records.Signed
	for _, p := range live.Pending {
		if p.Signed.Tx == r.Tx {
			s := p.Signed
			mined = &s
		}
	}
	if mined == nil {
		return nil, nil // journaled already (another session or process)
	}
	if _, err := appendRecord(KindReceipt, r); err != nil {
		return nil, err
	}
	var others []records.Signed
	for _, p := range live.Pending {
		if p.Signed.Tx != mined.Tx && p.Signed.Nonce == mined.Nonce && strings.EqualFold(p.Signed.From, mined.From) {
			others = append(others, p.Signed)
		}
	}
	released := map[string]map[string]string{}
	for _, o := range others {
		rel, err := e.endLocked(live, appendRecord, o, KindDropped, "its nonce was used by "+mined.Tx+", whose receipt is journaled")
		if err != nil {
			return released, err
		}
		for id, c := range rel {
			released[id] = c
		}
	}
	return released, nil
}

// adoptAll adopts each release.
func (e *Engine) adoptAll(released map[string]map[string]string) {
	for id, c := range released {
		e.adopt(id, c)
	}
}

// unrecordedWhy is how an outcome says what the journal could not record.
func unrecordedWhy(what string, err error) string {
	return what + " (" + Inert(err.Error(), 200) + ")"
}
