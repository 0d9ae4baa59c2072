package journal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// noSync skips fsync for the rest of the test: these tests check what is
// written and read, not what a power cut keeps, and fsync is slow on shared
// test machines.
func noSync(t testing.TB) {
	real := syncFile
	t.Cleanup(func() { syncFile = real })
	syncFile = func(*os.File) error { return nil }
}

// smallSegments opens dir with segments of size bytes.
func smallSegments(t testing.TB, dir, session string, size int64) *Journal {
	t.Helper()
	j, err := OpenOptions(dir, session, nil, Options{SegmentSize: size})
	require.NoError(t, err)
	t.Cleanup(func() { j.Close() })
	return j
}

// history appends n rounds of what a day of use looks like: reads, and
// writes that reserve, sign, broadcast, get a receipt and settle, with now and
// then a transaction left pending, a reservation left open, and a session.
func history(t testing.TB, j *Journal, from, n int) {
	t.Helper()
	at := time.Now().UTC()
	app := func(kind string, data any, synced bool) {
		t.Helper()
		var err error
		if synced {
			_, err = j.Append(kind, data)
		} else {
			_, err = j.AppendUnsynced(kind, data)
		}
		require.NoError(t, err)
	}
	for i := from; i < from+n; i++ {
		call := fmt.Sprintf("c-%d", i)
		app(KindToolStart, ToolStart{V: Version, Call: call, Tool: "wallet_balance", ArgsSHA256: "00"}, false)
		app(KindToolEnd, ToolEnd{V: Version, Call: call, Tool: "wallet_balance", Outcome: "ok", MS: 3}, false)
		if i%3 != 0 {
			continue
		}
		id := fmt.Sprintf("r-%d", i)
		tx := fmt.Sprintf("0x%064x", i)
		// Mostly unsynced, to keep the test fast: durability is not what it checks.
		app(KindCapReserve, CapChange{V: Version, ID: id, At: at, Change: map[string]string{"ETH": "1000"}}, i%30 == 0)
		if i%21 == 0 {
			continue // a reservation left open: a crash before signing
		}
		app(KindSigned, Signed{V: Version, Tool: "wallet_send", Leg: "send", Reservation: id, Tx: tx, Nonce: uint64(i), From: "0x01", Raw: "0x02"}, false)
		app(KindBroadcast, Broadcast{V: Version, Tx: tx, Outcome: BroadcastAccepted}, false)
		if i%15 == 0 {
			continue // pending: no receipt seen
		}
		app(KindReceipt, Receipt{V: Version, Tx: tx, Status: 1, Block: uint64(i), GasUsed: 21000, Fee: "21"}, false)
		app(KindCapCorrect, CapChange{V: Version, ID: id, At: at, Change: map[string]string{"ETH": "-979"}}, false)
	}
}

// foldAll is the live state folded from every record of the journal in dir,
// sealed segments included, as if no checkpoint existed.
func foldAll(t testing.TB, dir string) Live {
	t.Helper()
	var l Live
	require.NoError(t, Walk(filepath.Join(dir, FileName), func(r Record) error {
		if r.Kind == KindCheckpoint {
			return nil
		}
		return l.Apply(r)
	}))
	return l
}

// liveOf is j's live state, snapshotted (which also prunes it the same way).
func liveOf(t testing.TB, j *Journal) json.RawMessage {
	t.Helper()
	var snap json.RawMessage
	require.NoError(t, j.Update(func(live *Live, _ AppendFunc) (err error) {
		cp := *live
		snap, err = cp.Snapshot()
		return err
	}))
	return snap
}

func snapshotOf(t testing.TB, l Live) json.RawMessage {
	t.Helper()
	s, err := l.Snapshot()
	require.NoError(t, err)
	return s
}

func sealed(t testing.TB, dir string) []string {
	t.Helper()
	segs, err := Segments(dir)
	require.NoError(t, err)
	return segs[:len(segs)-1]
}

func TestSegmentsSealAndVerifyAcrossThem(t *testing.T) {
	noSync(t)
	dir := stateDir(t)
	j := smallSegments(t, dir, "s", 4<<10)
	history(t, j, 0, 300)
	require.Greater(t, len(sealed(t, dir)), 5, "the history spans sealed segments")

	n, err := Verify(journalPath(dir))
	require.NoError(t, err)
	recs, err := j.Records()
	require.NoError(t, err)
	require.Less(t, len(recs), n/5, "the Journal reads the active segment only")
	require.Equal(t, KindCheckpoint, recs[0].Kind, "which begins with a checkpoint")

	full := foldAll(t, dir)
	require.NotEmpty(t, full.Pending)
	require.NotEmpty(t, full.Reservations)
	require.JSONEq(t, string(snapshotOf(t, full)), string(liveOf(t, j)), "the live state is the same as folded from all history")

	// A new process opens from the checkpoint and gets the same state.
	j2 := smallSegments(t, dir, "t", 4<<10)
	require.JSONEq(t, string(snapshotOf(t, full)), string(liveOf(t, j2)))
}

