package tools

// What tools writes to the journal itself: one record at the start and the
// end of every call (arguments as a digest, never in full) and the person's
// decisions in human mode. The write path's records are the engine's.

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/walletgate/walletgate/engine"
)

// Journal record kinds, as the engine names them.
const (
	KindSessionStart = engine.KindSessionStart
	KindSessionEnd   = engine.KindSessionEnd
	KindToolStart    = engine.KindToolStart
	KindToolEnd      = engine.KindToolEnd
	KindPreview      = engine.KindPreview
	KindCapReserve   = engine.KindCapReserve
	KindCapCorrect   = engine.KindCapCorrect
	KindSigned       = engine.KindSigned
	KindBroadcast    = engine.KindBroadcast
	KindReceipt      = engine.KindReceipt
	KindApproval     = engine.KindApproval
	KindDropped      = engine.KindDropped
	KindSignature    = engine.KindSignature
	KindSignatureEnd = engine.KindSignatureEnd
)

// ConfirmBound is how long a confirm may take from its cap reservation to
// its signature (the engine's default bound, engine.DefaultBounds): a
// reservation older than that, with nothing signed, is a phantom.
func ConfirmBound() time.Duration { return engine.DefaultBounds.Confirm }

// record appends to the journal when there is one; without one it does
// nothing (the engine keeps its own records in memory then).
func (s *Server) record(kind string, data any) error {
	if s.journal == nil && s.shared == "" {
		return nil
	}
	return s.engine.Record(kind, data)
}

// digest is the hex SHA-256 of b, recorded instead of arguments.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// recordUnsynced appends a record that precedes nothing at stake (a read's
// start and end) without an fsync of its own; the next record that matters
// makes it durable.
func (s *Server) recordUnsynced(kind string, data any) error {
	if s.journal == nil {
		return nil
	}
	_, err := s.journal.AppendUnsynced(kind, data)
	return err
}
