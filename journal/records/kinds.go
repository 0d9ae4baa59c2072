package records

// The record kinds walletgate writes, each a Go type that is both written and
// read: a writer appends the type, a reader decodes the same type (Decode), so
// the schema of the journal is here and nowhere else. Rules of this file:
//
//   - Every type has V, the version of its layout. Records written before
//     versions existed have no "v" and read as version 0, which has the same
//     fields; a version above Version is refused rather than half-read.
//   - Fields are only ever added. A renamed or retyped field is a new version,
//     and the decoder of the old one stays.
//   - Amounts are decimal strings of base units, never JSON numbers.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Version is the layout version this code writes in every record's "v".
const Version = 1

// The kinds of record.
const (
	KindSessionStart = "session_start"
	KindSessionEnd   = "session_end"
	KindToolStart    = "tool_start"
	KindToolEnd      = "tool_end"
	KindPreview      = "preview"
	KindCapReserve   = "cap_reserve"
	KindCapCorrect   = "cap_correct"
	KindSigned       = "signed"
	KindBroadcast    = "broadcast"
	KindReceipt      = "receipt"
	KindDropped      = "dropped"
	KindApproval     = "approval"
	KindCheckpoint   = "checkpoint"
	KindRepair       = "repair"
	// KindNonce is a nonce taken for a reservation's later transaction;
	// KindNonceFree one given back before anything was signed with it.
	KindNonce     = "nonce"
	KindNonceFree = "nonce_free"
	// KindRefusedFinal ends a transaction shown not to have reached the
	// node (refused, unknown by hash, nonce not passed): it is never sent
	// again and its nonce is free. KindAbandoned ends one that was signed
	// but whose broadcast was never journaled and which the node did not
	// have: walletgate never sends it; it stays counted until its nonce is
	// used by another transaction (then KindDropped) or it turns up included
	// (bytes already on their way when the process died can still arrive;
	// then its receipt is journaled).
	KindRefusedFinal = "refused_final"
	KindAbandoned    = "abandoned"
	// KindSignature is a typed-data signature, journaled before it is
	// returned; KindSignatureEnd ends its reservation (used, or expired
	// unused).
	KindSignature    = "signature"
	KindSignatureEnd = "signature_end"
)

// SignatureUnknown is a Signature's Kind for typed data of an unknown kind:
// nothing is counted for it, so nothing is followed up.
const SignatureUnknown = "unknown"

// Signature is a typed-data signature as journaled before it is returned:
// what it grants, never the signature itself (a bearer instrument until
// used).
type Signature struct {
	V            int               `json:"v,omitempty"`
	Tool         string            `json:"tool"`
	Reservation  string            `json:"reservation"`
	Kind         string            `json:"kind"`
	Digest       string            `json:"digest"`
	Token        string            `json:"token,omitempty"`
	Owner        string            `json:"owner,omitempty"`
	Counterparty string            `json:"counterparty,omitempty"`
	Amount       string            `json:"amount,omitempty"`
	Nonce        string            `json:"nonce,omitempty"` // the permit nonce (decimal) or the authorization nonce (0x…)
	Until        time.Time         `json:"until"`
	Spend        map[string]string `json:"spend"`
}

// SignatureEnd ends a signature's reservation: used (settled) or expired
// unused (released).
type SignatureEnd struct {
	V           int    `json:"v,omitempty"`
	Digest      string `json:"digest"`
	Reservation string `json:"reservation"`
	End         string `json:"end"` // "used" or "expired"
}

// ReasonPhantom is a CapChange's Reason when a reservation with no signed
// transaction after it was released at start-up.
const ReasonPhantom = "phantom"

// SessionStart is written when a walletgate process opens the journal.
type SessionStart struct {
	V       int    `json:"v,omitempty"`
	Version string `json:"version"` // walletgate's version
	PID     int    `json:"pid"`
	ChainID uint64 `json:"chain_id"`
	// Genesis is the chain's genesis block hash, as the node said it at
	// the start (absent in records written before it was kept).
	Genesis string `json:"genesis,omitempty"`
	Wallet  string `json:"wallet"`
	Signer  string `json:"signer"`
}

