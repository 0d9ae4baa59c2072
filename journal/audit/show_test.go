package audit_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/internal/journaltest"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/audit"
)

// history writes journaltest's history into a fresh state directory and
// returns its journal file.
func history(t *testing.T) string {
	t.Helper()
	return filepath.Join(journaltest.History(t, t.TempDir()), journal.FileName)
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
