package journal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/journal/records"
)

// copyGolden copies a golden journal (testdata/README.state) into a fresh
// state directory, with the modes Open requires.
func copyGolden(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	dir := stateDir(t)
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600))
	}
	return dir
}

// oracleState is the live state folded from every record of the journal in
// dir from seq 1, checkpoints skipped: what opening it must yield.
func oracleState(t *testing.T, dir string) json.RawMessage {
	t.Helper()
	var l records.Live
	require.NoError(t, Walk(journalPath(dir), func(r records.Record) error {
		if r.Kind == records.KindCheckpoint {
			return nil
		}
		return l.Apply(r)
	}))
	snap, err := l.Snapshot()
	require.NoError(t, err)
	return snap
}

// firstState is the state of the checkpoint the active segment begins with,
// and its format.
func firstState(t *testing.T, dir string) (json.RawMessage, int) {
	t.Helper()
	lines := readLines(t, journalPath(dir))
	require.NotEmpty(t, lines)
	var r records.Record
	require.NoError(t, json.Unmarshal(lines[0], &r))
	require.Equal(t, records.KindCheckpoint, r.Kind)
	var cp records.Checkpoint
	require.NoError(t, records.DecodeInto(r, &cp))
	v, err := records.StateFormat(cp.State)
	require.NoError(t, err)
	return cp.State, v
}

// TestGoldenJournalsOfEveryStateFormat: a journal written by every build
// before checkpoint versions (testdata/README.state) verifies; opening it
// yields the state folded from its whole history (not a checkpoint's
// restore, which for format 1 lacks the counts per reservation and the
// pending transaction's time and process) and seals, so that the next
// start reads a checkpoint of this format; what is appended then verifies.
func TestGoldenJournalsOfEveryStateFormat(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records int
	}{
		{"state-v1", 50},
		{"state-v2", 50},
		{"state-v3", 54},
		{"state-v4", 54},
		{"state-v1-then-v2", 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyGolden(t, tc.name)
			n, err := Verify(journalPath(dir))
			require.NoError(t, err)
			require.Equal(t, tc.records, n)
			_, v := firstState(t, dir)
			require.Zero(t, v, "the golden's checkpoints are unversioned")
			want := oracleState(t, dir)

			j, err := Open(dir, "upgrade", func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) })
			require.NoError(t, err)
			var got json.RawMessage
			require.NoError(t, j.View(func(l *records.Live) error {
				c := *l
				got, err = c.Snapshot()
				return err
			}))
			require.JSONEq(t, string(want), string(got), "the live state is the whole history's fold")
			state, v := firstState(t, dir)
			require.Equal(t, records.StateVersion, v, "opening sealed the segment behind a checkpoint of this format")
			require.JSONEq(t, string(want), string(state))
			_, err = j.Append(records.KindSessionEnd, records.SessionEnd{V: records.Version})
			require.NoError(t, err)
			require.NoError(t, j.Close())

			n, err = Verify(journalPath(dir))
			require.NoError(t, err)
			require.Equal(t, tc.records+2, n, "the new checkpoint and the record after it")
			j = openT(t, dir, "again")
			require.NoError(t, j.View(func(l *records.Live) error {
				require.False(t, l.Legacy())
				return nil
			}))
		})
	}
}

// TestAnUnversionedCheckpointIsStillChecked: a golden's first checkpoint,
// edited to forget the open reservation, with the chain and head rewritten
// to hide the edit, is named by Verify: an earlier format is read in its
// shape, not taken on its word.
func TestAnUnversionedCheckpointIsStillChecked(t *testing.T) {
	for _, name := range []string{"state-v1", "state-v4"} {
		t.Run(name, func(t *testing.T) {
			dir := copyGolden(t, name)
			segs, err := Segments(dir)
			require.NoError(t, err)
			lines := readLines(t, segs[2])
			edited := strings.Replace(string(lines[0]), `"reservations":[{`, `"reservations":[],"x":[{`, 1)
			require.NotEqual(t, string(lines[0]), edited)
			lines[0] = []byte(edited)
			writeLines(t, segs[2], lines)
			rechain(t, dir, segs[2])
			_, err = Verify(journalPath(dir))
			var b *BrokenError
			require.ErrorAs(t, err, &b)
			require.Equal(t, segs[2], b.Path)
			require.Equal(t, 1, b.Line)
			require.Contains(t, b.Reason, "does not match the history before it")
		})
	}
}

// TestACheckpointOfANewerFormatIsRefused: a state format above
// StateVersion is refused by Verify and by Open, naming the upgrade.
func TestACheckpointOfANewerFormatIsRefused(t *testing.T) {
	dir := stateDir(t)
	j := smallSegments(t, dir, "new", 600)
	fill(t, j, 6)
	require.NoError(t, j.Close())
	segs, err := Segments(dir)
	require.NoError(t, err)
	require.Greater(t, len(segs), 1)
	last := segs[len(segs)-1]
	lines := readLines(t, last)
	edited := strings.Replace(string(lines[0]), `"state":{"v":4,`, `"state":{"v":5,`, 1)
	require.NotEqual(t, string(lines[0]), edited)
	lines[0] = []byte(edited)
	writeLines(t, last, lines)
	rechain(t, dir, last)
	_, err = Verify(journalPath(dir))
	require.ErrorContains(t, err, "checkpoint state has format 5; this walletgate reads formats up to 4: upgrade walletgate")
	_, err = Open(dir, "new", nil)
	requireUnavailable(t, err, "upgrade walletgate")
}

// TestUpgradingABrokenHistoryRefusesTheJournal: opening a journal whose
// active segment begins with an unversioned checkpoint folds its whole
// history; an edited sealed segment then refuses the journal (as audit
// verify calls it broken) instead of being taken on the checkpoint's word.
func TestUpgradingABrokenHistoryRefusesTheJournal(t *testing.T) {
	dir := copyGolden(t, "state-v2")
	segs, err := Segments(dir)
	require.NoError(t, err)
	raw, err := os.ReadFile(segs[0])
	require.NoError(t, err)
	edited := strings.Replace(string(raw), `"5000000"`, `"500000"`, 1)
	require.NotEqual(t, string(raw), edited)
	require.NoError(t, os.WriteFile(segs[0], []byte(edited), 0o600))
	_, err = Open(dir, "upgrade", nil)
	requireUnavailable(t, err, "written by an earlier walletgate", "does not verify")
}
