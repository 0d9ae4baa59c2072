package records

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fold applies records of the given kinds and data, seq 1, 2, 3 …, to l.
func fold(t *testing.T, l *Live, at time.Time, recs ...any) {
	t.Helper()
	for i := 0; i+1 < len(recs); i += 2 {
		raw, err := json.Marshal(recs[i+1])
		require.NoError(t, err)
		require.NoError(t, l.Apply(Record{Seq: l.Seq() + 1, Time: at, PID: 7, Session: "s", Kind: recs[i].(string), Data: raw}))
	}
}

// The fold, without a journal: a reservation closes when its transaction is
// signed, the transaction stays pending until its receipt, and a snapshot
// restored is the state it was taken of.
func TestLiveFoldsAWriteAndRestoresItsSnapshot(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	nonce := uint64(4)
	var l Live
	fold(t, &l, at,
		KindSessionStart, SessionStart{V: Version, PID: 7},
		KindCapReserve, CapChange{V: Version, ID: "r1", At: at, Change: map[string]string{"ETH": "5"}, Nonce: &nonce},
	)
	require.Len(t, l.Reservations, 1)
	require.Len(t, l.Allocs, 1)
	fold(t, &l, at, KindSigned, Signed{V: Version, Reservation: "r1", Tx: "0xaa", Nonce: 4})
	require.Empty(t, l.Reservations, "signing closes the reservation")
	require.Empty(t, l.Allocs, "and spends its nonce")
	require.Len(t, l.Pending, 1)
	fold(t, &l, at, KindBroadcast, Broadcast{V: Version, Tx: "0xaa", Outcome: BroadcastAccepted})
	require.Equal(t, []string{BroadcastAccepted}, l.Pending[0].Broadcasts)

	snap, err := l.Snapshot()
	require.NoError(t, err)
	back, err := ReadState(snap)
	require.NoError(t, err)
	again, err := back.Snapshot()
	require.NoError(t, err)
	require.JSONEq(t, string(snap), string(again), "a snapshot restored is the state it was taken of")

	fold(t, &l, at, KindReceipt, Receipt{V: Version, Tx: "0xaa", Status: 1, Block: 9, Fee: "21"})
	require.Empty(t, l.Pending, "a receipt ends the transaction")
	require.Equal(t, uint64(5), l.NextMined)
	require.Equal(t, uint64(5), l.Seq())
	require.Equal(t, map[string]int{"s": 7}, l.Sessions)
}
