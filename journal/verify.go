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
)

// BrokenError reports the first problem in a journal's chain. Line is
// 1-based; it is 0 when the problem is not on a line.
type BrokenError struct {
	Path   string
	Line   int
	Reason string
}

func (e *BrokenError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Reason)
}

// Verify checks the whole chain of the journal file at path and returns the
// number of records (on error, the number before the line it names). The
// first problem is a *BrokenError naming its 1-based line: a line that is
// not a JSON record, a seq that is not the previous one plus 1 (a line
// deleted, inserted or moved), a prev that is not the hash of the line before
// (that line was edited), or a last line without its newline (a torn write).
// Unknown fields are allowed.
//
// When path is named FileName and a head file lies next to it, Verify also
// checks the end of the chain against it, so that a removed or edited last
// line is found too; a journal longer than its head (a crash between an append
// and the head update) is fine. A copy under another name is checked by its
// chain alone. If a lock file lies next to it, Verify holds it shared, so a
// running walletgate's append in progress is not mistaken for a torn line.
// Verify creates and changes nothing.
func Verify(path string) (int, error) {
	n := 0
	err := readFile(path, func(Record) { n++ })
	return soundPrefix(n, err), err
}

// ReadFile returns the records of the journal file at path, checked as Verify
// checks them. If the chain is broken it returns the records before the
// broken line with the *BrokenError, for an operator to inspect what is still
// sound. Like Verify, it creates and changes nothing.
func ReadFile(path string) ([]Record, error) {
	var records []Record
	err := readFile(path, func(r Record) { records = append(records, r) })
	return records[:soundPrefix(len(records), err)], err
}

// soundPrefix is how many of the n records read come before the line err
// names. A line is only known to be edited once the next is read, so the
// count may need to shrink.
func soundPrefix(n int, err error) int {
	var b *BrokenError
	if errors.As(err, &b) && b.Line > 0 {
		return min(n, b.Line-1)
	}
	return n
}

func readFile(path string, each func(Record)) error {
	dir := filepath.Dir(path)
	sibling := filepath.Base(path) == FileName
	if sibling {
		unlock, err := lockIfPresent(filepath.Join(dir, LockName))
		if err != nil {
			return err
		}
		defer unlock()
	}
	var h head
	hasHead := false
	if sibling {
		var err error
		h, hasHead, err = readHead(filepath.Join(dir, HeadName), false)
		if err != nil {
			return err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("verify journal: %w", err)
	}
	defer f.Close()
	c := newChain(path)
	headHash := genesisHash
	err = c.read(f, func(r Record, hash string) {
		if r.Seq == h.Seq {
			headHash = hash
		}
		each(r)
	})
	if err != nil || !hasHead {
		return err
	}
	if b := c.checkHead(h, headHash, filepath.Join(dir, HeadName)); b != nil {
		return b
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
	path  string
	lines int    // lines read: the number of the last one
	seq   uint64 // seq of the last record; equal to lines
	hash  string // hash of the last line, or genesisHash
	size  int64  // bytes read, newlines included
}

func newChain(path string) chain {
	return chain{path: path, hash: genesisHash}
}

func (c *chain) broken(line int, format string, args ...any) *BrokenError {
	return &BrokenError{Path: c.path, Line: line, Reason: fmt.Sprintf(format, args...)}
}

// read reads lines from r, which continues the chain c has read so far, and
// calls each with every record and its line's hash. It advances c only past
// lines that verify, so on a *BrokenError c still describes the sound prefix.
// Any other error is from reading r.
func (c *chain) read(r io.Reader, each func(r Record, hash string)) error {
	torn := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine+1) // +1: the newline
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
		line := sc.Bytes()
		n := c.lines + 1
		if torn {
			return c.broken(n, "incomplete last line (no newline at the end): a write was cut short")
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return c.broken(n, "not a JSON record: %v", err)
		}
		if rec.Seq != c.seq+1 {
			return c.broken(n, "seq is %d, expected %d: a line was deleted, inserted or moved here", rec.Seq, c.seq+1)
		}
		if rec.Prev != c.hash {
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
		hash := hashLine(line)
		each(rec, hash)
		c.lines, c.seq, c.hash = n, rec.Seq, hash
		c.size += int64(len(line)) + 1
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return c.broken(c.lines+1, "longer than %d bytes", maxLine)
		}
		return fmt.Errorf("read %s: %w", c.path, err)
	}
	return nil
}

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
		return c.broken(int(h.Seq), "does not match the hash in %s: the line was edited, or the journal was replaced", headPath)
	}
	return nil
}
