package journal

// Sealed segments and checkpoints. Rules of this file:
//
//   - The active segment is journal.jsonl. When it reaches the segment size
//     (or is long when a journal is opened) it is sealed: renamed to
//     journal.NNNNNN.jsonl (numbered from 1, never written again), and a new
//     journal.jsonl begins with a checkpoint record, which continues the hash
//     chain (its seq and prev follow the sealed segment's last line) and holds
//     the live state folded from everything before it.
//   - Sealing is crash-safe at every step: the new segment is written and
//     fsync'd as journal.next first, then the two renames, then the
//     directory's fsync, then the head. A crash before the first rename
//     leaves a journal.next that the next open removes; between the renames,
//     one that it renames into place; after them, a head one record behind,
//     which it catches up.
//   - Everything happens under the exclusive lock. Another process notices
//     that its journal.jsonl was sealed, reads it to its end, then the
//     segments sealed since, then the new journal.jsonl, each checked to
//     continue the chain; anything else breaks it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/walletgate/walletgate/journal/records"
)

// crashPoint, when set (by tests only), is called at each point of an
// append and a sealing where a crash leaves a different state on disk.
var crashPoint func(point string)

func reached(point string) {
	if crashPoint != nil {
		crashPoint(point)
	}
}

// nextName is the new active segment while it is being sealed into place.
const nextName = "journal.next"

// sealedName is the file name of sealed segment n (1-based).
func sealedName(n int) string { return fmt.Sprintf("journal.%06d.jsonl", n) }

// sealedIndex is n for a sealedName, or 0.
func sealedIndex(name string) int {
	mid, ok := strings.CutPrefix(name, "journal.")
	if !ok {
		return 0
	}
	mid, ok = strings.CutSuffix(mid, ".jsonl")
	if !ok || len(mid) != 6 {
		return 0
	}
	n, err := strconv.Atoi(mid)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// Segments returns the paths of the journal in dir in chain order: the
// sealed segments, then the active one (which may not exist).
func Segments(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var sealed []int
	for _, e := range entries {
		if n := sealedIndex(e.Name()); n > 0 {
			sealed = append(sealed, n)
		}
	}
	sort.Ints(sealed)
	out := make([]string, 0, len(sealed)+1)
	for _, n := range sealed {
		out = append(out, filepath.Join(dir, sealedName(n)))
	}
	return append(out, filepath.Join(dir, FileName)), nil
}

// rotateLocked seals the active segment and begins a new one with a
// checkpoint of the live state. A failure before the renames leaves the
// journal as it was (and working); one after them breaks j.
func (j *Journal) rotateLocked() error {
	if j.unsynced > 0 {
		if err := j.syncLocked(j.chain.seq); err != nil {
			return err
		}
	}
	segs, err := Segments(j.dir)
	if err != nil {
		return err
	}
	n := len(segs) // the sealed ones, plus one
	if len(segs) > 1 {
		n = sealedIndex(filepath.Base(segs[len(segs)-2])) + 1
	}
	sealed := sealedName(n)
	state, err := j.live.Snapshot()
	if err != nil {
		return err
	}
	rec := records.Record{Seq: j.chain.seq + 1, Time: j.now().UTC(), PID: j.pid, Session: j.session, Kind: records.KindCheckpoint, Prev: j.chain.hash}
	if rec.Data, err = json.Marshal(records.Checkpoint{V: records.Version, Sealed: sealed, State: state}); err != nil {
		return fmt.Errorf("journal: checkpoint: %w", err)
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("journal: checkpoint: %w", err)
	}
	if len(line) > maxCheckpointLine {
		return fmt.Errorf("journal: checkpoint of %d bytes is over the limit of %d; the segment stays open", len(line), maxCheckpointLine)
	}
	if err := os.Remove(j.nextPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	f, err := openNoFollow(j.nextPath, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("journal: checkpoint: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("journal: checkpoint: %w", err)
	}
	if err := syncFile(f); err != nil {
		f.Close()
		return fmt.Errorf("journal: checkpoint: fsync: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("journal: %w", err)
	}
	reached("seal: new segment written")
	sealedPath := filepath.Join(j.dir, sealed)
	if _, err := os.Lstat(sealedPath); err == nil {
		f.Close()
		return fmt.Errorf("journal: %s exists already", sealedPath)
	}
	if err := os.Rename(j.path, sealedPath); err != nil {
		f.Close()
		return fmt.Errorf("journal: seal: %w", err)
	}
	reached("seal: old segment renamed")
	if err := os.Rename(j.nextPath, j.path); err != nil {
		f.Close()
		return j.breakLocked(j.unavailable(err, fmt.Sprintf("sealing %s as %s: the new segment could not be put in place (%v)", j.path, sealed, err)))
	}
	reached("seal: new segment in place")
	if err := syncFile(j.dirFile); err != nil {
		f.Close()
		return j.breakLocked(j.unavailable(err, fmt.Sprintf("fsync of %s failed while sealing a segment (%v)", j.dir, err)))
	}
	j.file.Close()
	j.file, j.fileInfo = f, fi
	j.chain = chain{path: j.path, lines: 1, seq: rec.Seq, hash: hashLine(line), size: int64(len(line)) + 1,
		first: rec.Seq, firstPrev: rec.Prev, cpSize: int64(len(line)) + 1, loose: true}
	reached("seal: before the head")
	return j.writeHeadLocked()
}

// finishRotationLocked completes or undoes a sealing that a crash
// interrupted (see the rules above).
func (j *Journal) finishRotationLocked() error {
	if _, err := os.Lstat(j.nextPath); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := os.Lstat(j.path); err == nil {
		// The crash came before the active segment was sealed.
		if err := os.Remove(j.nextPath); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		return nil
	}
	// Sealed, but the new segment not yet in place; Open checks that it
	// continues where the head says the chain ends.
	if err := os.Rename(j.nextPath, j.path); err != nil {
		return fmt.Errorf("journal: finish sealing: %w", err)
	}
	return syncFile(j.dirFile)
}

// followLocked continues j's chain after its active segment was sealed by
// another process: the rest of the old one, the segments sealed since, and
// the new active segment, each of which must continue the chain.
func (j *Journal) followLocked(statErr error, each func(records.Record, string)) error {
	if errors.Is(statErr, os.ErrNotExist) {
		if err := j.finishRotationLocked(); err != nil {
			return err
		}
	}
	replaced := func(err error) error {
		return j.breakLocked(j.unavailable(err, fmt.Sprintf("%s was removed or replaced while walletgate was running", j.path)))
	}
	segs, err := Segments(j.dir)
	if err != nil {
		return replaced(err)
	}
	mine := -1
	for i, p := range segs[:len(segs)-1] {
		if fi, err := os.Stat(p); err == nil && os.SameFile(fi, j.fileInfo) {
			mine = i
		}
	}
	if mine < 0 {
		return replaced(nil)
	}
	fi, err := j.file.Stat()
	if err != nil {
		return replaced(err)
	}
	j.chain.path = segs[mine]
	if err := j.readOnLocked(j.file, fi.Size(), each); err != nil {
		return err
	}
	for _, p := range segs[mine+1:] {
		f, err := openNoFollow(p, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			return replaced(err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return replaced(err)
		}
		j.chain.nextFile(p)
		if err := j.readOnLocked(f, fi.Size(), each); err != nil {
			f.Close()
			return err
		}
		j.file.Close()
		j.file, j.fileInfo = f, fi
	}
	j.chain.loose = true
	return nil
}