// SessionEnd is written when a process closes the journal; a start without
// one is a process that was killed (or is still running).
type SessionEnd struct {
	V   int `json:"v,omitempty"`
	PID int `json:"pid"`
}

// ToolStart is written when a tool call begins; the arguments are kept as a
// digest only.
type ToolStart struct {
	V          int    `json:"v,omitempty"`
	Call       string `json:"call"`
	Tool       string `json:"tool"`
	ArgsSHA256 string `json:"args_sha256"`
}

// ToolEnd is written when a call is answered: Outcome is "ok" or the
// refusal's code.
type ToolEnd struct {
	V       int    `json:"v,omitempty"`
	Call    string `json:"call"`
	Tool    string `json:"tool"`
	Outcome string `json:"outcome"`
	MS      int64  `json:"ms"`
}

// Preview is written before a confirmation token is issued.
type Preview struct {
	V           int               `json:"v,omitempty"`
	Tool        string            `json:"tool"`
	Fingerprint string            `json:"fingerprint"`
	Legs        int               `json:"legs"`
	Spend       map[string]string `json:"spend"`                // asset ("ETH" or token address) → base units
	ConfirmBy   string            `json:"confirm_by,omitempty"` // human mode with tiers: token or person
}

// CapChange is a cap reservation (KindCapReserve) or a correction of one
// (KindCapCorrect: a settlement or a release), in signed base units per asset
// ("ETH" or the token address), dated At like the reservation so that the
// per-day window counts it where the reservation was.
type CapChange struct {
	V      int               `json:"v,omitempty"`
	ID     string            `json:"id"`
	At     time.Time         `json:"at"`
	Change map[string]string `json:"change"`
	Reason string            `json:"reason,omitempty"` // ReasonPhantom for a release at start-up
	// Nonce is the nonce the reservation's first transaction takes, chosen
	// in the same locked step (absent on corrections and in older journals).
	Nonce *uint64 `json:"nonce,omitempty"`
	// By is "token" on a reservation that a token confirmed without the
	// person (human mode's WALLETGATE_HUMAN_ABOVE); absent otherwise.
	By string `json:"by,omitempty"`
}

// Nonce is a nonce taken by (KindNonce) or given back by (KindNonceFree)
// reservation Reservation.
type Nonce struct {
	V           int       `json:"v,omitempty"`
	Reservation string    `json:"reservation"`
	Nonce       uint64    `json:"nonce"`
	At          time.Time `json:"at"`
}

// Signed is written, with the raw signed bytes, before a transaction is
// broadcast: recovery only ever re-sends these bytes.
type Signed struct {
	V           int    `json:"v,omitempty"`
	Tool        string `json:"tool"`
	Leg         string `json:"leg"`
	Reservation string `json:"reservation"` // the CapChange ID this transaction spends
	Tx          string `json:"tx"`
	Nonce       uint64 `json:"nonce"`
	From        string `json:"from"`
	Raw         string `json:"raw"` // 0x-hex of the signed transaction
}

// The outcomes of a Broadcast.
const (
	BroadcastAccepted = "accepted"
	BroadcastRefused  = "refused" // the node refused it: it was not sent
	BroadcastUnknown  = "unknown" // a transport failure: the node may have it
)

