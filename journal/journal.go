package journal

// Locking: mu serialises a Journal's callers and guards its cached chain; the
// flock on the lock file serialises processes (and Journals). Every call takes
// mu, then the flock, then catches up with what others appended (refresh)
// before it reads or appends. Methods ending in Locked need both held.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/walletgate/walletgate/journal/records"
)

// Journal is an open journal. It is safe for concurrent use within a
// process, and any number of processes may open the same directory. The zero
// Journal, and a nil *Journal, refuse every call.
type Journal struct {
	dir, path, headPath, tmpPath, lockPath, nextPath string

	session string
	pid     int
	now     func() time.Time
	segSize int64 // seal the active segment once it is this long

	mu       sync.Mutex
	file     *os.File    // the active segment, O_APPEND; nil when closed
	fileInfo os.FileInfo // to notice the active segment being sealed or replaced
	lockFile *os.File
	lockInfo os.FileInfo  // to notice the lock file being replaced
	dirFile  *os.File     // for fsync after renaming the head
	live     records.Live // folded from every record so far, from all processes
	chain    chain        // the verified chain of the active segment: its end and size
	unsynced int          // records appended by j without an fsync since the last one
	broken   *UnavailableError
}

// Options tune a Journal; the zero value is the default.
type Options struct {
	// SegmentSize is how long, in bytes, the active segment may grow before
	// it is sealed and a new one begun with a checkpoint; 0 means
	// DefaultSegmentSize. Tests set it small.
	SegmentSize int64
}

// DefaultSegmentSize bounds what opening a journal reads: the active
// segment, at most this long (plus one record).
const DefaultSegmentSize = 4 << 20

// maxOpenTail is the most records (in bytes) after the checkpoint that Open
// leaves unsealed: reading them is what a start-up pays (about 5 µs a
// record), so a longer tail is sealed once, by the start that finds it.
const maxOpenTail = 256 << 10

// maxUnsynced bounds how many records AppendUnsynced leaves without an fsync
// (and the head behind): a power cut loses at most these.
const maxUnsynced = 256

// Open opens the journal in dir with the default Options, creating dir (0700,
// with missing parents) and the journal when they are absent. session
// identifies this process in every record it appends; now is the clock (nil
// means time.Now).
//
// An existing dir or file that group or others may access, or that another
// user owns, is refused with the chmod to run. Open verifies the chain of the
// active segment, from its checkpoint to the end (sealed segments are for
// audit verify), and folds it into the live state. It returns an
// *UnavailableError, never a fresh journal, if the head exists but the
// journal does not, if the journal ends before the head's seq, if the head's
// hash does not match that record, if the head is missing from a journal with
// records, or if any line is broken. A journal with more records than its
// head (a crash between an append and the head update, or records appended
// without an fsync) is accepted, and the head repaired.
//
// The active segment is read before the lock is taken, then what was
// appended meanwhile under it, so another process's calls wait at most for
// that catch-up, not for the whole read.
func Open(dir, session string, now func() time.Time) (*Journal, error) {
	return OpenOptions(dir, session, now, Options{})
}

