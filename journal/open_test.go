package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenRefuses(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		reason []string // in the error's Reason; DIR stands for the directory
		fix    string   // in its Fix
	}{
		{"journal deleted, head present", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(journalPath(dir)))
		}, []string{"is missing", "had 5 records"}, "restore"},
		{"last line removed, head present", func(t *testing.T, dir string) {
			writeLines(t, journalPath(dir), readLines(t, journalPath(dir))[:4])
		}, []string{":5: missing", "ends after 4"}, "audit verify"},
		{"journal emptied, head present", func(t *testing.T, dir string) {
			writeLines(t, journalPath(dir), nil)
		}, []string{":1: missing"}, "restore"},
		{"middle line edited", func(t *testing.T, dir string) {
			editLine(t, dir, 3, `"amount":"1002"`, `"amount":"1009"`)
		}, []string{":3: does not match"}, "restore"},
		{"last line edited", func(t *testing.T, dir string) {
			editLine(t, dir, 5, `"amount":"1004"`, `"amount":"9004"`)
		}, []string{":5: does not match the hash in"}, "restore"},
		{"torn last line", func(t *testing.T, dir string) {
			lines := readLines(t, journalPath(dir))
			lines[4] = lines[4][:20]
			writeLines(t, journalPath(dir), lines)
		}, []string{":5: incomplete"}, "restore"},
		{"head deleted, journal has records", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, HeadName)))
		}, []string{HeadName + " is missing"}, "restore"},
		{"head garbage", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, HeadName), []byte("5\n"), 0o600))
		}, []string{"not a journal head"}, "restore"},
		{"head ahead", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, HeadName), fmt.Appendf(nil, `{"seq":6,"hash":"%s"}`, genesisHash), 0o600))
		}, []string{":6: missing"}, "restore"},
		{"journal 0644", func(t *testing.T, dir string) {
			require.NoError(t, os.Chmod(journalPath(dir), 0o644))
		}, []string{"DIR/journal.jsonl", "mode 0644"}, "chmod 600 DIR/journal.jsonl"},
		{"head 0640", func(t *testing.T, dir string) {
			require.NoError(t, os.Chmod(filepath.Join(dir, HeadName), 0o640))
		}, []string{"mode 0640"}, "chmod 600 DIR/journal.head"},
		{"lock 0666", func(t *testing.T, dir string) {
			require.NoError(t, os.Chmod(filepath.Join(dir, LockName), 0o666))
		}, []string{"mode 0666"}, "chmod 600 DIR/journal.lock"},
		{"dir 0755", func(t *testing.T, dir string) {
			require.NoError(t, os.Chmod(dir, 0o755))
		}, []string{"state directory DIR has", "mode 0755"}, "chmod 700 DIR"},
		{"journal is a symlink", func(t *testing.T, dir string) {
			p := journalPath(dir)
			require.NoError(t, os.Rename(p, p+".real"))
			require.NoError(t, os.Symlink(p+".real", p))
		}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := stateDir(t)
			j := openT(t, dir, "s")
			fill(t, j, 5)
			require.NoError(t, j.Close())
			tt.change(t, dir)
			before := snapshot(t, dir)

			j, err := Open(dir, "s", nil)
			require.Error(t, err)
			require.Nil(t, j, "never a journal to write to")
			if tt.reason == nil { // refused by the OS (ELOOP), with context
				require.ErrorContains(t, err, "journal")
				return
			}
			var reason []string
			for _, r := range tt.reason {
				reason = append(reason, strings.ReplaceAll(r, "DIR", dir))
			}
			u := requireUnavailable(t, err, reason...)
			require.Contains(t, u.Fix, strings.ReplaceAll(tt.fix, "DIR", dir))
			require.Equal(t, before, snapshot(t, dir), "a refused Open changes nothing")
		})
	}
}

// editLine replaces old with new in line n (1-based) of dir's journal.
func editLine(t *testing.T, dir string, n int, old, new string) {
	t.Helper()
	lines := readLines(t, journalPath(dir))
	edited := []byte(replaceOnce(t, string(lines[n-1]), old, new))
	lines[n-1] = edited
	writeLines(t, journalPath(dir), lines)
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	require.Equal(t, 1, strings.Count(s, old), "%q in %q", old, s)
	return strings.Replace(s, old, new, 1)
}

// snapshot maps each journal file in dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, name := range []string{FileName, HeadName} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			m[name] = string(b)
		}
	}
	return m
}

func TestOpenRepairsHeadBehind(t *testing.T) {
	for _, behind := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d behind", behind), func(t *testing.T) {
			dir := stateDir(t)
			headPath := filepath.Join(dir, HeadName)
			j := openT(t, dir, "s")
			fill(t, j, 3)
			old, err := os.ReadFile(headPath)
			require.NoError(t, err)
			fill(t, j, behind)
			require.NoError(t, j.Close())
			current, err := os.ReadFile(headPath)
			require.NoError(t, err)
			// As if the process died between appending and updating the head.
			require.NoError(t, os.WriteFile(headPath, old, 0o600))

			j = openT(t, dir, "s")
			repaired, err := os.ReadFile(headPath)
			require.NoError(t, err)
			require.Equal(t, string(current), string(repaired))
			r, err := j.Append("next", nil)
			require.NoError(t, err)
			require.EqualValues(t, 3+behind+1, r.Seq)
		})
	}
}

func TestOpenFresh(t *testing.T) {
	t.Run("empty journal without head: a crash while creating", func(t *testing.T) {
		dir := stateDir(t)
		require.NoError(t, os.WriteFile(journalPath(dir), nil, 0o600))
		j := openT(t, dir, "s")
		_, err := os.Stat(filepath.Join(dir, HeadName))
		require.NoError(t, err, "head created")
		r, err := j.Append("first", nil)
		require.NoError(t, err)
		require.EqualValues(t, 1, r.Seq)
	})
	t.Run("empty journal with its head", func(t *testing.T) {
		dir := stateDir(t)
		require.NoError(t, openT(t, dir, "s").Close())
		j := openT(t, dir, "s")
		got, err := j.Records()
		require.NoError(t, err)
		require.Empty(t, got)
	})
	t.Run("not a directory", func(t *testing.T) {
		p := filepath.Join(stateDir(t), "file")
		require.NoError(t, os.WriteFile(p, nil, 0o600))
		_, err := Open(p, "s", nil)
		requireUnavailable(t, err, "not a directory")
	})
	t.Run("no directory", func(t *testing.T) {
		_, err := Open("", "s", nil)
		require.Error(t, err)
	})
}

func TestDefaultDir(t *testing.T) {
	tests := []struct {
		name, xdg, home, want string
	}{
		{"XDG_STATE_HOME", "/x/state", "/home/u", "/x/state/walletgate"},
		{"no XDG_STATE_HOME", "", "/home/u", "/home/u/.local/state/walletgate"},
		{"relative XDG_STATE_HOME is ignored", "state", "/home/u", "/home/u/.local/state/walletgate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", tt.xdg)
			t.Setenv("HOME", tt.home)
			got, err := DefaultDir()
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
