package records

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
	// Allocs are the nonces taken by reservations and not yet signed with
	// or given back, oldest first.
	Allocs []Alloc `json:"allocs,omitempty"`
	// NextMined is one past the highest nonce of a transaction with a
	// receipt (0: none): every nonce below it is used for good.
	NextMined uint64 `json:"next_mined,omitempty"`
	// SignedPer and EndedPer count, per reservation in the cap window, the
	// transactions signed under it and those shown never to be included
	// (dropped, refused-final): when they are equal, nothing it reserved can
	// still move, and recovery may release it.
	SignedPer map[string]int `json:"signed_per,omitempty"`
	EndedPer  map[string]int `json:"ended_per,omitempty"`
	// Signatures are the typed-data signatures of known kinds whose
	// reservation has not ended (used on chain, or expired unused).
	Signatures []Signature `json:"signatures,omitempty"`

	// seq is the last record folded (or the checkpoint restored); legacy
	// says the state was restored from an unversioned checkpoint, which
	// may lack what the oldest format did not keep (stateformat.go).
	seq    uint64
	legacy bool
}

// Alloc is a nonce a reservation took.
type Alloc struct {
	Reservation string    `json:"reservation"`
	Nonce       uint64    `json:"nonce"`
	At          time.Time `json:"at"`
}

// CapEntry is a cap_reserve or cap_correct record in the day window.
type CapEntry struct {
	Seq    uint64            `json:"seq"`
	Kind   string            `json:"kind"`
	ID     string            `json:"id"`
	At     time.Time         `json:"at"`
	Change map[string]string `json:"change"`
	By     string            `json:"by,omitempty"` // a reservation's CapChange.By
}