// OpenOptions is Open with options.
func OpenOptions(dir, session string, now func() time.Time, opts Options) (*Journal, error) {
	if dir == "" {
		return nil, errors.New("journal: no state directory")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	if err := prepareDir(dir); err != nil {
		return nil, err
	}
	j := &Journal{
		dir:      dir,
		path:     filepath.Join(dir, FileName),
		headPath: filepath.Join(dir, HeadName),
		tmpPath:  filepath.Join(dir, HeadName+".tmp"),
		lockPath: filepath.Join(dir, LockName),
		nextPath: filepath.Join(dir, nextName),
		session:  session,
		pid:      os.Getpid(),
		now:      now,
		segSize:  opts.SegmentSize,
		chain:    newChain(filepath.Join(dir, FileName)),
	}
	if err := j.open(); err != nil {
		j.closeFiles()
		return nil, err
	}
	return j, nil
}

// open opens the lock file and the directory, reads the active segment
// without the lock, then checks it and catches up under the exclusive lock.
func (j *Journal) open() error {
	var err error
	j.lockFile, err = openNoFollow(j.lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("journal: open lock: %w", err)
	}
	if err := checkPrivate(j.lockFile, j.lockPath, false); err != nil {
		return err
	}
	if j.lockInfo, err = j.lockFile.Stat(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if j.dirFile, err = os.Open(j.dir); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	hashes, err := j.preload()
	if err != nil {
		return err
	}
	unlock, err := j.lock(lockEx)
	if err != nil {
		return err
	}
	defer unlock()
	return j.loadLocked(hashes)
}

// preload reads the complete lines of the active segment without the lock:
// lines are only appended, each in one write, so what it reads is a prefix
// that loadLocked continues. It returns the hash of every line from the
// head's seq on (the head may be behind), keyed by seq. Anything unexpected
// (no journal, a broken line, perhaps a write seen half done) leaves j as it
// was, for loadLocked to read everything under the lock.
func (j *Journal) preload() (map[uint64]string, error) {
	h, _, err := readHead(j.headPath, false)
	if err != nil {
		return nil, nil
	}
	f, err := openNoFollow(j.path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, nil
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil
	}
	hashes := map[uint64]string{}
	c := newChain(j.path)
	var live records.Live
	var ferr error
	err = c.read(completeLines(f, fi.Size()), func(r records.Record, hash string) {
		if r.Seq >= h.Seq {
			hashes[r.Seq] = hash
		}
		if ferr == nil {
			ferr = foldInto(&live, r, j.path, c.lines+1)
		}
	})
	if err != nil || ferr != nil {
		f.Close()
		return nil, nil
	}
	j.file, j.fileInfo, j.chain, j.live = f, fi, c, live
	return hashes, nil
}

// completeLines reads f up to its last newline within size.
func completeLines(f *os.File, size int64) io.Reader {
	const tail = 4 << 10
	end := size
	buf := make([]byte, tail)
	for end > 0 {
		from := max(0, end-tail)
		n, _ := f.ReadAt(buf[:end-from], from)
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = from + int64(i) + 1
			break
		}
		end = from
	}
	return io.NewSectionReader(f, 0, end)
}

// foldInto applies r to l; a checkpoint replaces l with its state (the
// same as l, when l was folded from the history before it), except an
// unversioned one that follows what l folded: l keeps its own fold, pruned
// as a snapshot is (records/stateformat.go). An error names the line.
func foldInto(l *records.Live, r records.Record, path string, line int) error {
	if r.Kind == records.KindCheckpoint {
		var cp records.Checkpoint
		err := records.DecodeInto(r, &cp)
		version := 0
		if err == nil {
			version, err = records.StateFormat(cp.State)
		}
		switch {
		case err != nil:
		case version == 0 && l.Seq() > 0 && l.Seq()+1 == r.Seq:
			l.KeepPast(r.Seq)
		default:
			err = l.Restore(cp.State, r.Seq)
		}
		if err != nil {
			return &BrokenError{Path: path, Line: line, Seq: r.Seq, Reason: err.Error()}
		}
		return nil
	}
	if err := l.Apply(r); err != nil {
		return &BrokenError{Path: path, Line: line, Seq: r.Seq, Reason: err.Error()}
	}
	return nil
}

// loadLocked continues what preload read (or, if it read nothing, opens or
// creates the journal), and checks it against the head. hashes are the line
// hashes preload saw from the head's seq on.
func (j *Journal) loadLocked(hashes map[uint64]string) error {
	h, hasHead, err := readHead(j.headPath, true)
	var be *BrokenError
	if errors.As(err, &be) {
		return j.unavailable(be, be.Error())
	}
	if err != nil {
		return err
	}
	if err := j.finishRotationLocked(); err != nil {
		return err
	}
	if j.file == nil {
		f, err := openNoFollow(j.path, os.O_RDWR|os.O_APPEND, 0)
		if errors.Is(err, os.ErrNotExist) {
			if hasHead {
				return j.unavailable(nil, fmt.Sprintf("%s is missing, but %s says it had %d records", j.path, j.headPath, h.Seq))
			}
			return j.createLocked()
		}
		if err != nil {
			return fmt.Errorf("journal: open: %w", err)
		}
		j.file = f
		if j.fileInfo, err = f.Stat(); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
	if err := checkPrivate(j.file, j.path, false); err != nil {
		return err
	}
	if hashes == nil {
		hashes = map[uint64]string{}
	}
	if err := j.catchUpLocked(func(r records.Record, hash string) {
		if r.Seq >= h.Seq {
			hashes[r.Seq] = hash
		}
	}); err != nil {
		return err
	}
	if !hasHead {
		if j.chain.seq > 0 {
			return j.unavailable(nil, fmt.Sprintf("%s is missing, but %s has %d records", j.headPath, j.path, j.chain.seq))
		}
		// A crash while creating the journal: the empty journal was
		// created, the head not yet.
		return j.writeHeadLocked()
	}
	headHash, ok := hashes[h.Seq]
	switch {
	case h.Seq == 0:
		headHash = genesisHash
	case !ok && j.chain.first > 0 && h.Seq == j.chain.first-1:
		headHash = j.chain.firstPrev // sealed, then a crash before the head moved on
	case !ok && h.Seq < j.chain.first:
		return j.unavailable(nil, fmt.Sprintf("%s says the last record is %d, but %s begins at record %d: the head or the journal was replaced", j.headPath, h.Seq, j.path, j.chain.first))
	}
	if be := j.chain.checkHead(h, headHash, j.headPath); be != nil {
		return j.unavailable(be, be.Error())
	}
	if h.Seq < j.chain.seq {
		if err := j.writeHeadLocked(); err != nil {
			return err
		}
	}
	if j.live.Legacy() {
		return j.upgradeLocked()
	}
	if j.chain.tail() > min(j.segSize/4, maxOpenTail) {
		// A long tail: seal it now, so that the next start reads little.
		return j.rotateLocked()
	}
	return nil
}

// upgradeLocked replaces a live state restored from an unversioned
// checkpoint (which may lack what the oldest format did not keep) with the
// fold of the whole history, checked as audit verify checks it, and seals
// the active segment, so that the next start reads a checkpoint of this
// format (records/stateformat.go). A history that does not verify refuses the
// journal, as audit verify would.
func (j *Journal) upgradeLocked() error {
	live, err := readHistory(j.path, func(records.Record) error { return nil }, true)
	if err != nil {
		var be *BrokenError
		if errors.As(err, &be) {
			return j.unavailable(be, fmt.Sprintf("the journal was written by an earlier walletgate, whose checkpoint this one replaces with the history folded again, and that history does not verify: %v", be))
		}
		return j.unavailable(err, fmt.Sprintf("the journal was written by an earlier walletgate, whose checkpoint this one replaces with the history folded again, and reading that history failed: %v", err))
	}
	if live.Seq() != j.chain.seq {
		return j.unavailable(nil, fmt.Sprintf("the journal's history ends at record %d, but %s at %d", live.Seq(), j.path, j.chain.seq))
	}
	j.live = live
	if err := j.rotateLocked(); err != nil && j.broken != nil {
		return err
	}
	// A sealing that failed leaves the segment open, and the live state
	// right: the next start folds the history again.
	return nil
}

// catchUpLocked reads and verifies what was appended to the active segment
// since j last looked, following a rotation by another process, and folds it.
func (j *Journal) catchUpLocked(each func(records.Record, string)) error {
	fi, err := os.Stat(j.path)
	if err != nil || !os.SameFile(fi, j.fileInfo) {
		return j.followLocked(err, each)
	}
	size := fi.Size()
	if size < j.chain.size {
		return j.breakLocked(j.unavailable(nil, fmt.Sprintf("%s shrank from %d to %d bytes while walletgate was running", j.path, j.chain.size, size)))
	}
	if size == j.chain.size {
		return nil
	}
	return j.readOnLocked(j.file, size, each)
}

// readOnLocked reads file (the segment j.chain describes) from where the
// chain ends to size, and folds what it reads. A broken line breaks j.
func (j *Journal) readOnLocked(file *os.File, size int64, each func(records.Record, string)) error {
	c := j.chain
	var ferr error
	err := c.read(io.NewSectionReader(file, j.chain.size, size-j.chain.size), func(r records.Record, hash string) {
		if ferr == nil {
			ferr = foldInto(&j.live, r, c.path, c.lines+1)
		}
		if each != nil {
			each(r, hash)
		}
	})
	// c and the live state both stop at the last line that verified.
	j.chain = c
	if err == nil {
		err = ferr
	}
	var be *BrokenError
	if errors.As(err, &be) {
		return j.breakLocked(j.unavailable(be, be.Error()))
	}
	if err != nil {
		return j.breakLocked(j.unavailable(err, fmt.Sprintf("reading %s failed: %v", j.path, err)))
	}
	return nil
}

// createLocked creates an empty journal, then its head.
func (j *Journal) createLocked() error {
	f, err := openNoFollow(j.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("journal: create: %w", err)
	}
	j.file = f
	if j.fileInfo, err = f.Stat(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := syncFile(f); err != nil {
		return fmt.Errorf("journal: fsync %s: %w", j.path, err)
	}
	return j.writeHeadLocked() // its fsync of the directory covers the journal too
}

func (j *Journal) writeHeadLocked() error {
	return writeHead(j.headPath, j.tmpPath, j.dirFile, head{Seq: j.chain.seq, Hash: j.chain.hash})
}

// unavailable returns the *UnavailableError for a journal whose content is
// wrong, with cause as its cause.
func (j *Journal) unavailable(cause error, reason string) *UnavailableError {
	return &UnavailableError{Path: j.path, Reason: reason, Fix: restoreFix(j.dir, j.path), err: cause}
}

// breakLocked makes j refuse every later call with u, and returns u.
func (j *Journal) breakLocked(u *UnavailableError) *UnavailableError {
	j.broken = u
	return u
}

// lock takes the flock (LOCK_EX or LOCK_SH) and checks that the lock file is
// still the one every process opens: a lock on a deleted or replaced file
// would exclude nobody.
func (j *Journal) lock(how int) (unlock func(), err error) {
	if err := flock(j.lockFile, how); err != nil {
		return nil, fmt.Errorf("journal: lock %s: %w", j.lockPath, err)
	}
	unlock = func() { _ = flock(j.lockFile, lockUn) }
	fi, err := os.Stat(j.lockPath)
	if err != nil || !os.SameFile(fi, j.lockInfo) {
		unlock()
		return nil, j.breakLocked(&UnavailableError{Path: j.lockPath,
			Reason: fmt.Sprintf("lock file %s was removed or replaced while walletgate was running, so it no longer keeps processes apart", j.lockPath),
			Fix:    "stop every walletgate process using " + j.dir + ", then start them again"})
	}
	return unlock, nil
}

// usableLocked refuses a nil, zero, closed or broken Journal.
func (j *Journal) usableLocked() error {
	if j.broken != nil {
		return j.broken
	}
	if j.file == nil {
		return fmt.Errorf("journal %s: %w", j.path, os.ErrClosed)
	}
	return nil
}

// begin takes mu and the flock and refreshes the chain; end undoes it.
func (j *Journal) begin(how int) (end func(), err error) {
	if j == nil {
		return nil, fmt.Errorf("journal: nil: %w", os.ErrClosed)
	}
	j.mu.Lock()
	if err := j.usableLocked(); err != nil {
		j.mu.Unlock()
		return nil, err
	}
	unlock, err := j.lock(how)
	if err != nil {
		j.mu.Unlock()
		return nil, err
	}
	if err := j.catchUpLocked(nil); err != nil {
		unlock()
		j.mu.Unlock()
		return nil, err
	}
	return func() { unlock(); j.mu.Unlock() }, nil
}

// Append records one event of the given kind, with data marshalled by
// encoding/json (nil for none), and returns the record. Under the exclusive
// lock it first reads and verifies what other processes appended, then
// writes the line in one write, fsyncs the journal, and replaces the head
// (temporary file, fsync, rename, fsync of the directory).
//
// Only a nil error means the record is durable and the action it announces
// may go ahead. A line over 1 MiB is refused and nothing written. If the
// head cannot be updated, the record is durable but Append returns it with
// the error; a later append or Open catches the head up. A failed fsync
// leaves the journal's state on disk unknown, so the Journal refuses every
// later call with an *UnavailableError.
//
// The fsync also makes every record before it durable, those of
// AppendUnsynced included.
func (j *Journal) Append(kind string, data any) (records.Record, error) {
	end, err := j.begin(lockEx)
	if err != nil {
		return records.Record{}, err
	}
	defer end()
	return j.appendLocked(kind, data, true)
}

// AppendUnsynced is Append without an fsync or a head update of its own,
// for records nothing waits on (a read's tool_start and tool_end): the next
// Append, Close or every 256th unsynced record makes them durable. A crash of
// the process loses nothing (the line is written); a power cut may lose
// these records, never one written by Append. Its error says the record was
// not written.
func (j *Journal) AppendUnsynced(kind string, data any) (records.Record, error) {
	end, err := j.begin(lockEx)
	if err != nil {
		return records.Record{}, err
	}
	defer end()
	return j.appendLocked(kind, data, j.unsynced+1 >= maxUnsynced)
}

func (j *Journal) appendLocked(kind string, data any, sync bool) (records.Record, error) {
	if j.broken != nil {
		return records.Record{}, j.broken
	}
	if kind == "" {
		return records.Record{}, errors.New("journal: append: empty kind")
	}
	if kind == records.KindCheckpoint {
		return records.Record{}, errors.New("journal: append: checkpoints are written by the journal")
	}
	written, err := j.writeLocked(kind, data, maxLine)
	if err != nil {
		return records.Record{}, err
	}
	if err := foldInto(&j.live, written, j.path, j.chain.lines); err != nil {
		return records.Record{}, j.breakLocked(j.unavailable(err, err.Error()))
	}
	reached("append: line written")
	if !sync {
		j.unsynced++
		if j.chain.tail() >= j.segSize {
			sync = true
		} else {
			return written, nil
		}
	}
	if err := j.syncLocked(written.Seq); err != nil {
		return records.Record{}, err
	}
	reached("append: synced")
	return written, j.headAndSealLocked(written.Seq)
}

// headAndSealLocked follows the fsync of record seq, the last one: the head
// names it, and a segment grown to its size is sealed.
func (j *Journal) headAndSealLocked(seq uint64) error {
	if err := j.writeHeadLocked(); err != nil {
		return fmt.Errorf("journal: record %d is written, but the head is not: %w", seq, err)
	}
	if j.chain.tail() >= j.segSize {
		// A sealing that fails leaves the segment open and the record
		// durable; only one that broke j is the caller's concern.
		if err := j.rotateLocked(); err != nil && j.broken != nil {
			return fmt.Errorf("journal: record %d is written, but sealing the segment failed: %w", seq, err)
		}
	}
	return nil
}

// writeLocked builds the next record and writes its line to the active
// segment, without an fsync; the line may be at most limit bytes.
func (j *Journal) writeLocked(kind string, data any, limit int) (records.Record, error) {
	rec := records.Record{
		Seq:     j.chain.seq + 1,
		Time:    j.now().UTC(),
		PID:     j.pid,
		Session: j.session,
		Kind:    kind,
		Prev:    j.chain.hash,
	}
	if data != nil {
		raw, err := json.Marshal(data)
		if err != nil {
			return records.Record{}, fmt.Errorf("journal: append %s: data: %w", kind, err)
		}
		rec.Data = raw
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return records.Record{}, fmt.Errorf("journal: append %s: %w", kind, err)
	}
	if len(line) > limit {
		return records.Record{}, fmt.Errorf("journal: append %s: the record is %d bytes; the limit is %d", kind, len(line), limit)
	}
	// What a reader will decode, so that the caller holds the same record.
	var written records.Record
	if err := json.Unmarshal(line, &written); err != nil {
		return records.Record{}, fmt.Errorf("journal: append %s: %w", kind, err)
	}
	if n, err := j.file.Write(append(line, '\n')); err != nil {
		if n == 0 {
			return records.Record{}, fmt.Errorf("journal: append %s: %w", kind, err)
		}
		// Nobody else writes while we hold the lock: cut the torn line off.
		if terr := j.file.Truncate(j.chain.size); terr != nil {
			return records.Record{}, j.breakLocked(j.unavailable(err, fmt.Sprintf("writing record %d to %s failed (%v), and cutting off the partial line failed too (%v)", rec.Seq, j.path, err, terr)))
		}
		return records.Record{}, fmt.Errorf("journal: append %s: %w", kind, err)
	}
	if j.chain.lines == 0 {
		j.chain.first, j.chain.firstPrev = written.Seq, written.Prev
	}
	j.chain.lines++
	j.chain.seq = written.Seq
	j.chain.hash = hashLine(line)
	j.chain.size += int64(len(line)) + 1
	return written, nil
}

// syncLocked fsyncs the active segment; a failure breaks j.
func (j *Journal) syncLocked(seq uint64) error {
	if err := syncFile(j.file); err != nil {
		return j.breakLocked(&UnavailableError{Path: j.path,
			Reason: fmt.Sprintf("fsync of %s failed after writing record %d (%v): whether it is on disk is unknown", j.path, seq, err),
			Fix:    fmt.Sprintf("check the disk holding %s (space, errors), then restart walletgate; `walletgate audit verify %s` shows what was kept", j.dir, j.path),
			err:    err})
	}
	j.unsynced = 0
	return nil
}

// Update runs fn under the exclusive lock with the live state folded from
// every record so far, from all processes, refreshed and verified, and lets
// fn append records atomically with what it read: the way to read the day's
// spend, check it, and record a reservation without another process slipping
// in between. Each record appendRecord writes (durably, as Append) is folded
// into live before appendRecord returns.
//
// live belongs to the Journal: fn must not keep it, or anything in it, after
// it returns, nor change it. appendRecord works only until fn returns. fn
// must not call j's methods, which would wait for the lock fn holds. Records
// appended before fn returns an error stay: a journal is never rewritten.
func (j *Journal) Update(fn func(live *records.Live, appendRecord records.AppendFunc) error) error {
	end, err := j.begin(lockEx)
	if err != nil {
		return err
	}
	defer end()
	var (
		amu  sync.Mutex
		done bool
	)
	appendRecord := func(kind string, data any) (records.Record, error) {
		amu.Lock()
		defer amu.Unlock()
		if done {
			return records.Record{}, errors.New("journal: appendRecord called after Update returned")
		}
		return j.appendLocked(kind, data, true)
	}
	defer func() {
		amu.Lock()
		done = true
		amu.Unlock()
	}()
	return fn(&j.live, appendRecord)
}

// View runs fn under the shared lock with the live state, refreshed and
// verified. The rules of Update's live apply.
func (j *Journal) View(fn func(live *records.Live) error) error {
	end, err := j.begin(lockSh)
	if err != nil {
		return err
	}
	defer end()
	return fn(&j.live)
}

// Records returns the records of the active segment (the history since its
// checkpoint, the checkpoint included), from all processes, refreshed and
// verified under the shared lock and read back from disk: the Journal keeps
// no records in memory. The slice is the caller's. Sealed segments are read
// by ReadDir.
func (j *Journal) Records() ([]records.Record, error) {
	end, err := j.begin(lockSh)
	if err != nil {
		return nil, err
	}
	defer end()
	var out []records.Record
	c := newChain(j.path)
	err = c.read(io.NewSectionReader(j.file, 0, j.chain.size), func(r records.Record, _ string) { out = append(out, r) })
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return out, nil
}

// Path is the journal file's path.
func (j *Journal) Path() string { return j.path }

// SealIfLonger seals the active segment when more than n bytes of records
// follow its checkpoint, so that the next Open reads at most about n. A
// stopping walletgate calls it after its last record: the sealing (a
// checkpoint and a few fsyncs) is then paid when nobody waits, not by the
// next start. If sealing fails the segment stays open and nothing is lost;
// the error says why.
func (j *Journal) SealIfLonger(n int64) error {
	end, err := j.begin(lockEx)
	if err != nil {
		return err
	}
	defer end()
	if j.chain.tail() <= n {
		return nil
	}
	return j.rotateLocked()
}

// StopTail is the tail SealIfLonger leaves to the next start when a
// walletgate stops: reading it costs that start about 0.3 ms.
const StopTail = 16 << 10

// Close closes the journal's files, releasing any lock. Later calls fail; a
// second Close does nothing.
func (j *Journal) Close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.file != nil && j.broken == nil && j.unsynced > 0 {
		// Make the unsynced records durable, and the head current.
		// Catch up first: a head written from a stale chain would move
		// backwards past what other processes appended.
		if unlock, err := j.lock(lockEx); err == nil {
			if j.catchUpLocked(nil) == nil && j.syncLocked(j.chain.seq) == nil {
				_ = j.writeHeadLocked()
			}
			unlock()
		}
	}
	return j.closeFiles()
}

func (j *Journal) closeFiles() error {
	var errs []error
	for _, f := range []**os.File{&j.file, &j.dirFile, &j.lockFile} {
		if *f != nil {
			errs = append(errs, (*f).Close())
			*f = nil
		}
	}
	return errors.Join(errs...)
}
