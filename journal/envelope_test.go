package journal

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/walletgate/walletgate/journal/records"

	"github.com/stretchr/testify/require"
)

// TestEveryWrittenLineTakesTheFastRead: what Append writes (every kind,
// with and without data, a checkpoint) is read by parseEnvelope, not by the
// encoding/json fallback, and read as encoding/json reads it.
func TestEveryWrittenLineTakesTheFastRead(t *testing.T) {
	dir := stateDir(t)
	j, err := OpenOptions(dir, "fast", newFakeClock().now, Options{SegmentSize: 600})
	require.NoError(t, err)
	defer j.Close()
	fill(t, j, 5)
	_, err = j.Append(records.KindSessionEnd, nil)
	require.NoError(t, err)
	_, err = j.Append(records.KindCapReserve, records.CapChange{V: records.Version, ID: "r", At: time.Now().UTC(), Change: map[string]string{"ETH": "1"}})
	require.NoError(t, err)
	segs, err := Segments(dir)
	require.NoError(t, err)
	require.Greater(t, len(segs), 1, "a checkpoint was written")
	lines := 0
	for _, p := range segs {
		for _, l := range readLines(t, p) {
			line := l[:len(l)-1]
			got, ok := parseEnvelope(line, nil)
			require.True(t, ok, "not read by the fast path: %s", line)
			var want records.Record
			require.NoError(t, json.Unmarshal(line, &want))
			require.Equal(t, want, got)
			lines++
		}
	}
	require.Equal(t, 7+len(segs)-1, lines)
}

// FuzzEnvelope: wherever parseEnvelope answers, encoding/json reads the
// line too, and reads the same record.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"seq":1,"time":"2026-11-30T09:00:01.5Z","pid":10845,"session":"0a1b","kind":"session_start","data":{"chain_id":1337},"prev":"1f1c"}`,
		`{"seq":2,"time":"2026-11-30T09:00:01Z","pid":-1,"session":"","kind":"k","prev":""}`,
		`{"seq":18446744073709551615,"time":"2026-11-30T09:00:01+01:00","pid":0,"session":"s","kind":"k","data":{"a":",\"prev\":\"x\""},"prev":"p"}`,
		`{"seq":3,"time":"2026-11-30T09:00:01Z","pid":1,"session":"s","kind":"k","data":{"a":1,"prev":"q"},"prev":"p"}`,
		`{"seq":01,"time":"2026-11-30T09:00:01Z","pid":1,"session":"s","kind":"k","prev":"p"}`,
		`{"seq":4,"time":"2026-11-30T09:00:01Z","pid":1,"session":"s","kind":"k","data":{"a":},"prev":"p"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := parseEnvelope(line, nil)
		if !ok {
			return
		}
		var want records.Record
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("the fast read took a line encoding/json refuses (%v): %q", err, line)
		}
		if !want.Time.Equal(got.Time) || want.Time.String() != got.Time.String() {
			t.Fatalf("time %v, encoding/json %v", got.Time, want.Time)
		}
		got.Time, want.Time = time.Time{}, time.Time{}
		require.Equal(t, want, got)
	})
}
