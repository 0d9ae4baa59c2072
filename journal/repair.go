package journal

// Repair of a torn last line. Rules: only an incomplete final line (bytes
// after the last newline) of the active segment is ever cut; a complete line
// never is, and a journal broken anywhere else is refused untouched. The cut
// is journaled, with what was cut, so that the history says it happened.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/walletgate/walletgate/journal/records"
)

// ErrNothingToRepair means the journal's last line is complete.
var ErrNothingToRepair = errors.New("journal: nothing to repair: the last line is complete")

// RepairTornLine cuts an incomplete final line off the journal in dir, under the
// exclusive lock, then opens the journal (which verifies it) and appends a
// Repair record saying what was cut. It refuses, changing nothing, when the
// last line is complete (ErrNothingToRepair) or the journal is broken before
// it. The per-day window and everything else stay as they were.
func RepairTornLine(dir, session string, now func() time.Time) (records.Repair, error) {
	if err := prepareDir(dir); err != nil {
		return records.Repair{}, err
	}
	path := dir + string(os.PathSeparator) + FileName
	rep, err := cutTornLine(dir, path)
	if err != nil {
		return records.Repair{}, err
	}
	j, err := Open(dir, session, now)
	if err != nil {
		return rep, fmt.Errorf("journal: the torn line was cut, but the journal does not open: %w", err)
	}
	defer j.Close()
	if _, err := j.Append(records.KindRepair, rep); err != nil {
		return rep, fmt.Errorf("journal: the torn line was cut, but the repair could not be journaled: %w", err)
	}
	return rep, nil
}

func cutTornLine(dir, path string) (records.Repair, error) {
	lf, err := openNoFollow(dir+string(os.PathSeparator)+LockName, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return records.Repair{}, fmt.Errorf("journal: open lock: %w", err)
	}
	defer lf.Close()
	if err := flock(lf, lockEx); err != nil {
		return records.Repair{}, fmt.Errorf("journal: lock: %w", err)
	}
	f, err := openNoFollow(path, os.O_RDWR, 0)
	if err != nil {
		return records.Repair{}, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	if err := checkPrivate(f, path, false); err != nil {
		return records.Repair{}, err
	}
	content, err := io.ReadAll(f)
	if err != nil {
		return records.Repair{}, fmt.Errorf("journal: %w", err)
	}
	keep := bytes.LastIndexByte(content, '\n') + 1
	if keep == len(content) {
		return records.Repair{}, ErrNothingToRepair
	}
	c := newChain(path)
	if err := c.read(bytes.NewReader(content[:keep]), func(records.Record, string) {}); err != nil {
		return records.Repair{}, fmt.Errorf("journal: not repaired: the journal is broken before its last line (%w); repair only cuts an incomplete final line", err)
	}
	torn := content[keep:]
	rep := records.Repair{V: records.Version, File: FileName, Line: c.lines + 1, Bytes: len(torn), Content: strconv.Quote(string(torn[:min(len(torn), 200)]))}
	if err := f.Truncate(int64(keep)); err != nil {
		return records.Repair{}, fmt.Errorf("journal: cut the torn line: %w", err)
	}
	if err := syncFile(f); err != nil {
		return records.Repair{}, fmt.Errorf("journal: cut the torn line: fsync: %w", err)
	}
	return rep, nil
}
