package journal

// Reading and verifying a chain. A chain is read as a stream of lines, each
// checked against the one before it; the first problem stops the read and is
// reported as a *BrokenError naming the line a person should look at.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/walletgate/walletgate/journal/records"
)

// BrokenError reports the first problem in a journal's chain. Line is
// 1-based; it is 0 when the problem is not on a line.
type BrokenError struct {
	Path   string
	Line   int
	Reason string
	Seq    uint64 // the seq the problem is at, when known: what is sound ends before it
	// Torn says the problem is an incomplete last line (no newline at the
	// end: a write cut short), the one RepairTornLine cuts.
	Torn bool
}

func (e *BrokenError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Reason)
}

// Verify checks the whole chain of the journal file at path and returns the
// number of records (on error, the number before the line it names). The
// first problem is a *BrokenError naming its file and 1-based line: a line
// that is not a JSON record, a seq that is not the previous one plus 1 (a line
// deleted, inserted or moved, or a segment missing), a prev that is not the
// hash of the line before (that line was edited), a last line without its
// newline (a torn write), a record the live state cannot fold, or a
// checkpoint that does not match the history before it. Unknown fields are
// allowed.
//
// When path is named FileName, Verify checks the state directory as Open
// would: every sealed segment beside it first, in order, then path; the
// directory's and the files' permissions; and the end of the chain against
// the head file, so that a removed or edited last line, or a missing head, is
// found too. A journal longer than its head (a crash between an append and
// the head update) is fine. A copy under another name is checked by its
// chain alone. If a lock file lies next to it, Verify holds it shared, so a
// running walletgate's append in progress is not mistaken for a torn line.
// Verify creates and changes nothing.
func Verify(path string) (int, error) {
	n, first := 0, uint64(0)
	err := readChain(path, func(r records.Record) error {
		if n == 0 {
			first = r.Seq
		}
		n++
		return nil
	}, false, true, &records.Live{})
	var b *BrokenError
	if errors.As(err, &b) && b.Seq > 0 && n > 0 {
		n = min(n, int(max(b.Seq, first)-first))
	}
	return n, err
}

// ReadFile returns the records of the journal file at path (with its sealed
// segments, as Verify reads them), checked as Verify checks them. If the
// chain is broken it returns the records before the broken line with the
// *BrokenError, for an operator to inspect what is still sound. Like Verify,
// it creates and changes nothing. It holds every record: Walk does not.
func ReadFile(path string) ([]records.Record, error) {
	var recs []records.Record
	err := readFile(path, func(r records.Record) error { recs = append(recs, r); return nil })
	var b *BrokenError
	if errors.As(err, &b) && b.Seq > 0 {
		for len(recs) > 0 && recs[len(recs)-1].Seq >= b.Seq {
			recs = recs[:len(recs)-1]
		}
	}
	return recs, err
}

// Walk calls each with every record of the journal file at path (with its
// sealed segments), checked as Verify checks them, and stops at the first
// problem or error of each. A record of a line later found edited has been
// passed to each by then: the error says which line.
func Walk(path string, each func(records.Record) error) error {
	return readFile(path, each)
}

func readFile(path string, each func(records.Record) error) error {
	return readChain(path, each, false, false, &records.Live{})
}

// readHistory reads the journal file at path as Verify does and returns
// the live state folded from it (this build's fold: see records/stateformat.go).
// With locked set, the caller holds the journal's lock.
func readHistory(path string, each func(records.Record) error, locked bool) (records.Live, error) {
	var live records.Live
	err := readChain(path, each, locked, true, &live)
	return live, err
}

