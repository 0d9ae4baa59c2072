package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/walletgate/walletgate/journal/records"

	"github.com/stretchr/testify/require"
)

// fakeClock starts at a fixed moment and moves a second per reading. It is
// safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("CET", 3600))}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// openT opens the journal in dir and closes it when the test ends.
func openT(t testing.TB, dir, session string) *Journal {
	t.Helper()
	j, err := Open(dir, session, newFakeClock().now)
	require.NoError(t, err)
	t.Cleanup(func() { j.Close() })
	return j
}

// spend is the data of a test record.
type spend struct {
	Amount string `json:"amount"`
	N      int    `json:"n"`
}

// fill appends n records whose amounts are 1000+i.
func fill(t testing.TB, j *Journal, n int) {
	t.Helper()
	for i := range n {
		_, err := j.Append("spend", spend{Amount: strconv.Itoa(1000 + i), N: i})
		require.NoError(t, err)
	}
}

// readLines returns the journal's lines, each with its newline.
func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.SplitAfter(b, []byte("\n"))[:bytes.Count(b, []byte("\n"))]
}

// writeLines replaces the file's content, keeping its mode.
func writeLines(t testing.TB, path string, lines [][]byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, bytes.Join(lines, nil), 0o600))
}

func requireUnavailable(t testing.TB, err error, reason ...string) *UnavailableError {
	t.Helper()
	var u *UnavailableError
	require.ErrorAs(t, err, &u)
	for _, r := range reason {
		require.Contains(t, u.Reason, r)
	}
	require.NotEmpty(t, u.Fix)
	return u
}

func requireBroken(t testing.TB, err error, line int, reason string) {
	t.Helper()
	var b *BrokenError
	require.ErrorAs(t, err, &b, "want a broken line %d (%s)", line, reason)
	require.Equal(t, line, b.Line, "%v", b)
	require.Contains(t, b.Reason, reason)
}

func decodeData(t testing.TB, r records.Record) spend {
	t.Helper()
	var s spend
	require.NoError(t, json.Unmarshal(r.Data, &s))
	return s
}

func isUnavailable(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u)
}

func journalPath(dir string) string { return filepath.Join(dir, FileName) }

// stateDir is a fresh 0700 state directory. (t.TempDir is 0755 under the
// usual umask, which Open refuses.)
func stateDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.Mkdir(dir, 0o700))
	return dir
}

// increment appends one more cap reservation, numbered, unless live holds
// limit of them already: a counter that Update keeps atomic.
func increment(live *records.Live, appendRecord records.AppendFunc, limit int, errFull error) error {
	count := len(live.Caps)
	if count >= limit {
		return errFull
	}
	_, err := appendRecord(records.KindCapReserve, records.CapChange{ID: strconv.Itoa(count + 1), At: time.Now(), Change: map[string]string{"ETH": "1"}})
	return err
}
