package journal

// Locking: mu serialises a Journal's callers and guards its cached chain; the
// flock on the lock file serialises processes (and Journals). Every call takes
// mu, then the flock, then catches up with what others appended (refresh)
// before it reads or appends. Methods ending in Locked need both held.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Journal is an open journal. It is safe for concurrent use within a
// process, and any number of processes may open the same directory. The zero
// Journal, and a nil *Journal, refuse every call.
type Journal struct {
	dir, path, headPath, tmpPath, lockPath string

	session string
	pid     int
	now     func() time.Time

	mu       sync.Mutex
	file     *os.File    // the journal, O_APPEND; nil when closed
	fileInfo os.FileInfo // to notice the journal being replaced
	lockFile *os.File
	lockInfo os.FileInfo // to notice the lock file being replaced
	dirFile  *os.File    // for fsync after renaming the head
	records  []Record    // every record so far; elements are never changed
	chain    chain       // the verified chain: its end and size
	broken   *UnavailableError
}

// Open opens the journal in dir, creating dir (0700, with missing parents)
// and the journal when they are absent. session identifies this process in
// every record it appends; now is the clock (nil means time.Now).
//
// An existing dir or file that group or others may access, or that another
// user owns, is refused with the chmod to run. Open verifies the whole
// chain. It returns an *UnavailableError, never a fresh journal, if the head
// exists but the journal does not, if the journal ends before the head's seq,
// if the head's hash does not match that record, if the head is missing from
// a journal with records, or if any line is broken. A journal with more
// records than its head (a crash between an append and the head update) is
// accepted, and the head repaired.
func Open(dir, session string, now func() time.Time) (*Journal, error) {
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
	if err := prepareDir(dir); err != nil {
		return nil, err
	}
	j := &Journal{
		dir:      dir,
		path:     filepath.Join(dir, FileName),
		headPath: filepath.Join(dir, HeadName),
		tmpPath:  filepath.Join(dir, HeadName+".tmp"),
		lockPath: filepath.Join(dir, LockName),
		session:  session,
		pid:      os.Getpid(),
		now:      now,
		chain:    newChain(filepath.Join(dir, FileName)),
	}
	if err := j.open(); err != nil {
		j.closeFiles()
		return nil, err
	}
	return j, nil
}

// open opens the lock file and the directory, then loads the journal under
// the exclusive lock.
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
	unlock, err := j.lock(lockEx)
	if err != nil {
		return err
	}
	defer unlock()
	return j.loadLocked()
}