// readChain is readFile (and readHistory): it folds into live. With
// skipData set, each gets the records without the data of the kinds the
// live state does not fold (dataUnread).
func readChain(path string, each func(records.Record) error, locked, skipData bool, live *records.Live) error {
	dir := filepath.Dir(path)
	sibling := filepath.Base(path) == FileName
	files := []string{path}
	var h head
	hasHead := false
	if sibling {
		var err error
		unlock := func() {}
		if !locked {
			if unlock, err = lockIfPresent(filepath.Join(dir, LockName)); err != nil {
				return err
			}
		}
		defer unlock()
		if fi, err := os.Stat(dir); err == nil {
			if err := private(fi, dir, true); err != nil {
				return err
			}
		}
		if h, hasHead, err = readHead(filepath.Join(dir, HeadName), true); err != nil {
			return err
		}
		if files, err = Segments(dir); err != nil {
			return err
		}
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) && hasHead {
			return &BrokenError{Path: path, Reason: fmt.Sprintf("missing, but %s says the journal had %d records", filepath.Join(dir, HeadName), h.Seq)}
		}
	}
	c := newChain(files[0]) // a copy may be any one segment
	if sibling {
		c = strictChain(files[0])
	}
	headHash := genesisHash
	// live is this build's fold of the history; legacy, while the last
	// checkpoint read was unversioned, the state the build before versions
	// that wrote it held (records/stateformat.go).
	var legacy *records.Live
	// Segments are parsed (JSON and hashes) ahead, up to two at once, while
	// this goroutine checks the chain and folds in order.
	done := make(chan struct{})
	defer close(done)
	const lookahead = 2
	aheads := make([]*ahead, len(files))
	for i, file := range files {
		for k := i; k < min(len(files), i+lookahead); k++ {
			if aheads[k] == nil {
				aheads[k] = parseAhead(files[k], sibling, &lineParser{skipData: skipData}, done)
			}
		}
		if i > 0 {
			c.nextFile(file)
		}
		var ferr error
		cb := func(r records.Record, hash string) {
			if ferr != nil {
				return
			}
			if r.Seq == h.Seq {
				headHash = hash
			}
			line := c.lines + 1
			if ferr = checkSegmentStart(&c, i, files, r, line, live, &legacy); ferr != nil {
				return
			}
			if r.Kind != records.KindCheckpoint {
				if ferr = foldInto(live, r, file, line); ferr != nil {
					return
				}
				if legacy != nil {
					if ferr = foldInto(legacy, r, file, line); ferr != nil {
						return
					}
				}
			}
			ferr = each(r)
		}
		a := aheads[i]
		for batch := range a.batches {
			for _, p := range batch {
				if err := c.link(p, cb); err != nil {
					return err
				}
				if ferr != nil {
					return ferr
				}
			}
			clear(batch)
			select {
			case a.free <- batch:
			default:
			}
		}
		if a.tooLong {
			return c.tooLong()
		}
		if a.err != nil {
			return a.err
		}
		aheads[i] = nil
	}
	if !hasHead {
		if sibling && c.seq > 0 {
			return &BrokenError{Path: filepath.Join(dir, HeadName), Reason: fmt.Sprintf("missing, but the journal has %d records: walletgate refuses writes until it is restored", c.seq)}
		}
		return nil
	}
	if b := c.checkHead(h, headHash, filepath.Join(dir, HeadName)); b != nil {
		return b
	}
	return nil
}

// ahead is a segment being parsed ahead of the chain check. err and
// tooLong are set before batches is closed.
type ahead struct {
	batches chan []parsed
	free    chan []parsed // batches read, for the parser to fill again
	err     error
	tooLong bool
}

var errTooLong = errors.New("line too long")

// parseAhead opens file (checking its permissions when private) and
// parses its lines into batches, until done is closed.
func parseAhead(file string, private bool, lp *lineParser, done <-chan struct{}) *ahead {
	a := &ahead{batches: make(chan []parsed, 8), free: make(chan []parsed, 8)}
	go func() {
		defer close(a.batches)
		f, err := openNoFollow(file, os.O_RDONLY, 0)
		if err != nil {
			a.err = fmt.Errorf("verify journal: %w", err)
			return
		}
		defer f.Close()
		if private {
			if err := checkPrivate(f, file, false); err != nil {
				a.err = err
				return
			}
		}
		errStop := errors.New("stopped")
		batch := make([]parsed, 0, 512)
		send := func() error {
			select {
			case a.batches <- batch:
				select {
				case batch = <-a.free:
					batch = batch[:0]
				default:
					batch = make([]parsed, 0, 512)
				}
				return nil
			case <-done:
				return errStop
			}
		}
		err = scanLines(f, lp, func(p parsed) error {
			batch = append(batch, p)
			if len(batch) == cap(batch) {
				return send()
			}
			return nil
		}, func() error { return errTooLong })
		if errors.Is(err, errStop) {
			return
		}
		if len(batch) > 0 && send() != nil {
			return
		}
		if errors.Is(err, errTooLong) {
			a.tooLong = true
		} else if err != nil {
			a.err = fmt.Errorf("verify journal: %s: %w", file, err)
		}
	}()
	return a
}

