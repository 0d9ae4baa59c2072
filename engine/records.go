package engine

// What the engine writes to the journal. Rules: a record is durable (fsync'd)
// before the action it records — a transaction is journaled as signed, raw
// bytes included, before it is broadcast, and a broadcast's outcome is
// journaled before the answer is given; a write whose record cannot be
// written does not happen (fail closed); arguments are recorded as a digest,
// never in full.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/journal/records"
)

// Journal record kinds (package journal defines every record type).
const (
	KindSessionStart = records.KindSessionStart
	KindSessionEnd   = records.KindSessionEnd
	KindToolStart    = records.KindToolStart
	KindToolEnd      = records.KindToolEnd
	KindPreview      = records.KindPreview
	KindCapReserve   = records.KindCapReserve   // a reservation, with the first transaction's nonce
	KindCapCorrect   = records.KindCapCorrect   // a settlement or release of one
	KindNonce        = records.KindNonce        // a nonce taken for a later leg of a reservation
	KindNonceFree    = records.KindNonceFree    // a nonce given back before anything was signed with it
	KindSigned       = records.KindSigned       // signed bytes, before their first broadcast
	KindBroadcast    = records.KindBroadcast    // a broadcast attempt and what the node said
	KindReceipt      = records.KindReceipt      // the transaction's own receipt
	KindRefusedFinal = records.KindRefusedFinal // shown not to have reached the node
	KindAbandoned    = records.KindAbandoned    // signed, never broadcast: never will be
	KindDropped      = records.KindDropped      // its nonce was used by another transaction
	KindApproval     = records.KindApproval     // the person approved or rejected a preview (human mode)
)

// Broadcast outcomes, as journaled.
const (
	OutcomeAccepted = records.BroadcastAccepted // the node returned the hash, or knows it
	OutcomeRefused  = records.BroadcastRefused  // the node answered an error; whether it has the transaction is not yet shown
	OutcomeUnknown  = records.BroadcastUnknown  // no answer: the node may have it
)

// The records the engine writes, as package journal types them.
type (
	CapRecord       = records.CapChange
	NonceRecord     = records.Nonce
	SignedRecord    = records.Signed
	BroadcastRecord = records.Broadcast
	ReceiptRecord   = records.Receipt
	EndRecord       = records.Dropped // refused-final, abandoned and dropped
	PreviewRecord   = records.Preview
)

// Recorder is where the engine keeps its records and the live state folded
// from them: the journal, or memory when walletgate runs without a state
// directory. *journal.Journal is one.
type Recorder interface {
	Append(kind string, data any) (records.Record, error)
	// Update runs fn under the exclusive lock with the live state, and lets
	// it append atomically with what it read.
	Update(fn func(live *records.Live, appendRecord records.AppendFunc) error) error
	// View runs fn with the live state under the shared lock.
	View(fn func(live *records.Live) error) error
}

// memRecorder keeps records' live state in memory, for one process. It is
// safe for concurrent use.
type memRecorder struct {
	mu   sync.Mutex
	now  func() time.Time
	seq  uint64
	live records.Live
}

func (m *memRecorder) appendLocked(kind string, data any) (records.Record, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return records.Record{}, err
	}
	m.seq++
	r := records.Record{Seq: m.seq, Time: m.now().UTC(), Kind: kind, Data: raw}
	if err := m.live.Apply(r); err != nil {
		return records.Record{}, err
	}
	return r, nil
}

func (m *memRecorder) Append(kind string, data any) (records.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.appendLocked(kind, data)
}

func (m *memRecorder) Update(fn func(*records.Live, records.AppendFunc) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fn(&m.live, m.appendLocked)
}

func (m *memRecorder) View(fn func(*records.Live) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fn(&m.live)
}

// EncodeSpend renders a spend for the journal: "ETH" or the token address
// to a decimal base-unit string.
func EncodeSpend(s caps.Spend) map[string]string {
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

// DecodeSpend reads EncodeSpend's form back.
func DecodeSpend(m map[string]string) (caps.Spend, error) {
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

// Decode reads a record's data into v.
func Decode(r records.Record, v any) error {
	if err := json.Unmarshal(r.Data, v); err != nil {
		return fmt.Errorf("journal record %d (%s): %w", r.Seq, r.Kind, err)
	}
	return nil
}
