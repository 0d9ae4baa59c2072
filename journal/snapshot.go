package journal

// A journal read once, for a command that must change nothing (`walletgate
// policy`). Rules: nothing is created, written, locked exclusively or
// repaired; the history is checked as audit verify checks it, and a journal
// that would refuse writes is an *UnavailableError, as from Open.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/walletgate/walletgate/journal/records"
)

// ErrReadOnly is what a Snapshot answers to every write.
var ErrReadOnly = errors.New("journal: read-only snapshot: nothing may be written through it")

// Snapshot is the live state of a journal as it was when ReadSnapshot read
// it. It has Journal's Append, Update and View, so that what reads a
// journal can read it; Append and Update refuse with ErrReadOnly. Its state
// never changes: a View's fn must not change it either (it gets the
// snapshot's own slices and maps).
type Snapshot struct {
	path string
	live records.Live
}

// ReadSnapshot reads the journal in dir, with its sealed segments, and folds
// its live state, holding the journal's lock shared if there is a lock file
// (so that an append in progress is not read half-written), and changes
// nothing: a directory with no journal yet is an empty state, and is not
// created. A journal the server would refuse (broken, too open, its head
// missing) is an *UnavailableError naming what to do.
func ReadSnapshot(dir string) (*Snapshot, error) {
	path := filepath.Join(dir, FileName)
	s := &Snapshot{path: path}
	_, errFile := os.Lstat(path)
	_, errHead := os.Lstat(filepath.Join(dir, HeadName))
	if errors.Is(errFile, os.ErrNotExist) && errors.Is(errHead, os.ErrNotExist) {
		return s, nil
	}
	live, err := readHistory(path, func(records.Record) error { return nil }, false)
	if err != nil {
		var ue *UnavailableError
		if errors.As(err, &ue) {
			return nil, err
		}
		return nil, &UnavailableError{Path: path, Reason: err.Error(), Fix: restoreFix(dir, path), err: err}
	}
	s.live = live
	return s, nil
}

// Path is the journal file the snapshot was read from.
func (s *Snapshot) Path() string { return s.path }

// View runs fn with the live state as read.
func (s *Snapshot) View(fn func(live *records.Live) error) error {
	l := s.live
	return fn(&l)
}

// Append refuses: a snapshot is read-only.
func (s *Snapshot) Append(kind string, _ any) (records.Record, error) {
	return records.Record{}, fmt.Errorf("%w (a %s record)", ErrReadOnly, kind)
}

// Update refuses: a snapshot is read-only.
func (s *Snapshot) Update(func(live *records.Live, appendRecord records.AppendFunc) error) error {
	return ErrReadOnly
}
