// Package journaltest writes a small journal history for the tests that read
// one back (journal/audit's and the walletgate audit command's).
package journaltest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/records"
)

// Wallet is the state directory name of the history's wallet on the dev chain.
const Wallet = "1337-0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"

// History writes a small history (a session, a previewed send, a reservation
// and its phantom correction, a refused broadcast, a dropped transaction, an
// open reservation) into a fresh state directory of Wallet under parent, and
// returns the directory.
func History(t testing.TB, parent string) string {
	t.Helper()
	dir := filepath.Join(parent, Wallet)
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