func TestTwoJournalsFollowSealing(t *testing.T) {
	noSync(t)
	dir := stateDir(t)
	a := smallSegments(t, dir, "a", 2<<10)
	b := smallSegments(t, dir, "b", 2<<10)
	for i := 0; i < 40; i++ {
		history(t, a, i*10, 5)
		if i%4 == 0 {
			continue // a seals several segments while b does not look
		}
		history(t, b, i*10+5, 5)
	}
	require.Greater(t, len(sealed(t, dir)), 10)
	_, err := Verify(journalPath(dir))
	require.NoError(t, err)
	full := snapshotOf(t, foldAll(t, dir))
	require.JSONEq(t, string(full), string(liveOf(t, a)))
	require.JSONEq(t, string(full), string(liveOf(t, b)))
}

func TestOpenSealsALongTail(t *testing.T) {
	noSync(t)
	dir := stateDir(t)
	j := smallSegments(t, dir, "s", 1<<30) // never sealed while running
	history(t, j, 0, 100)
	require.NoError(t, j.Close())
	require.Empty(t, sealed(t, dir))

	j2 := smallSegments(t, dir, "s", 8<<10)
	require.Len(t, sealed(t, dir), 1, "the tail was over a quarter of a segment: sealed at open")
	recs, err := j2.Records()
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, KindCheckpoint, recs[0].Kind)
	require.JSONEq(t, string(snapshotOf(t, foldAll(t, dir))), string(liveOf(t, j2)))
}

func TestVerifyFindsAnEditInASealedSegment(t *testing.T) {
	noSync(t)
	dir := stateDir(t)
	j := smallSegments(t, dir, "s", 4<<10)
	history(t, j, 0, 200)
	require.NoError(t, j.Close())
	segs := sealed(t, dir)
	require.Greater(t, len(segs), 3)
	victim := segs[2]
	lines := readLines(t, victim)
	lines[4] = []byte(string(lines[4][:len(lines[4])-3]) + "x}\n")
	writeLines(t, victim, lines)

	_, err := Verify(journalPath(dir))
	var b *BrokenError
	require.ErrorAs(t, err, &b)
	require.Equal(t, victim, b.Path, "names the file")
	require.Contains(t, []int{5, 6}, b.Line, "and the line (the edit breaks its JSON or the next line's prev)")

	// Removing a whole sealed segment is found too, naming where.
	require.NoError(t, os.Remove(segs[1]))
	_, err = Verify(journalPath(dir))
	require.ErrorAs(t, err, &b)
	require.Equal(t, segs[2], b.Path)
	require.Equal(t, 1, b.Line)
}

func TestVerifyFindsAForgedCheckpoint(t *testing.T) {
	noSync(t)
	dir := stateDir(t)
	j := smallSegments(t, dir, "s", 4<<10)
	history(t, j, 0, 60)
	require.NoError(t, j.Close())
	segs := sealed(t, dir)
	require.NotEmpty(t, segs)
	// Rewrite the chain from the second segment on with a checkpoint that
	// forgets the day window: the hashes are consistent, the state is not.
	target := segs[1]
	lines := readLines(t, target)
	var cp Record
	require.NoError(t, json.Unmarshal(lines[0], &cp))
	var c Checkpoint
	require.NoError(t, DecodeInto(cp, &c))
	var st Live
	require.NoError(t, json.Unmarshal(c.State, &st))
	st.Caps = nil
	c.State, _ = json.Marshal(st)
	cp.Data, _ = json.Marshal(c)
	lines[0], _ = json.Marshal(cp)
	lines[0] = append(lines[0], '\n')
	writeLines(t, target, lines)

	_, err := Verify(journalPath(dir))
	var b *BrokenError
	require.ErrorAs(t, err, &b)
	// The edit is caught by the chain first (line 2's prev); either way the
	// file is named.
	require.Equal(t, target, b.Path)
}

func TestOldJournalStaysReadable(t *testing.T) {
	// testdata/v0 was written by walletgate before typed records,
	// checkpoints and segments (commit a0df267): map-shaped data, no "v".
	src := filepath.Join("testdata", "v0")
	dir := stateDir(t)
	for _, name := range []string{FileName, HeadName} {
		b, err := os.ReadFile(filepath.Join(src, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	n, err := Verify(journalPath(dir))
	require.NoError(t, err)
	require.Positive(t, n)

	j := smallSegments(t, dir, "new", 1<<20)
	var pending, caps, reservations int
	require.NoError(t, j.View(func(l *Live) error {
		pending, caps, reservations = len(l.Pending), len(l.Caps), len(l.Reservations)
		return nil
	}))
	require.Equal(t, 1, pending, "the fixture's one transaction without a receipt")
	require.Positive(t, caps)
	require.Equal(t, 0, reservations)
	var typed int
	require.NoError(t, Walk(journalPath(dir), func(r Record) error {
		v, err := Decode(r)
		if v != nil {
			typed++
		}
		return err
	}))
	require.Equal(t, n, typed, "every record of the old format decodes to its type")
}