// loadLocked opens, or creates, the journal and checks it against the head.
func (j *Journal) loadLocked() error {
	h, hasHead, err := readHead(j.headPath, true)
	var be *BrokenError
	if errors.As(err, &be) {
		return j.unavailable(be, be.Error())
	}
	if err != nil {
		return err
	}
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
	if err := checkPrivate(f, j.path, false); err != nil {
		return err
	}
	if j.fileInfo, err = f.Stat(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}

	headHash := genesisHash
	err = j.chain.read(f, func(r Record, hash string) {
		if r.Seq == h.Seq {
			headHash = hash
		}
		j.records = append(j.records, r)
	})
	if errors.As(err, &be) {
		return j.unavailable(be, be.Error())
	}
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if !hasHead {
		if j.chain.seq > 0 {
			return j.unavailable(nil, fmt.Sprintf("%s is missing, but %s has %d records", j.headPath, j.path, j.chain.seq))
		}
		// A crash while creating the journal: the empty journal was
		// created, the head not yet.
		return j.writeHeadLocked()
	}
	if be := j.chain.checkHead(h, headHash, j.headPath); be != nil {
		return j.unavailable(be, be.Error())
	}
	if h.Seq < j.chain.seq {
		return j.writeHeadLocked() // a crash between an append and its head update
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
	if err := j.refreshLocked(); err != nil {
		unlock()
		j.mu.Unlock()
		return nil, err
	}
	return func() { unlock(); j.mu.Unlock() }, nil
}

// refreshLocked reads and verifies what other processes appended since j
// last looked. A journal that was replaced, shrank or no longer verifies
// breaks j.
func (j *Journal) refreshLocked() error {
	fi, err := os.Stat(j.path)
	if err != nil || !os.SameFile(fi, j.fileInfo) {
		return j.breakLocked(j.unavailable(err, fmt.Sprintf("%s was removed or replaced while walletgate was running", j.path)))
	}
	size := fi.Size()
	if size < j.chain.size {
		return j.breakLocked(j.unavailable(nil, fmt.Sprintf("%s shrank from %d to %d bytes while walletgate was running", j.path, j.chain.size, size)))
	}
	if size == j.chain.size {
		return nil
	}
	c := j.chain
	var fresh []Record
	err = c.read(io.NewSectionReader(j.file, j.chain.size, size-j.chain.size), func(r Record, _ string) {
		fresh = append(fresh, r)
	})
	var be *BrokenError
	if errors.As(err, &be) {
		return j.breakLocked(j.unavailable(be, be.Error()))
	}
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.chain = c
	j.records = append(j.records, fresh...)
	return nil
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
func (j *Journal) Append(kind string, data any) (Record, error) {
	end, err := j.begin(lockEx)
	if err != nil {
		return Record{}, err
	}
	defer end()
	return j.appendLocked(kind, data)
}

func (j *Journal) appendLocked(kind string, data any) (Record, error) {
	if j.broken != nil {
		return Record{}, j.broken
	}
	if kind == "" {
		return Record{}, errors.New("journal: append: empty kind")
	}
	rec := Record{
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
			return Record{}, fmt.Errorf("journal: append %s: data: %w", kind, err)
		}
		rec.Data = raw
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return Record{}, fmt.Errorf("journal: append %s: %w", kind, err)
	}
	if len(line) > maxLine {
		return Record{}, fmt.Errorf("journal: append %s: the record is %d bytes; the limit is %d", kind, len(line), maxLine)
	}
	// What a reader will decode, so that the caller holds the same record.
	var written Record
	if err := json.Unmarshal(line, &written); err != nil {
		return Record{}, fmt.Errorf("journal: append %s: %w", kind, err)
	}

	if n, err := j.file.Write(append(line, '\n')); err != nil {
		if n == 0 {
			return Record{}, fmt.Errorf("journal: append %s: %w", kind, err)
		}
		// Nobody else writes while we hold the lock: cut the torn line off.
		if terr := j.file.Truncate(j.chain.size); terr != nil {
			return Record{}, j.breakLocked(j.unavailable(err, fmt.Sprintf("writing record %d to %s failed (%v), and cutting off the partial line failed too (%v)", rec.Seq, j.path, err, terr)))
		}
		return Record{}, fmt.Errorf("journal: append %s: %w", kind, err)
	}
	if err := syncFile(j.file); err != nil {
		return Record{}, j.breakLocked(&UnavailableError{Path: j.path,
			Reason: fmt.Sprintf("fsync of %s failed after writing record %d (%v): whether it is on disk is unknown", j.path, rec.Seq, err),
			Fix:    fmt.Sprintf("check the disk holding %s (space, errors), then restart walletgate; `walletgate audit verify %s` shows what was kept", j.dir, j.path),
			err:    err})
	}
	j.chain.lines++
	j.chain.seq = written.Seq
	j.chain.hash = hashLine(line)
	j.chain.size += int64(len(line)) + 1
	j.records = append(j.records, written)
	if err := j.writeHeadLocked(); err != nil {
		return written, fmt.Errorf("journal: record %d is written, but the head is not: %w", written.Seq, err)
	}
	return written, nil
}

// Update runs fn under the exclusive lock with every record so far, from all
// processes, refreshed and verified, and lets fn append records atomically
// with what it read: the way to read the day's spend, check it, and record a
// reservation without another process slipping in between.
//
// records is shared with the Journal, not copied: fn must not change its
// elements (keeping it is fine; the Journal never changes them either).
// appendRecord works as Append, but only until fn returns, and does not add
// to records. fn must not call j's methods, which would wait for the lock fn
// holds. Records appended before fn returns an error stay: a journal is never
// rewritten.
func (j *Journal) Update(fn func(records []Record, appendRecord func(kind string, data any) (Record, error)) error) error {
	end, err := j.begin(lockEx)
	if err != nil {
		return err
	}
	defer end()
	var (
		amu  sync.Mutex
		done bool
	)
	appendRecord := func(kind string, data any) (Record, error) {
		amu.Lock()
		defer amu.Unlock()
		if done {
			return Record{}, errors.New("journal: appendRecord called after Update returned")
		}
		return j.appendLocked(kind, data)
	}
	defer func() {
		amu.Lock()
		done = true
		amu.Unlock()
	}()
	n := len(j.records)
	return fn(j.records[:n:n], appendRecord)
}

// Records returns every record so far, from all processes, refreshed and
// verified under the shared lock. The slice is the caller's.
func (j *Journal) Records() ([]Record, error) {
	end, err := j.begin(lockSh)
	if err != nil {
		return nil, err
	}
	defer end()
	return append([]Record(nil), j.records...), nil
}

// Path is the journal file's path.
func (j *Journal) Path() string { return j.path }

// Close closes the journal's files, releasing any lock. Later calls fail; a
// second Close does nothing.
func (j *Journal) Close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
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
