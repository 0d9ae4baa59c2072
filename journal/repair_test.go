package journal

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/walletgate/walletgate/journal/records"

	"github.com/stretchr/testify/require"
)

func reserve(t *testing.T, j *Journal, id string, at time.Time, eth string) {
	t.Helper()
	_, err := j.Append(records.KindCapReserve, records.CapChange{V: records.Version, ID: id, At: at, Change: map[string]string{"ETH": eth}})
	require.NoError(t, err)
}

func TestRepairTornLineKeepsTheDayWindow(t *testing.T) {
	dir := stateDir(t)
	j := openT(t, dir, "s")
	at := time.Now().UTC()
	reserve(t, j, "r1", at, "5")
	reserve(t, j, "r2", at, "7")
	before := liveOf(t, j)
	require.NoError(t, j.Close())

	torn := []byte(`{"seq":3,"time":"2026-`)
	f, err := os.OpenFile(journalPath(dir), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(torn)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = Open(dir, "s", nil)
	requireUnavailable(t, err, "incomplete last line")

	rep, err := RepairTornLine(dir, "repair", nil)
	require.NoError(t, err)
	require.Equal(t, 3, rep.Line)
	require.Equal(t, len(torn), rep.Bytes)

	j2 := openT(t, dir, "s")
	var caps []records.CapEntry
	require.NoError(t, j2.View(func(l *records.Live) error { caps = append(caps, l.Caps...); return nil }))
	require.Len(t, caps, 2, "the day window is kept")
	var b, a records.Live
	require.NoError(t, json.Unmarshal(before, &b))
	require.NoError(t, json.Unmarshal(liveOf(t, j2), &a))
	require.Equal(t, b.Caps, a.Caps)
	require.Equal(t, b.Reservations, a.Reservations)
	recs, err := j2.Records()
	require.NoError(t, err)
	require.Equal(t, records.KindRepair, recs[len(recs)-1].Kind, "the repair is journaled")
	_, err = Verify(journalPath(dir))
	require.NoError(t, err)

	_, err = RepairTornLine(dir, "repair", nil)
	require.ErrorIs(t, err, ErrNothingToRepair)
}

func TestRepairNeverCutsACompleteLine(t *testing.T) {
	dir := stateDir(t)
	j := openT(t, dir, "s")
	fill(t, j, 3)
	require.NoError(t, j.Close())
	lines := readLines(t, journalPath(dir))
	lines[2] = []byte("not json\n") // complete, but broken
	writeLines(t, journalPath(dir), lines)
	orig, err := os.ReadFile(journalPath(dir))
	require.NoError(t, err)

	_, err = RepairTornLine(dir, "repair", nil)
	require.ErrorIs(t, err, ErrNothingToRepair, "a complete line is not cut, however broken")

	// Torn at the end, but broken before: refused untouched.
	require.NoError(t, os.WriteFile(journalPath(dir), append(orig, []byte(`{"seq":4`)...), 0o600))
	_, err = RepairTornLine(dir, "repair", nil)
	require.ErrorContains(t, err, "broken before its last line")
	now, err := os.ReadFile(journalPath(dir))
	require.NoError(t, err)
	require.Equal(t, append(orig, []byte(`{"seq":4`)...), now)
}

func TestReleasePhantoms(t *testing.T) {
	dir := stateDir(t)
	at := time.Now().UTC()
	// Another process, alive: its open reservation stays.
	other := openT(t, dir, "other")
	other.pid = 999_991
	reserve(t, other, "live-1", at, "3")
	// A dead process: reserved twice, signed once.
	dead := openT(t, dir, "dead")
	dead.pid = 999_992
	reserve(t, dead, "dead-1", at, "5")
	reserve(t, dead, "dead-2", at, "7")
	_, err := dead.Append(records.KindSigned, records.Signed{V: records.Version, Reservation: "dead-2", Tx: "0xaa", Raw: "0x01"})
	require.NoError(t, err)

	j := openT(t, dir, "new")
	alive := func(pid int) bool { return pid != 999_992 }
	released, err := j.ReleasePhantoms(alive)
	require.NoError(t, err)
	require.Len(t, released, 1)
	require.Equal(t, "dead-1", released[0].ID)

	var open []string
	var sum int
	require.NoError(t, j.View(func(l *records.Live) error {
		for _, o := range l.Reservations {
			open = append(open, o.ID)
		}
		for _, c := range l.Caps {
			var n int
			_, _ = fmt.Sscan(c.Change["ETH"], &n)
			sum += n
		}
		return nil
	}))
	require.Equal(t, []string{"live-1"}, open)
	require.Equal(t, 3+7, sum, "the phantom's 5 is released; the signed 7 and the live 3 stay counted")

	recs, err := j.Records()
	require.NoError(t, err)
	var c records.CapChange
	require.NoError(t, records.DecodeInto(recs[len(recs)-1], &c))
	require.Equal(t, records.ReasonPhantom, c.Reason)
	require.Equal(t, "-5", c.Change["ETH"])
	require.True(t, c.At.Equal(at), "dated like the reservation")

	again, err := j.ReleasePhantoms(alive)
	require.NoError(t, err)
	require.Empty(t, again, "released once")

}

// TestReleasePhantomsFreesTheirNonces: a phantom's nonce is given back with
// its caps, in the same step; a nonce of a reservation that signed (or whose
// process lives) stays held.
func TestReleasePhantomsFreesTheirNonces(t *testing.T) {
	dir := stateDir(t)
	at := time.Now().UTC()
	nonce := func(n uint64) *uint64 { return &n }
	other := openT(t, dir, "other")
	other.pid = 999_991
	_, err := other.Append(records.KindCapReserve, records.CapChange{V: records.Version, ID: "live-1", At: at, Change: map[string]string{"ETH": "3"}, Nonce: nonce(4)})
	require.NoError(t, err)
	dead := openT(t, dir, "dead")
	dead.pid = 999_992
	_, err = dead.Append(records.KindCapReserve, records.CapChange{V: records.Version, ID: "dead-1", At: at, Change: map[string]string{"ETH": "5"}, Nonce: nonce(5)})
	require.NoError(t, err)

	j := openT(t, dir, "new")
	released, err := j.ReleasePhantoms(func(pid int) bool { return pid != 999_992 })
	require.NoError(t, err)
	require.Len(t, released, 1)
	var held []uint64
	require.NoError(t, j.View(func(l *records.Live) error {
		for _, a := range l.Allocs {
			held = append(held, a.Nonce)
		}
		return nil
	}))
	require.Equal(t, []uint64{4}, held, "the phantom's nonce 5 is free; the live reservation's 4 is not")

	recs, err := j.Records()
	require.NoError(t, err)
	last := recs[len(recs)-1]
	require.Equal(t, records.KindNonceFree, last.Kind)
	var n records.Nonce
	require.NoError(t, records.DecodeInto(last, &n))
	require.Equal(t, records.Nonce{V: records.Version, Reservation: "dead-1", Nonce: 5, At: n.At}, n)
	require.Equal(t, records.KindCapCorrect, recs[len(recs)-2].Kind, "right after the release of its caps")
}

func TestProcessAlive(t *testing.T) {
	require.True(t, ProcessAlive(os.Getpid()))
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	require.False(t, ProcessAlive(cmd.Process.Pid), "a process that exited and was waited for")
	require.True(t, ProcessAlive(0), "unsure means alive: the reservation stays counted")
}