// PendingTx is a signed transaction whose outcome is not journaled yet.
type PendingTx struct {
	Seq    uint64 `json:"seq"`
	Signed Signed `json:"signed"`
	// At and PID are when and by which process it was signed.
	At  time.Time `json:"at"`
	PID int       `json:"pid"`
	// Broadcasts are the outcomes of its journaled broadcast attempts.
	Broadcasts []string `json:"broadcasts,omitempty"`
	// Abandoned: signed, never broadcast, never will be; kept until its
	// nonce is used by another transaction.
	Abandoned bool `json:"abandoned,omitempty"`
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
	l.seq = r.Seq
	if r.Time.After(l.Latest) {
		l.Latest = r.Time
	}
	switch r.Kind {
	case KindCapReserve, KindCapCorrect:
		var c CapChange
		if err := DecodeInto(r, &c); err != nil {
			return err
		}
		l.Caps = append(l.Caps, CapEntry{Seq: r.Seq, Kind: r.Kind, ID: c.ID, At: c.At, Change: c.Change, By: c.By})
		if r.Kind == KindCapReserve {
			l.Reservations = append(l.Reservations, OpenReservation{Seq: r.Seq, ID: c.ID, At: c.At, Change: c.Change, Session: r.Session, PID: r.PID})
			if c.Nonce != nil {
				l.Allocs = append(l.Allocs, Alloc{Reservation: c.ID, Nonce: *c.Nonce, At: c.At})
			}
		} else {
			l.closeReservation(c.ID)
		}
	case KindSigned:
		var s Signed
		if err := DecodeInto(r, &s); err != nil {
			return err
		}
		l.Pending = append(l.Pending, PendingTx{Seq: r.Seq, Signed: s, At: r.Time, PID: r.PID})
		if s.Reservation != "" {
			if l.SignedPer == nil {
				l.SignedPer = map[string]int{}
			}
			l.SignedPer[s.Reservation]++
		}
		l.closeReservation(s.Reservation)
		l.freeAlloc(s.Reservation, s.Nonce)
	case KindNonce, KindNonceFree:
		var n Nonce
		if err := DecodeInto(r, &n); err != nil {
			return err
		}
		if r.Kind == KindNonce {
			l.Allocs = append(l.Allocs, Alloc{Reservation: n.Reservation, Nonce: n.Nonce, At: n.At})
		} else {
			l.freeAlloc(n.Reservation, n.Nonce)
		}
	case KindSignature:
		var s Signature
		if err := DecodeInto(r, &s); err != nil {
			return err
		}
		// A signature takes no nonce and is no transaction: it closes its
		// reservation as a signed transaction would.
		l.closeReservation(s.Reservation)
		if s.Kind != SignatureUnknown {
			l.Signatures = append(l.Signatures, s)
		}
	case KindSignatureEnd:
		var e SignatureEnd
		if err := DecodeInto(r, &e); err != nil {
			return err
		}
		out := l.Signatures[:0]
		for _, s := range l.Signatures {
			if s.Digest != e.Digest {
				out = append(out, s)
			}
		}
		clear(l.Signatures[len(out):])
		l.Signatures = out
	case KindBroadcast:
		var b Broadcast
		if err := DecodeInto(r, &b); err != nil {
			return err
		}
		for i := range l.Pending {
			if l.Pending[i].Signed.Tx == b.Tx {
				l.Pending[i].Broadcasts = append(l.Pending[i].Broadcasts, b.Outcome)
			}
		}
	case KindAbandoned:
		var d Dropped
		if err := DecodeInto(r, &d); err != nil {
			return err
		}
		for i := range l.Pending {
			if l.Pending[i].Signed.Tx == d.Tx {
				l.Pending[i].Abandoned = true
			}
		}
	case KindReceipt, KindDropped, KindRefusedFinal:
		var d struct {
			Tx string `json:"tx"`
		}
		if err := DecodeInto(r, &d); err != nil {
			return err
		}
		out := l.Pending[:0]
		for _, p := range l.Pending {
			switch {
			case p.Signed.Tx != d.Tx:
				out = append(out, p)
			case r.Kind == KindReceipt:
				l.NextMined = max(l.NextMined, p.Signed.Nonce+1)
			case p.Signed.Reservation != "":
				if l.EndedPer == nil {
					l.EndedPer = map[string]int{}
				}
				l.EndedPer[p.Signed.Reservation]++
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

// freeAlloc forgets reservation id's allocation of nonce.
func (l *Live) freeAlloc(id string, nonce uint64) {
	for i, a := range l.Allocs {
		if a.Reservation == id && a.Nonce == nonce {
			l.Allocs = append(l.Allocs[:i], l.Allocs[i+1:]...)
			return
		}
	}
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
	// An allocation nobody signed with for that long belonged to a process
	// that died; it holds no nonce any more (engine bound: a minute).
	allocs := l.Allocs[:0]
	for _, a := range l.Allocs {
		if !a.At.Before(cut) {
			allocs = append(allocs, a)
		}
	}
	clear(l.Allocs[len(allocs):])
	l.Allocs = allocs
	inWindow := map[string]bool{}
	for _, c := range l.Caps {
		inWindow[c.ID] = true
	}
	for id := range l.SignedPer {
		if !inWindow[id] {
			delete(l.SignedPer, id)
		}
	}
	for id := range l.EndedPer {
		if !inWindow[id] {
			delete(l.EndedPer, id)
		}
	}
}

// Snapshot prunes l and returns it as a checkpoint's state, with its
// format (StateVersion) as "v".
func (l *Live) Snapshot() (json.RawMessage, error) {
	l.compact()
	b, err := json.Marshal(versionedState{V: StateVersion, Live: *l})
	if err != nil {
		return nil, fmt.Errorf("journal: checkpoint: %w", err)
	}
	return b, nil
}

// compact prunes l and orders its cap changes as a snapshot holds them.
func (l *Live) compact() {
	l.prune()
	sort.SliceStable(l.Caps, func(i, j int) bool { return l.Caps[i].Seq < l.Caps[j].Seq })
}

// Seq is the seq of the last record folded into l, or of the checkpoint it
// was restored from (0: none).
func (l *Live) Seq() uint64 { return l.seq }

// Legacy says l was restored from an unversioned checkpoint, which may
// lack what the oldest format did not keep (stateformat.go): its journal
// folds the whole history again.
func (l *Live) Legacy() bool { return l.legacy }

// Compact prunes l and orders its cap changes as a snapshot holds them.
func (l *Live) Compact() { l.compact() }

// KeepPast is l going on past the unversioned checkpoint seq that
// follows what l folded: l keeps its own fold, compacted as that
// checkpoint's writer compacted it, and seq counts as folded.
func (l *Live) KeepPast(seq uint64) {
	l.compact()
	l.seq = seq
}

// Restore replaces l with the state of checkpoint seq (a Snapshot, of this
// format or an earlier one).
func (l *Live) Restore(raw json.RawMessage, seq uint64) error { return l.restore(raw, seq) }

// ReadState decodes a state Snapshot returned, stored elsewhere (pgstate
// keeps one in its database). A format above StateVersion is refused: this
// code would drop what it does not know of it.
func ReadState(raw json.RawMessage) (Live, error) {
	var l Live
	err := l.restore(raw, 0)
	l.legacy = false
	return l, err
}

// restore replaces l with the state of checkpoint seq.
func (l *Live) restore(raw json.RawMessage, seq uint64) error {
	version, err := StateFormat(raw)
	if err != nil {
		return err
	}
	var n versionedState
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("checkpoint state: %w", err)
	}
	*l = n.Live
	l.seq, l.legacy = seq, version == 0
	return nil
}
