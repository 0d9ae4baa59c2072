// Package journal is walletgate's append-only, hash-chained record of what it
// did: each record is written and fsync'd before the action it records, under
// a file lock shared by every process on the state directory, with the live
// state walletgate needs folded from it and checkpointed, so that opening
// does not grow with history.
//
// The state directory holds:
//
//   - journal.jsonl (FileName): the active segment, one JSON object per line.
//     Line n of the whole history has seq n, and its prev is the hex SHA-256
//     of line n-1's bytes without the newline (for seq 1, of "walletgate
//     journal v1"). Lines are only ever appended.
//   - journal.000001.jsonl, journal.000002.jsonl, …: sealed segments, the
//     closed history in order, never written again (segment.go). Every
//     segment after the first begins with a checkpoint record whose seq and
//     prev continue the chain and whose data is the live state (Live) folded
//     from all history before it, with its format (records/stateformat.go); opening
//     reads the active segment only.
//   - journal.head (HeadName): the seq and hash of the last durable record,
//     replaced atomically (temporary file, fsync, rename, fsync of the
//     directory). The chain protects each line by the next one's prev; the
//     head protects the end, so that a removed last line, an edited last
//     line, or a deleted journal is noticed.
//   - journal.lock (LockName): the flock(2) target. Appends and Update hold
//     it exclusively, reads hold it shared. Each lock call first reads what
//     other processes appended since (following a sealing) and verifies it.
//
// The rules:
//
//   - A record is durable when Append returns without error: its line was
//     written in one write(2) and the file fsync'd. Only then may the caller
//     act on it. AppendUnsynced, for records nothing waits on, leaves the
//     fsync to the next Append (or Close, or every 256th record).
//   - Records are typed (journal/records): a writer appends the type, a reader
//     decodes the same type; a layout version newer than this code's is
//     refused.
//   - Fail closed. A journal that should exist but is missing, shorter than
//     the head says, edited, or has any broken line makes Open return
//     *UnavailableError, never a fresh journal. A journal found broken while
//     open, or whose fsync failed, refuses every later call the same way.
//     What is repaired automatically is a head that is behind the journal
//     (the trace of a crash between an append and its head update) and a
//     sealing a crash interrupted; a torn last line is cut only by
//     RepairTornLine, which an operator runs.
//   - The directory must be 0700 and the files 0600, owned by the user
//     running walletgate; anything looser is refused with the chmod to run.
//   - A line is at most 1 MiB (a checkpoint 16 MiB); reading is streamed
//     line by line.
//
// The chain and the head detect accidents and casual edits. They are not a
// signature: someone who can write the state directory can rewrite the whole
// chain and the head consistently. Keep backups elsewhere if that matters.
package journal
