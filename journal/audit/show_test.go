package audit_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/audit"
	"github.com/walletgate/walletgate/journal/records"
)

// history writes a small history into a fresh state directory of one wallet
// on the dev chain, and returns its journal file.
func history(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "1337-0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")
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
	return filepath.Join(dir, journal.FileName)
}

func show(t *testing.T, file string, opts audit.Options) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, audit.Show(&out, []string{file}, opts))
	return out.String()
}

func TestShowSaysWhatHappenedInWords(t *testing.T) {
	file := history(t)
	out := show(t, file, audit.Options{})
	for _, want := range []string{
		"wallet_send previewed: 1 transaction(s), spend 2.5 USDT",
		"caps reserved (r1): 0.000042 ETH, 2.5 USDT",
		"PHANTOM reservation r1 RELEASED at start-up",
		"REFUSED by the node (txpool is full)",
		"0xaa DROPPED: it never executed",
		"NEVER ANSWERED: the wallet_send call c1",
		"SESSION WITHOUT AN END: session s1",
		"(9 records)",
	} {
		require.Contains(t, out, want)
	}
	require.Contains(t, show(t, file, audit.Options{BaseUnits: true}), "2.5 USDT (2500000 base units)")

	kinds := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(show(t, file, audit.Options{JSON: true})), "\n") {
		var ev audit.Event
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		require.NotEmpty(t, ev.Text)
		kinds[ev.Kind] = true
	}
	for _, k := range []string{"preview", "cap_correct", "dropped", "unanswered", "no_end"} {
		require.True(t, kinds[k], "kind %s in the JSON", k)
	}
}
