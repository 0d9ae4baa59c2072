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
	"github.com/walletgate/walletgate/journal"
)

// Journal record kinds.
const (
	KindSessionStart = "session_start"
	KindSessionEnd   = "session_end"
	KindToolStart    = "tool_start"
	KindToolEnd      = "tool_end"
	KindPreview      = "preview"
	KindCapReserve   = "cap_reserve" // a reservation, with the first transaction's nonce
	KindCapCorrect   = "cap_correct" // a settlement or release of one
	KindNonce        = "nonce"       // a nonce taken for a later leg of a reservation
	KindNonceFree    = "nonce_free"  // a nonce given back before anything was signed with it
	KindSigned       = "signed"      // signed bytes, before their first broadcast
	KindBroadcast    = "broadcast"   // a broadcast attempt and what the node said
	KindReceipt      = "receipt"     // the transaction's own receipt
	KindRefusedFinal = "refused_final"
	KindAbandoned    = "abandoned" // signed, never broadcast: never will be
	KindDropped      = "dropped"   // its nonce was used by another transaction
	KindApproval     = "approval"  // the person approved or rejected a preview (human mode)
)

// Broadcast outcomes, as journaled.
const (
	OutcomeAccepted = "accepted" // the node returned the hash, or knows it
	OutcomeRefused  = "refused"  // the node answered an error; whether it has the transaction is not yet shown
	OutcomeUnknown  = "unknown"  // no answer: the node may have it
)

// CapRecord is a cap reservation or a correction of one: signed base-unit
// changes per asset ("ETH" or the token address), dated like the reservation.
type CapRecord struct {
	ID     string            `json:"id"`
	At     time.Time         `json:"at"`
	Change map[string]string `json:"change"`
	// Nonce is the nonce the reservation's first transaction takes; nil on
	// corrections and in journals older than nonce allocation.
	Nonce *uint64 `json:"nonce,omitempty"`
}

// NonceRecord is a nonce taken for, or given back by, reservation ID.
type NonceRecord struct {
	Reservation string    `json:"reservation"`
	Nonce       uint64    `json:"nonce"`
	At          time.Time `json:"at"`
}

// SignedRecord is a signed transaction, journaled before it is broadcast.
type SignedRecord struct {
	Tool        string `json:"tool"`
	Leg         string `json:"leg"`
	Reservation string `json:"reservation"`
	Tx          string `json:"tx"`
	Nonce       uint64 `json:"nonce"`
	From        string `json:"from"`
	Raw         string `json:"raw"`
}

// BroadcastRecord is one broadcast attempt of a signed transaction.
type BroadcastRecord struct {
	Tx      string `json:"tx"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// ReceiptRecord is a transaction's verified receipt.
type ReceiptRecord struct {
	Tx      string `json:"tx"`
	Status  uint64 `json:"status"`
	Block   uint64 `json:"block"`
	GasUsed uint64 `json:"gas_used"`
	Fee     string `json:"fee"`
}

// EndRecord ends a transaction that was not included: refused-final,
// abandoned or dropped.
type EndRecord struct {
	Tx     string `json:"tx"`
	Nonce  uint64 `json:"nonce"`
	Reason string `json:"reason"`
}

// PreviewRecord is an issued preview.
type PreviewRecord struct {
	Tool        string            `json:"tool"`
	Fingerprint string            `json:"fingerprint"`
	Legs        int               `json:"legs"`
	Spend       map[string]string `json:"spend"`
	ConfirmBy   string            `json:"confirm_by,omitempty"` // human mode: token or person
}

// Recorder is where the engine keeps its records: the journal, or memory
// when walletgate runs without a state directory. *journal.Journal is one.
type Recorder interface {
	Append(kind string, data any) (journal.Record, error)
	Update(fn func(records []journal.Record, appendRecord func(kind string, data any) (journal.Record, error)) error) error
	Records() ([]journal.Record, error)
}

// memRecorder keeps records in memory, for one process. It is safe for
// concurrent use.
type memRecorder struct {
	mu      sync.Mutex
	now     func() time.Time
	records []journal.Record
}

func (m *memRecorder) appendLocked(kind string, data any) (journal.Record, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return journal.Record{}, err
	}
	r := journal.Record{Seq: uint64(len(m.records) + 1), Time: m.now().UTC(), Kind: kind, Data: raw}
	m.records = append(m.records, r)
	return r, nil
}

func (m *memRecorder) Append(kind string, data any) (journal.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.appendLocked(kind, data)
}

func (m *memRecorder) Update(fn func([]journal.Record, func(string, any) (journal.Record, error)) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.records)
	return fn(m.records[:n:n], m.appendLocked)
}

func (m *memRecorder) Records() ([]journal.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]journal.Record(nil), m.records...), nil
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
func Decode(r journal.Record, v any) error {
	if err := json.Unmarshal(r.Data, v); err != nil {
		return fmt.Errorf("journal record %d (%s): %w", r.Seq, r.Kind, err)
	}
	return nil
}
