package journal

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/walletgate/walletgate/journal/records"

	"github.com/stretchr/testify/require"
)

// TestVerifyNamesTheLine changes a six-line journal the ways a person might
// and expects Verify to name the line to look at.
func TestVerifyNamesTheLine(t *testing.T) {
	tests := []struct {
		name   string
		change func(lines [][]byte) [][]byte
		line   int
		reason string
	}{
		{"one digit of an amount", func(l [][]byte) [][]byte {
			l[2] = bytes.Replace(l[2], []byte(`"amount":"1002"`), []byte(`"amount":"1003"`), 1)
			return l
		}, 3, "was edited"},
		{"middle line deleted", func(l [][]byte) [][]byte {
			return append(l[:2:2], l[3:]...)
		}, 3, "seq is 4, expected 3"},
		{"first line deleted", func(l [][]byte) [][]byte {
			return l[1:]
		}, 1, "seq is 2, expected 1"},
		{"copy of a line inserted", func(l [][]byte) [][]byte {
			return append(l[:4:4], append([][]byte{l[1]}, l[4:]...)...)
		}, 5, "seq is 2, expected 5"},
		{"copy of the previous line inserted", func(l [][]byte) [][]byte {
			return append(l[:4:4], append([][]byte{l[3]}, l[4:]...)...)
		}, 5, "seq is 4, expected 5"},
		{"two lines swapped", func(l [][]byte) [][]byte {
			l[2], l[3] = l[3], l[2]
			return l
		}, 3, "seq is 4, expected 3"},
		{"last line torn", func(l [][]byte) [][]byte {
			l[5] = l[5][:len(l[5])/2]
			return l
		}, 6, "incomplete"},
		{"newline of the last line lost", func(l [][]byte) [][]byte {
			l[5] = l[5][:len(l[5])-1]
			return l
		}, 6, "incomplete"},
		{"last line removed", func(l [][]byte) [][]byte {
			return l[:5]
		}, 6, "missing"},
		{"last line edited", func(l [][]byte) [][]byte {
			l[5] = bytes.Replace(l[5], []byte(`"amount":"1005"`), []byte(`"amount":"1006"`), 1)
			return l
		}, 6, "does not match the hash in"},
		{"seq edited", func(l [][]byte) [][]byte {
			l[3] = bytes.Replace(l[3], []byte(`"seq":4`), []byte(`"seq":40`), 1)
			return l
		}, 4, "seq is 40"},
		{"prev of the first line edited", func(l [][]byte) [][]byte {
			l[0] = bytes.Replace(l[0], []byte(`"prev":"`), []byte(`"prev":"0`), 1)
			return l
		}, 1, "starts a journal"},
		{"blank line", func(l [][]byte) [][]byte {
			return append(l[:2:2], append([][]byte{[]byte("\n")}, l[2:]...)...)
		}, 3, "not a JSON record"},
		{"not JSON", func(l [][]byte) [][]byte {
			l[1] = []byte("seq=2\n")
			return l
		}, 2, "not a JSON record"},
		{"trailing data after the object", func(l [][]byte) [][]byte {
			l[1] = append(bytes.TrimSuffix(l[1], []byte("\n")), []byte(" {}\n")...)
			return l
		}, 2, "not a JSON record"},
		{"line over 1 MiB", func(l [][]byte) [][]byte {
			return append(l, append(bytes.Repeat([]byte("x"), maxLine+1), '\n'))
		}, 7, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := stateDir(t)
			j := openT(t, dir, "s")
			fill(t, j, 6)
			require.NoError(t, j.Close())
			writeLines(t, journalPath(dir), tt.change(readLines(t, journalPath(dir))))

			n, err := Verify(journalPath(dir))
			requireBroken(t, err, tt.line, tt.reason)
			require.Contains(t, err.Error(), journalPath(dir))
			require.Equal(t, tt.line-1, n, "the records before the named line")

			_, err = Open(dir, "s", nil)
			requireUnavailable(t, err, tt.reason)
		})
	}
}

func TestVerify(t *testing.T) {
	dir := stateDir(t)
	j := openT(t, dir, "s")
	fill(t, j, 4)

	t.Run("sound", func(t *testing.T) {
		n, err := Verify(j.Path())
		require.NoError(t, err)
		require.Equal(t, 4, n)
	})
	t.Run("copy under another name is checked by its chain alone", func(t *testing.T) {
		lines := readLines(t, j.Path())
		p := filepath.Join(stateDir(t), "backup.jsonl")
		writeLines(t, p, lines[:3])
		n, err := Verify(p)
		require.NoError(t, err, "without the head, a shorter journal is a sound one")
		require.Equal(t, 3, n)
	})
	t.Run("head behind the journal", func(t *testing.T) {
		d := stateDir(t)
		lines := readLines(t, j.Path())
		writeLines(t, journalPath(d), lines)
		require.NoError(t, os.WriteFile(filepath.Join(d, HeadName), []byte(`{"seq":3,"hash":"`+hashLine(bytes.TrimSuffix(lines[2], []byte("\n")))+`"}`), 0o600))
		n, err := Verify(journalPath(d))
		require.NoError(t, err)
		require.Equal(t, 4, n)
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := Verify(filepath.Join(stateDir(t), FileName))
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("unknown fields are allowed", func(t *testing.T) {
		p := filepath.Join(stateDir(t), "future.jsonl")
		prev := genesisHash
		var buf bytes.Buffer
		for i := 1; i <= 3; i++ {
			line, err := json.Marshal(map[string]any{"seq": i, "kind": "k", "prev": prev, "added_later": []int{i}})
			require.NoError(t, err)
			buf.Write(line)
			buf.WriteByte('\n')
			prev = hashLine(line)
		}
		require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o600))
		n, err := Verify(p)
		require.NoError(t, err)
		require.Equal(t, 3, n)
	})
}

func TestReadFileReturnsTheSoundPrefix(t *testing.T) {
	dir := stateDir(t)
	j := openT(t, dir, "s")
	fill(t, j, 5)
	want, err := j.Records()
	require.NoError(t, err)
	lines := readLines(t, j.Path())
	lines[3] = []byte(strings.Replace(string(lines[3]), `"kind":"spend"`, `"kind":"spent"`, 1))
	writeLines(t, j.Path(), lines)

	got, err := ReadFile(j.Path())
	requireBroken(t, err, 4, "was edited")
	require.Equal(t, want[:3], got, "line 4 is only known bad once line 5 is read")
}

// A torn last line is told apart from every other break by a field, never
// by its text: audit verify's hint depends on it.
func TestBrokenErrorSaysWhenTheLastLineIsTorn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	j, err := Open(dir, "s", nil)
	require.NoError(t, err)
	_, err = j.Append(records.KindSessionEnd, records.SessionEnd{V: records.Version, PID: 1})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	path := filepath.Join(dir, FileName)
	whole, err := os.ReadFile(path)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(path, append(append([]byte{}, whole...), `{"seq":3`...), 0o600))
	_, err = Verify(path)
	var b *BrokenError
	require.ErrorAs(t, err, &b)
	require.True(t, b.Torn, "an incomplete last line: %v", err)

	require.NoError(t, os.WriteFile(path, append(append([]byte{}, whole...), "{not json}\n"...), 0o600))
	_, err = Verify(path)
	require.ErrorAs(t, err, &b)
	require.False(t, b.Torn, "a complete line that is not a record: %v", err)
}
