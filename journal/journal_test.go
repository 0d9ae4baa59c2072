package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/walletgate/walletgate/journal/records"

	"github.com/stretchr/testify/require"
)

func TestAppendReopenKeepsChain(t *testing.T) {
	dir := filepath.Join(stateDir(t), "state", "walletgate") // parents missing too
	clock := newFakeClock()
	j, err := Open(dir, "s1", clock.now)
	require.NoError(t, err)

	var appended []records.Record
	for i, data := range []any{nil, spend{Amount: "1000", N: 1}, map[string]string{"tool": "<send>&"}} {
		r, err := j.Append(fmt.Sprintf("kind%d", i), data)
		require.NoError(t, err)
		appended = append(appended, r)
	}
	require.NoError(t, j.Close())
	_, err = j.Append("after-close", nil)
	require.ErrorIs(t, err, os.ErrClosed)

	j = openT(t, dir, "s2")
	got, err := j.Records()
	require.NoError(t, err)
	require.Equal(t, appended, got, "Append returns what a reader decodes")
	r4, err := j.Append("kind3", nil)
	require.NoError(t, err)

	require.EqualValues(t, 1, got[0].Seq)
	require.Nil(t, got[0].Data, "nil data is omitted")
	require.Equal(t, "s1", got[0].Session)
	require.Equal(t, os.Getpid(), got[0].PID)
	require.Equal(t, time.UTC, got[0].Time.Location())
	require.Equal(t, time.Date(2026, 3, 1, 11, 0, 1, 123456789, time.UTC), got[0].Time)
	require.EqualValues(t, 4, r4.Seq)
	require.Equal(t, "s2", r4.Session)
	n, err := Verify(j.Path())
	require.NoError(t, err)
	require.Equal(t, 4, n)

	// The chain, recomputed from the raw bytes without the package's help.
	lines := readLines(t, j.Path())
	require.Len(t, lines, 4)
	sum := sha256.Sum256([]byte("walletgate journal v1"))
	prev := hex.EncodeToString(sum[:])
	for i, line := range lines {
		var r records.Record
		require.NoError(t, json.Unmarshal(line, &r))
		require.Equal(t, prev, r.Prev, "line %d", i+1)
		require.EqualValues(t, i+1, r.Seq)
		sum = sha256.Sum256(line[:len(line)-1])
		prev = hex.EncodeToString(sum[:])
	}
	require.Contains(t, string(lines[0]), `"time":"2026-03-01T11:00:01.123456789Z"`)

	// The head holds the last record's seq and line hash.
	b, err := os.ReadFile(filepath.Join(dir, HeadName))
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`{"seq":4,"hash":%q}`, prev), string(b))

	for name, want := range map[string]os.FileMode{
		"": 0o700, FileName: 0o600, HeadName: 0o600, LockName: 0o600,
	} {
		fi, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, want, fi.Mode().Perm(), "%s", name)
	}
}

func TestAppendRefuses(t *testing.T) {
	tests := []struct {
		name string
		kind string
		data any
		want string
	}{
		{"empty kind", "", nil, "empty kind"},
		{"data json cannot encode", "x", make(chan int), "data"},
		{"line over 1 MiB", "x", strings.Repeat("a", maxLine), "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := openT(t, stateDir(t), "s")
			fill(t, j, 2)
			_, err := j.Append(tt.kind, tt.data)
			require.ErrorContains(t, err, tt.want)
			require.False(t, isUnavailable(err), "a bad record is the caller's error, not the journal's")
			n, err := Verify(j.Path())
			require.NoError(t, err)
			require.Equal(t, 2, n, "nothing written")
			_, err = j.Append("next", nil)
			require.NoError(t, err, "the journal is still usable")
		})
	}
	t.Run("line of exactly the limit", func(t *testing.T) {
		j := openT(t, stateDir(t), "s")
		r, err := j.Append("x", nil)
		require.NoError(t, err)
		line, err := json.Marshal(r)
		require.NoError(t, err)
		// A string of k bytes adds k+10 bytes (`,"data":""`) to the line.
		pad := maxLine - len(line) - len(`,"data":""`)
		_, err = j.Append("x", strings.Repeat("a", pad))
		require.NoError(t, err)
		n, err := Verify(j.Path())
		require.NoError(t, err)
		require.Equal(t, 2, n)
		_, err = j.Append("x", strings.Repeat("a", pad+1))
		require.ErrorContains(t, err, "limit")
	})
}

// TestConcurrentJournals has two Journals on one directory, standing in for
// two processes (their flocks conflict like those of two processes), append
// from many goroutines each.
func TestConcurrentJournals(t *testing.T) {
	const goroutines, each = 8, 25
	dir := stateDir(t)
	js := []*Journal{openT(t, dir, "a"), openT(t, dir, "b")}
	var wg sync.WaitGroup
	for ji, j := range js {
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					if _, err := j.Append("spend", spend{Amount: fmt.Sprintf("%d/%d", ji, g), N: i}); err != nil {
						t.Errorf("append: %v", err)
						return
					}
				}
			})
		}
	}
	wg.Wait()

	const total = 2 * goroutines * each
	n, err := Verify(journalPath(dir))
	require.NoError(t, err)
	require.Equal(t, total, n)
	got, err := openT(t, dir, "c").Records()
	require.NoError(t, err)
	seen := map[string]bool{}
	for i, r := range got {
		require.EqualValues(t, i+1, r.Seq)
		d := decodeData(t, r)
		key := fmt.Sprintf("%s/%d", d.Amount, d.N)
		require.False(t, seen[key], "duplicate %s", key)
		seen[key] = true
	}
	require.Len(t, seen, total, "no record lost")
	for _, j := range js {
		r, err := j.Records()
		require.NoError(t, err)
		require.Equal(t, got, r, "each Journal sees the other's records")
	}
}