// checkSegmentStart checks a checkpoint against the state its writer held
// (records/stateformat.go), and that every segment after the first begins with one
// naming the segment before it. It leaves live (and legacy) as the state
// after the checkpoint.
func checkSegmentStart(c *chain, i int, files []string, r records.Record, line int, live *records.Live, legacy **records.Live) error {
	if r.Kind != records.KindCheckpoint {
		if line == 1 && i > 0 {
			return &BrokenError{Path: c.path, Line: line, Seq: r.Seq, Reason: "a sealed segment's successor must begin with a checkpoint"}
		}
		return nil
	}
	broken := func(reason string) error {
		return &BrokenError{Path: c.path, Line: line, Seq: r.Seq, Reason: reason}
	}
	var cp records.Checkpoint
	if err := records.DecodeInto(r, &cp); err != nil {
		return broken(err.Error())
	}
	if line == 1 && i > 0 && cp.Sealed != filepath.Base(files[i-1]) {
		return broken(fmt.Sprintf("the checkpoint follows %s, but the segment before it is %s", cp.Sealed, filepath.Base(files[i-1])))
	}
	version, err := records.StateFormat(cp.State)
	if err != nil {
		return broken(err.Error())
	}
	writer := live
	if version == 0 && *legacy != nil {
		writer = *legacy
	}
	want, err := writer.Snapshot()
	if err != nil {
		return err
	}
	if !records.MatchesShape(want, cp.State, version) {
		return broken("the checkpoint's state (day window, open transactions and reservations) does not match the history before it")
	}
	if version == 0 {
		// This build keeps its own fold; a build before versions went on
		// from the checkpoint.
		live.KeepPast(r.Seq)
		next := &records.Live{}
		if err := next.Restore(cp.State, r.Seq); err != nil {
			return broken(err.Error())
		}
		*legacy = next
		return nil
	}
	*legacy = nil
	if err := live.Restore(cp.State, r.Seq); err != nil {
		return broken(err.Error())
	}
	return nil
}

// lockIfPresent takes a shared flock on path if that file exists, and
// returns the function that releases it.
func lockIfPresent(path string) (unlock func(), err error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("verify journal: %w", err)
	}
	if err := flock(f, lockSh); err != nil {
		f.Close()
		return nil, fmt.Errorf("verify journal: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing releases the lock
}

// chain is the state of a chain read so far. Its zero value is not ready:
// use newChain.
type chain struct {
	path      string // the segment being read
	prevPath  string // the segment read before it, if any
	lines     int    // lines of this segment read: the number of the last one
	seq       uint64 // seq of the last record
	hash      string // hash of the last line, or genesisHash
	size      int64  // bytes of this segment read, newlines included
	first     uint64 // seq of this segment's first record; 0 before it is read
	firstPrev string // that record's prev
	cpSize    int64  // the length of its first line if that is a checkpoint
	// loose lets the segment begin with a checkpoint that continues a chain
	// not read here (opening reads the active segment only); the head, or
	// audit verify, checks where it joins.
	loose bool
}

func newChain(path string) chain {
	return chain{path: path, hash: genesisHash, loose: true}
}

// strictChain reads a journal from its first segment: it must begin at seq 1.
func strictChain(path string) chain {
	return chain{path: path, hash: genesisHash}
}

// nextFile makes c continue in the segment at path, whose first record must
// follow the last one read.
func (c *chain) nextFile(path string) {
	c.prevPath, c.path = c.path, path
	c.lines, c.size, c.first, c.firstPrev, c.cpSize, c.loose = 0, 0, 0, "", 0, false
}

// broken reports a problem at line of the segment being read (line 0: not
// on a line); its Seq is that line's, counted from the last one read.
func (c *chain) broken(line int, format string, args ...any) *BrokenError {
	b := &BrokenError{Path: c.path, Line: line, Reason: fmt.Sprintf(format, args...)}
	if line > 0 {
		b.Seq = c.seq + uint64(line) - uint64(c.lines)
	}
	return b
}

// read reads lines from r, which continues the chain c has read so far, and
// calls each with every record and its line's hash. It advances c only past
// lines that verify, so on a *BrokenError c still describes the sound prefix.
// Any other error is from reading r.
func (c *chain) read(r io.Reader, each func(r records.Record, hash string)) error {
	err := scanLines(r, nil, func(p parsed) error { return c.link(p, each) }, c.tooLong)
	var b *BrokenError
	if err != nil && !errors.As(err, &b) {
		return fmt.Errorf("%s: %w", c.path, err)
	}
	return err
}

func (c *chain) tooLong() error {
	return c.broken(c.lines+1, "longer than %d bytes", maxCheckpointLine)
}

// parsed is one line decoded and hashed, not yet checked against the chain:
// parsing needs nothing of the lines before, so it may run ahead (Verify
// parses the next segment while it checks this one).
type parsed struct {
	rec  records.Record
	hash string
	size int64  // the line's length with its newline
	bad  string // why the line is not a record; "" when it is one
	torn bool   // the line is an incomplete last line
}

// scanLines splits r into lines of at most maxCheckpointLine bytes and
// calls each with every one parsed; a last line without a newline is passed
// as bad. A line too long to scan calls tooLong.
func scanLines(r io.Reader, lp *lineParser, each func(parsed) error, tooLong func() error) error {
	torn := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxCheckpointLine+1) // +1: the newline
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			torn = true
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		if err := each(parseLine(sc.Bytes(), torn, lp)); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return tooLong()
		}
		return fmt.Errorf("read: %w", err)
	}
	return nil
}

