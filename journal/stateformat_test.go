package journal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
	var l Live
	require.NoError(t, Walk(journalPath(dir), func(r Record) error {
		if r.Kind == KindCheckpoint {
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
	var r Record
	require.NoError(t, json.Unmarshal(lines[0], &r))
	require.Equal(t, KindCheckpoint, r.Kind)
	var cp Checkpoint
	require.NoError(t, DecodeInto(r, &cp))
	v, err := stateVersion(cp.State)
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
			require.NoError(t, j.View(func(l *Live) error {
				c := *l
				got, err = c.Snapshot()
				return err
			}))
			require.JSONEq(t, string(want), string(got), "the live state is the whole history's fold")
			state, v := firstState(t, dir)
			require.Equal(t, StateVersion, v, "opening sealed the segment behind a checkpoint of this format")
			require.JSONEq(t, string(want), string(state))
			_, err = j.Append(KindSessionEnd, SessionEnd{V: Version})
			require.NoError(t, err)
			require.NoError(t, j.Close())

			n, err = Verify(journalPath(dir))
			require.NoError(t, err)
			require.Equal(t, tc.records+2, n, "the new checkpoint and the record after it")
			j = openT(t, dir, "again")
			require.NoError(t, j.View(func(l *Live) error {
				require.False(t, l.legacy)
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

// stateShape is the state format this code writes, field by field: the
// golden TestStateShapeIsVersioned holds it to.
const stateShape = `v int
caps []
caps[].seq uint64
caps[].kind string
caps[].id string
caps[].at time
caps[].change map[string]string
caps[].by string omitempty
pending []
pending[].seq uint64
pending[].signed struct
pending[].signed.v int omitempty
pending[].signed.tool string
pending[].signed.leg string
pending[].signed.reservation string
pending[].signed.tx string
pending[].signed.nonce uint64
pending[].signed.from string
pending[].signed.raw string
pending[].at time
pending[].pid int
pending[].broadcasts []string omitempty
pending[].abandoned bool omitempty
reservations []
reservations[].seq uint64
reservations[].id string
reservations[].at time
reservations[].change map[string]string
reservations[].session string
reservations[].pid int
sessions map[string]int
latest time
allocs [] omitempty
allocs[].reservation string
allocs[].nonce uint64
allocs[].at time
next_mined uint64 omitempty
signed_per map[string]int omitempty
ended_per map[string]int omitempty
signatures [] omitempty
signatures[].v int omitempty
signatures[].tool string
signatures[].reservation string
signatures[].kind string
signatures[].digest string
signatures[].token string omitempty
signatures[].owner string omitempty
signatures[].counterparty string omitempty
signatures[].amount string omitempty
signatures[].nonce string omitempty
signatures[].until time
signatures[].spend map[string]string
`

// TestStateShapeIsVersioned: the JSON shape of a checkpoint's state (Live
// and every type in it) is the one StateVersion names. A change without a
// new version would make every earlier checkpoint fail to match (or this
// build's fail under the next), as the builds before versions did.
func TestStateShapeIsVersioned(t *testing.T) {
	require.Equal(t, 4, StateVersion, "StateVersion changed: update stateShape to the new shape, and keep the old one's in legacyShapes")
	var b strings.Builder
	describeShape(&b, "", reflect.TypeOf(versionedState{}))
	if b.String() != stateShape {
		t.Fatalf("the checkpoint state's shape (journal.Live and the types in it) changed without a new StateVersion.\n"+
			"Bump StateVersion, add the shape before the change to legacyShapes (or a projection for it) in stateformat.go, "+
			"add a golden journal written by the build before the change under testdata (README.state says how), "+
			"and then update stateShape to:\n%s", b.String())
	}
}

// describeShape writes one line per JSON field of t, under prefix.
func describeShape(b *strings.Builder, prefix string, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			describeShape(b, prefix, f.Type)
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		path := prefix + name
		ft := f.Type
		kind := typeName(ft)
		line := path + " " + kind
		if strings.Contains(opts, "omitempty") {
			line += " omitempty"
		}
		b.WriteString(line + "\n")
		switch {
		case ft.Kind() == reflect.Struct && kind == "struct":
			describeShape(b, path+".", ft)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && kind == "[]":
			describeShape(b, path+"[].", ft.Elem())
		}
	}
}

// typeName is how describeShape names a field's type.
func typeName(t reflect.Type) string {
	switch {
	case t == reflect.TypeOf(time.Time{}):
		return "time"
	case t.Kind() == reflect.Struct:
		return "struct"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && t.Elem() != reflect.TypeOf(time.Time{}):
		return "[]"
	case t.Kind() == reflect.Slice:
		return "[]" + typeName(t.Elem())
	case t.Kind() == reflect.Map:
		return "map[" + typeName(t.Key()) + "]" + typeName(t.Elem())
	case t.Kind() == reflect.Pointer:
		return "*" + typeName(t.Elem())
	}
	return t.Kind().String()
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
