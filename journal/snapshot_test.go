package journal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/walletgate/walletgate/journal/records"

	"github.com/stretchr/testify/require"
)

func TestSnapshotReadsTheLiveStateAndWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := ReadSnapshot(dir)
	require.NoError(t, err, "no journal yet is an empty state")
	require.NoError(t, s.View(func(l *records.Live) error { require.Empty(t, l.Caps); return nil }))
	_, err = os.Stat(dir)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing was created")

	j := openT(t, dir, "s")
	_, err = j.Append(records.KindCapReserve, records.CapChange{V: records.Version, ID: "r1", Change: map[string]string{"ETH": "5"}})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	before := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		before[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
	}

	s, err = ReadSnapshot(dir)
	require.NoError(t, err)
	require.NoError(t, s.View(func(l *records.Live) error {
		require.Len(t, l.Reservations, 1)
		require.Equal(t, "r1", l.Reservations[0].ID)
		return nil
	}))
	_, err = s.Append(records.KindSessionEnd, records.SessionEnd{})
	require.ErrorIs(t, err, ErrReadOnly)
	require.ErrorIs(t, s.Update(func(*records.Live, records.AppendFunc) error { return nil }), ErrReadOnly)
	after, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, after, len(before))
	for name, raw := range before {
		now, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, raw, now, name)
	}

	// A journal the server refuses is refused here the same way.
	require.NoError(t, os.Remove(filepath.Join(dir, HeadName)))
	_, err = ReadSnapshot(dir)
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	require.Contains(t, ue.Fix, "walletgate audit verify")
}