func parseLine(line []byte, torn bool, lp *lineParser) parsed {
	p := parsed{size: int64(len(line)) + 1}
	if torn {
		p.torn = true
		p.bad = "incomplete last line (no newline at the end): a write was cut short"
		return p
	}
	if len(line) > maxLine && !bytes.Contains(line[:512], []byte(`"kind":"checkpoint"`)) {
		p.bad = fmt.Sprintf("longer than %d bytes", maxLine)
		return p
	}
	if rec, ok := parseEnvelope(line, lp); ok {
		p.rec = rec
	} else if err := json.Unmarshal(line, &p.rec); err != nil {
		p.bad = fmt.Sprintf("not a JSON record: %v", err)
		return p
	}
	if len(line) > maxLine && p.rec.Kind != records.KindCheckpoint {
		p.bad = fmt.Sprintf("longer than %d bytes", maxLine)
		return p
	}
	p.hash = hashLine(line)
	return p
}

// link checks that p continues the chain, advances c past it and calls each.
func (c *chain) link(p parsed, each func(r records.Record, hash string)) error {
	n := c.lines + 1
	if p.bad != "" {
		b := c.broken(n, "%s", p.bad)
		b.Torn = p.torn
		return b
	}
	rec := p.rec
	if n == 1 && c.loose && c.seq == 0 && rec.Kind == records.KindCheckpoint && rec.Seq > 1 {
		// A segment that continues sealed history: take its word for
		// where it joins (checked against the head by Open).
		c.seq, c.hash = rec.Seq-1, rec.Prev
	}
	if rec.Seq != c.seq+1 {
		if n == 1 && c.prevPath != "" {
			return c.broken(n, "seq is %d, expected %d after the last record of %s: a segment is missing, or lines were deleted, inserted or moved", rec.Seq, c.seq+1, c.prevPath)
		}
		return c.broken(n, "seq is %d, expected %d: a line was deleted, inserted or moved here", rec.Seq, c.seq+1)
	}
	if rec.Prev != c.hash {
		if n == 1 && c.prevPath != "" {
			return &BrokenError{Path: c.prevPath, Seq: c.seq, Reason: fmt.Sprintf("its last line does not match the hash line 1 of %s records for it: that line was edited (or line 1's prev was)", c.path)}
		}
		if n == 1 {
			return c.broken(n, "prev is not the hash that starts a journal: the line was edited")
		}
		// Line n is sound as far as its seq shows; what no longer matches
		// is line n-1's bytes. Had line n's prev been edited instead,
		// line n+1 would be reported next, but the common case is an
		// edit of the earlier line.
		return c.broken(n-1, "does not match the hash line %d records for it: line %d was edited (or line %d's prev was)", n, n-1, n)
	}
	if rec.Kind == "" {
		return c.broken(n, "no kind")
	}
	if n == 1 {
		c.first, c.firstPrev = rec.Seq, rec.Prev
		if rec.Kind == records.KindCheckpoint {
			c.cpSize = p.size
		}
	}
	each(rec, p.hash)
	c.lines, c.seq, c.hash = n, rec.Seq, p.hash
	c.size += p.size
	return nil
}

// tail is how many bytes of records follow the segment's checkpoint: what
// the size to seal at counts (a checkpoint may be longer than a segment).
func (c *chain) tail() int64 { return c.size - c.cpSize }

// checkHead compares a completely read chain with its head h, where
// headHash is the hash of the line with seq h.Seq (genesisHash for 0). A
// chain longer than its head is fine.
func (c *chain) checkHead(h head, headHash, headPath string) *BrokenError {
	if h.Seq > c.seq {
		return c.broken(c.lines+1, "missing: %s says the journal has %d records, but it ends after %d: lines were removed from the end, or the journal was replaced", headPath, h.Seq, c.seq)
	}
	if headHash != h.Hash {
		if h.Seq == 0 {
			return c.broken(0, "%s does not hold the hash of an empty journal: it was edited", headPath)
		}
		b := c.broken(0, "does not match the hash in %s: the line was edited, or the journal was replaced", headPath)
		if h.Seq >= c.first && c.first > 0 {
			b.Line = int(h.Seq-c.first) + 1
		}
		b.Seq = h.Seq
		return b
	}
	return nil
}
