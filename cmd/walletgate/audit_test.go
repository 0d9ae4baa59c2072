package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/internal/journaltest"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/records"
)

// auditJournal writes journaltest's history into a fresh state directory
// and returns the wallet's directory.
func auditJournal(t *testing.T) string {
	t.Helper()
	return journaltest.History(t, filepath.Join(t.TempDir(), "state"))
}

func runAudit(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := cmdAudit(args, &out, &out)
	return out.String(), err
}

func TestAuditVerifyFailsWhereTheServerRefuses(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(t *testing.T, dir string)
		want   string
	}{
		{"head removed", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, journal.HeadName)))
		}, "journal.head: missing"},
		{"head of another journal", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, journal.HeadName), []byte(`{"seq":9,"hash":"`+strings.Repeat("0", 64)+`"}`+"\n"), 0o600))
		}, "does not match the hash"},
		{"journal readable by others", func(t *testing.T, dir string) {
			require.NoError(t, os.Chmod(filepath.Join(dir, journal.FileName), 0o644))
		}, "chmod 600"},
		{"journal removed", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, journal.FileName)))
		}, "missing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := auditJournal(t)
			out, err := runAudit(t, "verify", dir)
			require.NoError(t, err, out)
			tt.change(t, dir)
			_, openErr := journal.Open(dir, "server", nil)
			require.Error(t, openErr, "the server refuses this journal")
			out, err = runAudit(t, "verify", dir)
			require.Error(t, err, "so does audit verify")
			require.Contains(t, out, "BROKEN")
			require.Contains(t, out, tt.want)
			require.Contains(t, out, "walletgate refuses writes")
		})
	}
}

func TestAuditRepairKeepsTheDayWindow(t *testing.T) {
	dir := auditJournal(t)
	f, err := os.OpenFile(filepath.Join(dir, journal.FileName), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":10,"time":"20`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	out, err := runAudit(t, "verify", dir)
	require.Error(t, err)
	require.Contains(t, out, "incomplete last line")
	require.Contains(t, out, "walletgate audit repair")

	out, err = runAudit(t, "repair", dir)
	require.NoError(t, err, out)
	require.Contains(t, out, "REPAIRED")
	out, err = runAudit(t, "verify", dir)
	require.NoError(t, err, out)
	out, err = runAudit(t, "show", dir)
	require.NoError(t, err)
	require.Contains(t, out, "REPAIRED: an incomplete final line (line 10 of journal.jsonl")

	j, err := journal.Open(dir, "after", nil)
	require.NoError(t, err)
	defer j.Close()
	var ids []string
	require.NoError(t, j.View(func(l *records.Live) error {
		for _, c := range l.Caps {
			ids = append(ids, c.ID)
		}
		return nil
	}))
	require.Equal(t, []string{"r1", "r1", "r3"}, ids, "the day window is as before the torn write")

	out, err = runAudit(t, "repair", dir)
	require.NoError(t, err)
	require.Contains(t, out, "nothing to repair")
}
