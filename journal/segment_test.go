package journal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/walletgate/walletgate/journal/records"

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
		app(records.KindToolStart, records.ToolStart{V: records.Version, Call: call, Tool: "wallet_balance", ArgsSHA256: "00"}, false)
		app(records.KindToolEnd, records.ToolEnd{V: records.Version, Call: call, Tool: "wallet_balance", Outcome: "ok", MS: 3}, false)
		if i%3 != 0 {
			continue
		}
		id := fmt.Sprintf("r-%d", i)
		tx := fmt.Sprintf("0x%064x", i)
		// Mostly unsynced, to keep the test fast: durability is not what it checks.
		app(records.KindCapReserve, records.CapChange{V: records.Version, ID: id, At: at, Change: map[string]string{"ETH": "1000"}}, i%30 == 0)
		if i%21 == 0 {
			continue // a reservation left open: a crash before signing
		}
		app(records.KindSigned, records.Signed{V: records.Version, Tool: "wallet_send", Leg: "send", Reservation: id, Tx: tx, Nonce: uint64(i), From: "0x01", Raw: "0x02"}, false)
		app(records.KindBroadcast, records.Broadcast{V: records.Version, Tx: tx, Outcome: records.BroadcastAccepted}, false)
		if i%15 == 0 {
			continue // pending: no receipt seen
		}
		app(records.KindReceipt, records.Receipt{V: records.Version, Tx: tx, Status: 1, Block: uint64(i), GasUsed: 21000, Fee: "21"}, false)
		app(records.KindCapCorrect, records.CapChange{V: records.Version, ID: id, At: at, Change: map[string]string{"ETH": "-979"}}, false)
	}
}

