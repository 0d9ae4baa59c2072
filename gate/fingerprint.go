package gate

import (
	"crypto/sha256"
	"encoding/binary"
	"io"
)

// domainTag opens every fingerprint input, so a gate fingerprint can never be
// mistaken for a SHA-256 of anything else (a transaction, a raw argument
// blob), and a future format can change the tag instead of silently colliding.
const domainTag = "walletgate/gate/v1\x00"

// Fingerprint returns the SHA-256 that binds a confirmation token to one tool
// and one set of canonical arguments:
//
//	SHA-256( "walletgate/gate/v1\x00" || len(tool) || tool || len(canonical) || canonical )
//
// where each len is an 8-byte big-endian length. Because both fields are
// length-prefixed, the encoding is injective: no two different (tool,
// canonical) pairs — ("ab","c") and ("a","bc"), or bytes moved across the
// tool/arguments boundary — produce the same hash input. A nil and an empty
// canonical are the same (zero-length) arguments.
func Fingerprint(tool string, canonical []byte) [32]byte {
	h := sha256.New()
	writeInput(h, tool, canonical)
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// writeInput writes the fingerprint's hash input to h. It is separate from
// Fingerprint so that tests can check the encoding itself is injective. A
// hash.Hash never returns a write error, so none is checked.
func writeInput(h io.Writer, tool string, canonical []byte) {
	var n [8]byte
	h.Write([]byte(domainTag))
	binary.BigEndian.PutUint64(n[:], uint64(len(tool)))
	h.Write(n[:])
	h.Write([]byte(tool))
	binary.BigEndian.PutUint64(n[:], uint64(len(canonical)))
	h.Write(n[:])
	h.Write(canonical)
}