// Broadcast is how a broadcast went.
type Broadcast struct {
	V       int    `json:"v,omitempty"`
	Tx      string `json:"tx"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// Receipt is a mined transaction's outcome.
type Receipt struct {
	V       int    `json:"v,omitempty"`
	Tx      string `json:"tx"`
	Status  uint64 `json:"status"` // 1 succeeded, 0 reverted
	Block   uint64 `json:"block"`
	GasUsed uint64 `json:"gas_used"`
	Fee     string `json:"fee"` // wei
}

// Dropped marks a journaled transaction that never executed; the same type
// is the data of KindRefusedFinal and KindAbandoned.
type Dropped struct {
	V      int    `json:"v,omitempty"`
	Tx     string `json:"tx"`
	Nonce  uint64 `json:"nonce"`
	Reason string `json:"reason"`
}

// Approval is a person's decision on a preview (human mode).
type Approval struct {
	V           int    `json:"v,omitempty"`
	Approval    string `json:"approval"`
	Tool        string `json:"tool"`
	Fingerprint string `json:"fingerprint"`
	Decision    string `json:"decision"`
	// Passkey is the credential id (base64url) of the passkey that gave an
	// approval on the page; "" for any other decision (the terminal, a
	// rejection).
	Passkey string `json:"passkey,omitempty"`
}

// Checkpoint opens every segment after the first: the live state folded
// from all history before it, so that opening reads this record and what
// follows, never the sealed segments.
type Checkpoint struct {
	V      int             `json:"v,omitempty"`
	Sealed string          `json:"sealed"` // the segment file sealed just before this one
	State  json.RawMessage `json:"state"`  // a Live snapshot
}

// Repair records that `walletgate audit repair` cut an incomplete final line
// off a segment.
type Repair struct {
	V       int    `json:"v,omitempty"`
	File    string `json:"file"`
	Line    int    `json:"line"`    // the number the cut line had
	Bytes   int    `json:"bytes"`   // how many bytes were cut
	Content string `json:"content"` // the cut bytes, quoted, at most 200 of them
}

// currentPrefix begins the data of every record this code writes.
var currentPrefix = []byte(`{"v":` + strconv.Itoa(Version) + `,`)

// Decode returns r's data as its kind's type (a value, such as Signed), or
// nil for a kind this package does not define. A version above Version, or
// data that does not fit the type, is an error naming the record.
func Decode(r Record) (any, error) {
	var v any
	switch r.Kind {
	case KindSessionStart:
		v = &SessionStart{}
	case KindSessionEnd:
		v = &SessionEnd{}
	case KindToolStart:
		v = &ToolStart{}
	case KindToolEnd:
		v = &ToolEnd{}
	case KindPreview:
		v = &Preview{}
	case KindCapReserve, KindCapCorrect:
		v = &CapChange{}
	case KindSigned:
		v = &Signed{}
	case KindBroadcast:
		v = &Broadcast{}
	case KindReceipt:
		v = &Receipt{}
	case KindDropped, KindRefusedFinal, KindAbandoned:
		v = &Dropped{}
	case KindNonce, KindNonceFree:
		v = &Nonce{}
	case KindSignature:
		v = &Signature{}
	case KindSignatureEnd:
		v = &SignatureEnd{}
	case KindApproval:
		v = &Approval{}
	case KindCheckpoint:
		v = &Checkpoint{}
	case KindRepair:
		v = &Repair{}
	default:
		return nil, nil
	}
	if err := DecodeInto(r, v); err != nil {
		return nil, err
	}
	switch p := v.(type) {
	case *SessionStart:
		return *p, nil
	case *SessionEnd:
		return *p, nil
	case *ToolStart:
		return *p, nil
	case *ToolEnd:
		return *p, nil
	case *Preview:
		return *p, nil
	case *CapChange:
		return *p, nil
	case *Signed:
		return *p, nil
	case *Broadcast:
		return *p, nil
	case *Receipt:
		return *p, nil
	case *Dropped:
		return *p, nil
	case *Nonce:
		return *p, nil
	case *Signature:
		return *p, nil
	case *SignatureEnd:
		return *p, nil
	case *Approval:
		return *p, nil
	case *Checkpoint:
		return *p, nil
	case *Repair:
		return *p, nil
	}
	return nil, nil
}

// DecodeInto decodes r's data into v, a pointer to one of this file's types,
// and refuses a version this code does not know.
func DecodeInto(r Record, v any) error {
	data := r.Data
	if len(data) == 0 {
		data = []byte("{}")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("journal record %d (%s): %w", r.Seq, r.Kind, err)
	}
	// The version: absent (0) in old records, first in new ones; parsing
	// the data a second time only when it is neither.
	if bytes.HasPrefix(data, currentPrefix) || !bytes.Contains(data, []byte(`"v":`)) {
		return nil
	}
	var ver struct {
		V int `json:"v"`
	}
	_ = json.Unmarshal(data, &ver)
	if ver.V > Version || ver.V < 0 {
		return fmt.Errorf("journal record %d (%s) has layout version %d; this walletgate reads versions up to %d: upgrade walletgate", r.Seq, r.Kind, ver.V, Version)
	}
	return nil
}
