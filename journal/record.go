package journal

import (
	"crypto/sha256"
	"encoding/hex"
)

// The files in a state directory.
const (
	FileName = "journal.jsonl" // the records, one JSON object per line
	HeadName = "journal.head"  // seq and hash of the last record: detects a truncated or deleted journal
	LockName = "journal.lock"  // flock target shared by processes
)

// maxLine is the longest line, without its newline, that is written or read.
const maxLine = 1 << 20

// maxCheckpointLine is the longest checkpoint line: the live state of a busy
// wallet's last two days may be larger than an ordinary record.
const maxCheckpointLine = 16 << 20

// genesis is hashed in place of a previous line by the first record.
const genesis = "walletgate journal v1"

// genesisHash is the prev of seq 1, and the head's hash of an empty journal.
var genesisHash = hashLine([]byte(genesis))

// hashLine is the hex SHA-256 of a line without its newline: what the next
// record's Prev holds.
func hashLine(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}
