package journal

// The record kinds and the live state are journal/records', shared with
// pgstate. These names stay here so that the packages that read and write
// records through the journal (engine, tools, the commands) compile
// unchanged; new code may use either. Each is the same type or value.

import (
	"encoding/json"
	"time"

	"github.com/walletgate/walletgate/journal/records"
)

// The types of journal/records.
type (
	Alloc           = records.Alloc
	AppendFunc      = records.AppendFunc
	Approval        = records.Approval
	Broadcast       = records.Broadcast
	CapChange       = records.CapChange
	CapEntry        = records.CapEntry
	Checkpoint      = records.Checkpoint
	Dropped         = records.Dropped
	Live            = records.Live
	Nonce           = records.Nonce
	OpenReservation = records.OpenReservation
	PendingTx       = records.PendingTx
	Preview         = records.Preview
	Receipt         = records.Receipt
	Record          = records.Record
	Repair          = records.Repair
	SessionEnd      = records.SessionEnd
	SessionStart    = records.SessionStart
	Signature       = records.Signature
	SignatureEnd    = records.SignatureEnd
	Signed          = records.Signed
	ToolEnd         = records.ToolEnd
	ToolStart       = records.ToolStart
)

// The constants of journal/records.
const (
	Version           = records.Version
	StateVersion      = records.StateVersion
	KindSessionStart  = records.KindSessionStart
	KindSessionEnd    = records.KindSessionEnd
	KindToolStart     = records.KindToolStart
	KindToolEnd       = records.KindToolEnd
	KindPreview       = records.KindPreview
	KindCapReserve    = records.KindCapReserve
	KindCapCorrect    = records.KindCapCorrect
	KindSigned        = records.KindSigned
	KindBroadcast     = records.KindBroadcast
	KindReceipt       = records.KindReceipt
	KindDropped       = records.KindDropped
	KindApproval      = records.KindApproval
	KindCheckpoint    = records.KindCheckpoint
	KindRepair        = records.KindRepair
	KindNonce         = records.KindNonce
	KindNonceFree     = records.KindNonceFree
	KindRefusedFinal  = records.KindRefusedFinal
	KindAbandoned     = records.KindAbandoned
	KindSignature     = records.KindSignature
	KindSignatureEnd  = records.KindSignatureEnd
	SignatureUnknown  = records.SignatureUnknown
	ReasonPhantom     = records.ReasonPhantom
	BroadcastAccepted = records.BroadcastAccepted
	BroadcastRefused  = records.BroadcastRefused
	BroadcastUnknown  = records.BroadcastUnknown
)

// Decode is records.Decode.
func Decode(r Record) (any, error) { return records.Decode(r) }

// DecodeInto is records.DecodeInto.
func DecodeInto(r Record, v any) error { return records.DecodeInto(r, v) }

// FreeNonces is records.FreeNonces.
func FreeNonces(live *Live, appendRecord AppendFunc, id string, at time.Time) error {
	return records.FreeNonces(live, appendRecord, id, at)
}

// ReadState is records.ReadState.
func ReadState(raw json.RawMessage) (Live, error) { return records.ReadState(raw) }