// foldAll is the live state folded from every record of the journal in dir,
// sealed segments included, as if no checkpoint existed.
func foldAll(t testing.TB, dir string) records.Live {
	t.Helper()
	var l records.Live
	require.NoError(t, Walk(filepath.Join(dir, FileName), func(r records.Record) error {
		if r.Kind == records.KindCheckpoint {
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
	require.NoError(t, j.Update(func(live *records.Live, _ records.AppendFunc) (err error) {
		cp := *live
		snap, err = cp.Snapshot()
		return err
	}))
	return snap
}

func snapshotOf(t testing.TB, l records.Live) json.RawMessage {
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
	require.Equal(t, records.KindCheckpoint, recs[0].Kind, "which begins with a checkpoint")

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
	require.Equal(t, records.KindCheckpoint, recs[0].Kind)
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
	require.NoError(t, j.View(func(l *records.Live) error {
		pending, caps, reservations = len(l.Pending), len(l.Caps), len(l.Reservations)
		return nil
	}))
	require.Equal(t, 1, pending, "the fixture's one transaction without a receipt")
	require.Positive(t, caps)
	require.Equal(t, 0, reservations)
	var typed int
	require.NoError(t, Walk(journalPath(dir), func(r records.Record) error {
		v, err := records.Decode(r)
		if v != nil {
			typed++
		}
		return err
	}))
	require.Equal(t, n, typed, "every record of the old format decodes to its type")
}

// rechain rewrites every line from file on (in chain order) with the prev
// its predecessor now hashes to, and the head: what someone who can write
// the state directory could do to hide an edit from the hash chain.
func rechain(t testing.TB, dir, from string) {
	t.Helper()
	segs, err := Segments(dir)
	require.NoError(t, err)
	prev, started := genesisHash, false
	var last records.Record
	for _, seg := range segs {
		lines := readLines(t, seg)
		if seg == from {
			started = true
		}
		for i, line := range lines {
			if started {
				var r records.Record
				require.NoError(t, json.Unmarshal(line[:len(line)-1], &r))
				r.Prev = prev
				b, err := json.Marshal(r)
				require.NoError(t, err)
				lines[i] = append(b, '\n')
			}
			prev = hashLine(lines[i][:len(lines[i])-1])
			require.NoError(t, json.Unmarshal(lines[i][:len(lines[i])-1], &last))
		}
		if started {
			writeLines(t, seg, lines)
		}
	}
	b, _ := json.Marshal(head{Seq: last.Seq, Hash: prev})
	require.NoError(t, os.WriteFile(filepath.Join(dir, HeadName), append(b, '\n'), 0o600))
}

func TestVerifyFindsACheckpointThatForgetsSpend(t *testing.T) {
	noSync(t)
	dir := stateDir(t)
	j := smallSegments(t, dir, "s", 4<<10)
	history(t, j, 0, 60)
	require.NoError(t, j.Close())
	segs := sealed(t, dir)
	require.GreaterOrEqual(t, len(segs), 2)
	target := segs[1] // begins with a checkpoint
	lines := readLines(t, target)
	var cp records.Record
	require.NoError(t, json.Unmarshal(lines[0], &cp))
	var c records.Checkpoint
	require.NoError(t, records.DecodeInto(cp, &c))
	var st records.Live
	require.NoError(t, json.Unmarshal(c.State, &st))
	require.NotEmpty(t, st.Caps)
	st.Caps = nil // the day window forgotten: spend freed
	c.State, _ = json.Marshal(st)
	cp.Data, _ = json.Marshal(c)
	lines[0], _ = json.Marshal(cp)
	lines[0] = append(lines[0], '\n')
	writeLines(t, target, lines)
	rechain(t, dir, target)

	_, err := Verify(journalPath(dir))
	var b *BrokenError
	require.ErrorAs(t, err, &b)
	require.Equal(t, target, b.Path)
	require.Equal(t, 1, b.Line)
	require.Contains(t, b.Reason, "does not match the history before it")
}

func TestUnsyncedRecordsAreMadeDurableByTheNext(t *testing.T) {
	dir := stateDir(t)
	j := openT(t, dir, "s")
	var syncs int
	real := syncFile
	t.Cleanup(func() { syncFile = real })
	syncFile = func(f *os.File) error { syncs++; return real(f) }
	headSeq := func() uint64 {
		h, _, err := readHead(filepath.Join(dir, HeadName), true)
		require.NoError(t, err)
		return h.Seq
	}
	for range 3 {
		_, err := j.AppendUnsynced(records.KindToolStart, records.ToolStart{V: records.Version, Call: "c", Tool: "wallet_balance"})
		require.NoError(t, err)
	}
	require.Zero(t, syncs, "a read's records wait for the next one that matters")
	require.EqualValues(t, 0, headSeq())
	_, err := j.Append(records.KindPreview, records.Preview{V: records.Version, Tool: "wallet_send"})
	require.NoError(t, err)
	require.NotZero(t, syncs)
	require.EqualValues(t, 4, headSeq(), "the fsync'd record covers the ones before it")
	_, err = j.AppendUnsynced(records.KindToolEnd, records.ToolEnd{V: records.Version, Call: "c", Tool: "wallet_balance", Outcome: "ok"})
	require.NoError(t, err)
	require.EqualValues(t, 4, headSeq())
	require.NoError(t, j.Close())
	require.EqualValues(t, 5, headSeq(), "Close makes the rest durable")
}

// TestDayWindowAndOpenTransactionsMatchFullHistory checks the live state
// of a journal opened from its checkpoints against an oracle that reads all
// history record by record, as walletgate did before checkpoints: the cap
// changes of the last 24 h summed, and the signed transactions without a
// receipt or a drop. The history spans four days on a clock that moves ten
// minutes a record, so that the day window cuts through sealed segments.
func TestDayWindowAndOpenTransactionsMatchFullHistory(t *testing.T) {
	noSync(t)
	dir := stateDir(t)
	clock := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(10 * time.Minute); return clock }
	j, err := OpenOptions(dir, "s", now, Options{SegmentSize: 3 << 10})
	require.NoError(t, err)
	for i := 0; clock.Before(time.Date(2026, 6, 5, 0, 0, 0, 0, time.UTC)); i++ {
		id, tx := fmt.Sprintf("r%d", i), fmt.Sprintf("0x%x", i)
		_, err := j.Append(records.KindCapReserve, records.CapChange{V: records.Version, ID: id, At: clock, Change: map[string]string{"ETH": fmt.Sprint(100 + i)}})
		require.NoError(t, err)
		if i%7 == 0 {
			continue
		}
		_, err = j.Append(records.KindSigned, records.Signed{V: records.Version, Reservation: id, Tx: tx, Raw: "0x01"})
		require.NoError(t, err)
		switch i % 5 {
		case 0:
			_, err = j.Append(records.KindDropped, records.Dropped{V: records.Version, Tx: tx})
		case 1:
			// pending
		default:
			_, err = j.Append(records.KindReceipt, records.Receipt{V: records.Version, Tx: tx, Status: 1, Fee: "1"})
		}
		require.NoError(t, err)
		_, err = j.Append(records.KindCapCorrect, records.CapChange{V: records.Version, ID: id, At: clock, Change: map[string]string{"ETH": "-3"}})
		require.NoError(t, err)
	}
	require.NoError(t, j.Close())
	require.Greater(t, len(sealed(t, dir)), 5)

	since := clock.Add(-24 * time.Hour)
	wantDay, wantPending := 0, map[string]bool{}
	require.NoError(t, Walk(journalPath(dir), func(r records.Record) error {
		switch r.Kind {
		case records.KindCapReserve, records.KindCapCorrect:
			var c records.CapChange
			require.NoError(t, records.DecodeInto(r, &c))
			if !c.At.Before(since) {
				var n int
				_, _ = fmt.Sscan(c.Change["ETH"], &n)
				wantDay += n
			}
		case records.KindSigned:
			var s records.Signed
			require.NoError(t, records.DecodeInto(r, &s))
			wantPending[s.Tx] = true
		case records.KindReceipt, records.KindDropped:
			var d records.Dropped
			require.NoError(t, records.DecodeInto(r, &d))
			delete(wantPending, d.Tx)
		}
		return nil
	}))
	require.NotEmpty(t, wantPending)

	j2, err := OpenOptions(dir, "t", now, Options{SegmentSize: 3 << 10})
	require.NoError(t, err)
	defer j2.Close()
	gotDay, gotPending := 0, map[string]bool{}
	require.NoError(t, j2.View(func(l *records.Live) error {
		for _, c := range l.Caps {
			if !c.At.Before(since) {
				var n int
				_, _ = fmt.Sscan(c.Change["ETH"], &n)
				gotDay += n
			}
		}
		for _, p := range l.Pending {
			gotPending[p.Signed.Tx] = true
		}
		return nil
	}))
	require.Equal(t, wantDay, gotDay, "the day window")
	require.Equal(t, wantPending, gotPending, "the open transactions")
}

func TestCloseNeverMovesTheHeadBack(t *testing.T) {
	dir := stateDir(t)
	a, b := openT(t, dir, "a"), openT(t, dir, "b")
	_, err := a.AppendUnsynced(records.KindToolStart, records.ToolStart{V: records.Version, Call: "c", Tool: "wallet_balance"})
	require.NoError(t, err)
	fill(t, b, 3) // durable, and after a's record
	require.NoError(t, a.Close())
	h, _, err := readHead(filepath.Join(dir, HeadName), true)
	require.NoError(t, err)
	require.EqualValues(t, 4, h.Seq, "a's Close wrote the head of the journal, not of what a had seen")
}

// A stopping process seals a tail longer than asked, so that the next start
// reads only the checkpoint; a short tail is left as it is.
func TestSealIfLongerLeavesTheNextStartLittleToRead(t *testing.T) {
	noSync(t)
	dir := stateDir(t)
	j := smallSegments(t, dir, "s", 1<<30) // never sealed while running
	history(t, j, 0, 5)
	require.NoError(t, j.SealIfLonger(1<<20))
	require.Empty(t, sealed(t, dir), "a short tail stays")
	history(t, j, 5, 100)
	require.NoError(t, j.SealIfLonger(4<<10))
	require.Len(t, sealed(t, dir), 1, "a long tail is sealed")
	recs, err := j.Records()
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, records.KindCheckpoint, recs[0].Kind)
	require.NoError(t, j.Close())

	j2 := smallSegments(t, dir, "t", 1<<30)
	recs, err = j2.Records()
	require.NoError(t, err)
	require.Len(t, recs, 1, "the next start reads the checkpoint only")
	require.JSONEq(t, string(snapshotOf(t, foldAll(t, dir))), string(liveOf(t, j2)), "and has the state of all history")
	_, err = Verify(journalPath(dir))
	require.NoError(t, err)
}
