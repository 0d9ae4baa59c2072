package journal

// The live state: what walletgate needs of its history, folded record by
// record, and what a checkpoint holds. Rules of this file:
//
//   - Folding all history from seq 1, or restoring a checkpoint and folding
//     what follows it, gives the same Live (audit verify checks this at every
//     checkpoint).
//   - It only forgets what cannot matter: cap changes dated more than
//     dayKeep before the newest record (the per-day window is 24 h; the
//     margin absorbs clock steps), dropped only when a snapshot is taken, so
//     that the result depends on the records alone.
//   - It fails closed: a record it cannot read is an error, and the journal
//     that folds it refuses writes.

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// dayKeep is how long the live state keeps a cap change: twice the 24 h
// window, so that a clock that stepped back (up to a day) frees no spend.
const dayKeep = 48 * time.Hour

// Live is the state folded from a journal's records. Its zero value is an
// empty journal's state. It is not safe for concurrent use: a Journal
// guards the one it holds, and hands it out only under its lock (Update,
// View).
type Live struct {
	// Caps are the cap reservations and corrections in (at least) the last
	// dayKeep, oldest first.
	Caps []CapEntry `json:"caps"`
	// Pending are the signed transactions without a receipt or a drop
	// record, oldest first.
	Pending []PendingTx `json:"pending"`
	// Reservations are the cap reservations with no signed transaction and
	// no correction after them, oldest first.
	Reservations []OpenReservation `json:"reservations"`
	// Sessions are the sessions that started and have not ended: session id
	// → its process id.
	Sessions map[string]int `json:"sessions"`
	// Latest is the time of the newest record folded.
	Latest time.Time `json:"latest"`
}

// CapEntry is a cap_reserve or cap_correct record in the day window.
type CapEntry struct {
	Seq    uint64            `json:"seq"`
	Kind   string            `json:"kind"`
	ID     string            `json:"id"`
	At     time.Time         `json:"at"`
	Change map[string]string `json:"change"`
}

// PendingTx is a signed transaction whose outcome is not journaled yet.
type PendingTx struct {
	Seq    uint64 `json:"seq"`
	Signed Signed `json:"signed"`
}

// OpenReservation is a reservation no signed transaction or correction
// followed (yet).
type OpenReservation struct {
	Seq     uint64            `json:"seq"`
	ID      string            `json:"id"`
	At      time.Time         `json:"at"`
	Change  map[string]string `json:"change"`
	Session string            `json:"session"`
	PID     int               `json:"pid"`
}

// Apply folds one record into l. Checkpoints are not folded (they restate
// what was folded before them), nor are kinds that carry no live state.
func (l *Live) Apply(r Record) error {
	if r.Time.After(l.Latest) {
		l.Latest = r.Time
	}
	switch r.Kind {
	case KindCapReserve, KindCapCorrect:
		var c CapChange
		if err := DecodeInto(r, &c); err != nil {
			return err
		}
		l.Caps = append(l.Caps, CapEntry{Seq: r.Seq, Kind: r.Kind, ID: c.ID, At: c.At, Change: c.Change})
		if r.Kind == KindCapReserve {
			l.Reservations = append(l.Reservations, OpenReservation{Seq: r.Seq, ID: c.ID, At: c.At, Change: c.Change, Session: r.Session, PID: r.PID})
		} else {
			l.closeReservation(c.ID)
		}
	case KindSigned:
		var s Signed
		if err := DecodeInto(r, &s); err != nil {
			return err
		}
		l.Pending = append(l.Pending, PendingTx{Seq: r.Seq, Signed: s})
		l.closeReservation(s.Reservation)
	case KindReceipt, KindDropped:
		var d struct {
			Tx string `json:"tx"`
		}
		if err := DecodeInto(r, &d); err != nil {
			return err
		}
		out := l.Pending[:0]
		for _, p := range l.Pending {
			if p.Signed.Tx != d.Tx {
				out = append(out, p)
			}
		}
		clear(l.Pending[len(out):])
		l.Pending = out
	case KindSessionStart:
		if l.Sessions == nil {
			l.Sessions = map[string]int{}
		}
		l.Sessions[r.Session] = r.PID
	case KindSessionEnd:
		delete(l.Sessions, r.Session)
	}
	return nil
}

func (l *Live) closeReservation(id string) {
	if id == "" {
		return
	}
	for i, o := range l.Reservations {
		if o.ID == id {
			l.Reservations = append(l.Reservations[:i], l.Reservations[i+1:]...)
			return
		}
	}
}

// prune forgets the cap changes that no day window can reach.
func (l *Live) prune() {
	cut := l.Latest.Add(-dayKeep)
	out := l.Caps[:0]
	for _, c := range l.Caps {
		if !c.At.Before(cut) {
			out = append(out, c)
		}
	}
	clear(l.Caps[len(out):])
	l.Caps = out
}

// Snapshot prunes l and returns it as a checkpoint's state.
func (l *Live) Snapshot() (json.RawMessage, error) {
	l.prune()
	sort.SliceStable(l.Caps, func(i, j int) bool { return l.Caps[i].Seq < l.Caps[j].Seq })
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("journal: checkpoint: %w", err)
	}
	return b, nil
}

// restore replaces l with a checkpoint's state.
func (l *Live) restore(raw json.RawMessage) error {
	var n Live
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("checkpoint state: %w", err)
	}
	*l = n
	return nil
}