// TestUpdateAtomicAcrossJournals increments a counter that must never pass
// its limit from two Journals at once: each Update reads the count and
// appends only below the limit.
func TestUpdateAtomicAcrossJournals(t *testing.T) {
	const limit, goroutines = 60, 6
	errFull := errors.New("full")
	dir := stateDir(t)
	js := []*Journal{openT(t, dir, "a"), openT(t, dir, "b")}
	var wg sync.WaitGroup
	for _, j := range js {
		for range goroutines {
			wg.Go(func() {
				for {
					err := j.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
						return increment(live, appendRecord, limit, errFull)
					})
					if errors.Is(err, errFull) {
						return
					}
					if err != nil {
						t.Errorf("update: %v", err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	got, err := openT(t, dir, "c").Records()
	require.NoError(t, err)
	require.Len(t, got, limit)
	for i, r := range got {
		var c records.CapChange
		require.NoError(t, records.DecodeInto(r, &c))
		require.Equal(t, fmt.Sprint(i+1), c.ID, "each increment saw every earlier one")
	}
}

func TestUpdate(t *testing.T) {
	j := openT(t, stateDir(t), "s")
	fill(t, j, 2)
	errStop := errors.New("stop")
	var leaked records.AppendFunc
	err := j.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
		require.Empty(t, live.Caps)
		r, err := appendRecord("a", nil)
		require.NoError(t, err)
		require.EqualValues(t, 3, r.Seq)
		r, err = appendRecord("b", nil)
		require.NoError(t, err)
		require.EqualValues(t, 4, r.Seq)
		_, err = appendRecord(records.KindCapReserve, records.CapChange{ID: "r", At: time.Now(), Change: map[string]string{"ETH": "1"}})
		require.NoError(t, err)
		require.Len(t, live.Caps, 1, "live folds what fn appends")
		leaked = appendRecord
		return errStop
	})
	require.ErrorIs(t, err, errStop)
	_, err = leaked("late", nil)
	require.ErrorContains(t, err, "after Update returned")
	got, err := j.Records()
	require.NoError(t, err)
	require.Len(t, got, 5, "what fn appended stays, though fn failed")
}

// TestFsync watches the real fsyncs: per append, the journal after its line
// is written, then the head's temporary file, then the directory after the
// rename.
func TestFsync(t *testing.T) {
	dir := stateDir(t)
	j := openT(t, dir, "s")
	fill(t, j, 1)
	var synced []string
	real := syncFile
	t.Cleanup(func() { syncFile = real })
	syncFile = func(f *os.File) error {
		name := filepath.Base(f.Name())
		synced = append(synced, name)
		switch name {
		case FileName:
			// The line is written before the journal is synced.
			lines := readLines(t, f.Name())
			require.Contains(t, string(lines[len(lines)-1]), `"kind":"synced"`)
		case filepath.Base(dir):
			// The directory is synced after the head was renamed.
			b, err := os.ReadFile(filepath.Join(dir, HeadName))
			require.NoError(t, err)
			require.Contains(t, string(b), `"seq":2`)
		}
		return real(f)
	}
	_, err := j.Append("synced", nil)
	require.NoError(t, err)
	require.Equal(t, []string{FileName, HeadName + ".tmp", filepath.Base(dir)}, synced)
}

func TestFsyncFailureBreaksJournal(t *testing.T) {
	j := openT(t, stateDir(t), "s")
	fill(t, j, 1)
	real := syncFile
	t.Cleanup(func() { syncFile = real })
	syncFile = func(f *os.File) error {
		if filepath.Base(f.Name()) == FileName {
			return errors.New("input/output error")
		}
		return real(f)
	}
	_, err := j.Append("x", nil)
	requireUnavailable(t, err, "fsync", "input/output error")
	syncFile = real
	_, err = j.Append("y", nil)
	requireUnavailable(t, err, "fsync")
	_, err = j.Records()
	requireUnavailable(t, err, "fsync")
}

// TestChangedWhileOpen changes the files under an open Journal, as a person
// or another program might, and expects every later call refused.
func TestChangedWhileOpen(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   string
	}{
		{"garbage appended", func(t *testing.T, dir string) {
			f, err := os.OpenFile(journalPath(dir), os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.WriteString("{not json}\n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, ":4: not a JSON record"},
		{"line cut off the end", func(t *testing.T, dir string) {
			lines := readLines(t, journalPath(dir))
			writeLines(t, journalPath(dir), lines[:2])
		}, "shrank"},
		{"journal replaced", func(t *testing.T, dir string) {
			p := journalPath(dir)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p+".new", b, 0o600))
			require.NoError(t, os.Rename(p+".new", p))
		}, "replaced"},
		{"journal deleted", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(journalPath(dir)))
		}, "removed"},
		{"lock file deleted", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, LockName)))
		}, "lock file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := stateDir(t)
			j := openT(t, dir, "s")
			fill(t, j, 3)
			tt.change(t, dir)
			_, err := j.Append("x", nil)
			requireUnavailable(t, err, tt.want)
			_, err = j.Records()
			requireUnavailable(t, err, tt.want)
			err = j.Update(func(*records.Live, records.AppendFunc) error { return nil })
			requireUnavailable(t, err, tt.want)
		})
	}
}

func TestZeroAndNilJournalRefuse(t *testing.T) {
	var zero Journal
	_, err := zero.Append("x", nil)
	require.ErrorIs(t, err, os.ErrClosed)
	_, err = zero.Records()
	require.ErrorIs(t, err, os.ErrClosed)
	var nilJ *Journal
	_, err = nilJ.Append("x", nil)
	require.ErrorIs(t, err, os.ErrClosed)
	require.NoError(t, nilJ.Close())
}
