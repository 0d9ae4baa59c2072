package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/journal"

	"github.com/walletgate/walletgate/journal/records"
)

// auditJournal writes a small history into a fresh state directory of one
// wallet on the dev chain, and returns the directory.
func auditJournal(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state", "1337-0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")
	j, err := journal.Open(dir, "s1", time.Now)
	require.NoError(t, err)
	at := time.Now().UTC()
	usdt := "0x412c113686C5eC57D6DC7A01d0499e93Cc9E8dcC" // the dev chain's USDT, 6 decimals
	for _, r := range []struct {
		kind string
		data any
	}{
		{records.KindSessionStart, records.SessionStart{V: 1, Version: "test", PID: 1, ChainID: 1337, Wallet: "0xf39F", Signer: "dev"}},
		{records.KindToolStart, records.ToolStart{V: 1, Call: "c1", Tool: "wallet_send"}},
		{records.KindPreview, records.Preview{V: 1, Tool: "wallet_send", Legs: 1, Spend: map[string]string{usdt: "2500000"}}},
		{records.KindCapReserve, records.CapChange{V: 1, ID: "r1", At: at, Change: map[string]string{usdt: "2500000", "ETH": "42000000000000"}}},
		{records.KindCapCorrect, records.CapChange{V: 1, ID: "r1", At: at, Change: map[string]string{usdt: "-2500000", "ETH": "-42000000000000"}, Reason: records.ReasonPhantom}},
		{records.KindSigned, records.Signed{V: 1, Tool: "wallet_send", Leg: "transfer", Reservation: "r2", Tx: "0xaa", Raw: "0x01"}},
		{records.KindBroadcast, records.Broadcast{V: 1, Tx: "0xaa", Outcome: records.BroadcastRefused, Error: "txpool is full"}},
		{records.KindDropped, records.Dropped{V: 1, Tx: "0xaa", Reason: "its nonce was used by another transaction"}},
		{records.KindCapReserve, records.CapChange{V: 1, ID: "r3", At: at, Change: map[string]string{"ETH": "7000000000000000"}}},
	} {
		_, err := j.Append(r.kind, r.data)
		require.NoError(t, err)
	}
	require.NoError(t, j.Close())
	return dir
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
