// Package records holds walletgate's record kinds and the live state folded
// from them, the same for a journal file (journal) and for PostgreSQL
// (pgstate).
package records

import (
	"encoding/json"
	"time"
)

// Record is one line of the journal. Records read back are exactly what was
// written: Append returns the record as a later reader will decode it.
type Record struct {
	Seq     uint64          `json:"seq"`     // 1, 2, 3 … across all processes
	Time    time.Time       `json:"time"`    // UTC, RFC 3339 with nanoseconds
	PID     int             `json:"pid"`     // the writing process
	Session string          `json:"session"` // the writing process's session id
	Kind    string          `json:"kind"`    // what happened; never empty
	Data    json.RawMessage `json:"data,omitempty"`
	Prev    string          `json:"prev"` // hex SHA-256 of the previous line's bytes (without its newline); for seq 1, hex SHA-256 of "walletgate journal v1"
}

// AppendFunc appends a record inside an update of the live state (a
// journal's or a database's Update): the record is folded into the state the
// update holds as it is written.
type AppendFunc func(kind string, data any) (Record, error)

// FreeNonces appends, with appendRecord, a nonce_free record dated at for
// every nonce reservation id still holds in live: for a reservation shown to
// have signed nothing with them (a phantom's). appendRecord folds each record
// into live as it is written.
func FreeNonces(live *Live, appendRecord AppendFunc, id string, at time.Time) error {
	var held []Alloc
	for _, a := range live.Allocs {
		if a.Reservation == id {
			held = append(held, a)
		}
	}
	for _, a := range held {
		if _, err := appendRecord(KindNonceFree, Nonce{V: Version, Reservation: id, Nonce: a.Nonce, At: at}); err != nil {
			return err
		}
	}
	return nil
}
