package tools

// What walletgate writes to its journal, and the per-day caps kept there.
// Rules: a record is durable (fsync'd) before the action it records — a
// transaction is journaled as signed, raw bytes included, before it is
// broadcast; a write whose record cannot be written does not happen (fail
// closed); arguments are recorded as a digest, never in full.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/journal"
)

// Journal record kinds; their types are in package journal.
const (
	KindSessionStart = journal.KindSessionStart
	KindSessionEnd   = journal.KindSessionEnd
	KindToolStart    = journal.KindToolStart
	KindToolEnd      = journal.KindToolEnd
	KindPreview      = journal.KindPreview
	KindCapReserve   = journal.KindCapReserve
	KindCapCorrect   = journal.KindCapCorrect
	KindSigned       = journal.KindSigned
	KindBroadcast    = journal.KindBroadcast
	KindReceipt      = journal.KindReceipt
	KindApproval     = journal.KindApproval // the person approved or rejected a preview (human mode)
)

// capRecord is a cap reservation or a correction of one: signed base-unit
// changes per asset ("ETH" or the token address), dated like the reservation.
type capRecord = journal.CapChange

func encodeSpend(s caps.Spend) map[string]string {
	out := make(map[string]string, len(s))
	for a, v := range s {
		key := a.Hex()
		if a == (common.Address{}) {
			key = "ETH"
		}
		out[key] = v.String()
	}
	return out
}

func decodeSpend(m map[string]string) (caps.Spend, error) {
	out := make(caps.Spend, len(m))
	for k, v := range m {
		var a common.Address
		if k != "ETH" {
			if !common.IsHexAddress(k) || len(k) != 42 {
				return nil, fmt.Errorf("bad asset %q", k)
			}
			a = common.HexToAddress(k)
		}
		n, ok := new(big.Int).SetString(v, 10)
		if !ok {
			return nil, fmt.Errorf("bad amount %q", v)
		}
		out[a] = n
	}
	return out, nil
}

// journalDays is the caps.DayStore kept in the journal: every process on the
// state directory sees every reservation.
type journalDays struct{ j *journal.Journal }

// daySum sums the journal's live cap changes dated at or after since.
func daySum(live *journal.Live, since time.Time) (caps.Spend, error) {
	total := make(caps.Spend)
	for _, c := range live.Caps {
		if c.At.Before(since) {
			continue
		}
		s, err := decodeSpend(c.Change)
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

func (d journalDays) Reserve(id string, at, since time.Time, change caps.Spend, check func(caps.Spend) error) error {
	return d.j.Update(func(live *journal.Live, appendRecord journal.AppendFunc) error {
		day, err := daySum(live, since)
		if err != nil {
			return err
		}
		if err := check(day); err != nil {
			return err
		}
		_, err = appendRecord(KindCapReserve, capRecord{V: journal.Version, ID: id, At: at.UTC(), Change: encodeSpend(change)})
		return err
	})
}

func (d journalDays) Correct(id string, at time.Time, change caps.Spend) error {
	_, err := d.j.Append(KindCapCorrect, capRecord{V: journal.Version, ID: id, At: at.UTC(), Change: encodeSpend(change)})
	return err
}

func (d journalDays) Sum(since time.Time) (caps.Spend, error) {
	var sum caps.Spend
	err := d.j.View(func(live *journal.Live) (err error) {
		sum, err = daySum(live, since)
		return err
	})
	return sum, err
}

// record appends to the journal when there is one; without one it does
// nothing. Its error must stop a write that depends on it.
func (s *Server) record(kind string, data any) error {
	if s.journal == nil {
		return nil
	}
	_, err := s.journal.Append(kind, data)
	return err
}

// recordUnsynced is record for what nothing waits on (a call's start and
// end): appended without an fsync of its own, made durable by the next
// record.
func (s *Server) recordUnsynced(kind string, data any) error {
	if s.journal == nil {
		return nil
	}
	_, err := s.journal.AppendUnsynced(kind, data)
	return err
}

// digest is the hex SHA-256 of b, recorded instead of arguments.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
