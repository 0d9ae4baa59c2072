package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// copyBinary copies the test's walletgate into dir as name.
func copyBinary(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(binary)
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b, 0o755))
	return p
}

// walletgate with WALLETGATE_STATE_URL but no walletgate-shared beside it
// refuses before it reads a key or opens anything, naming the command that
// builds it; a walletgate-shared built without the tag is refused too,
// never started in a loop.
func TestStateURLWithoutWalletgateSharedIsRefusedInWords(t *testing.T) {
	dir := t.TempDir()
	bin := copyBinary(t, dir, "walletgate")
	state := t.TempDir()
	env := cleanEnv("WALLETGATE_RPC=http://127.0.0.1:1", "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+filepath.Join(dir, "no-such-key"),
		"WALLETGATE_STATE_DIR="+state, "WALLETGATE_STATE_URL=postgres://walletgate@127.0.0.1:1/walletgate")
	for _, argv := range [][]string{nil, {"audit", "verify"}, {"policy"}} {
		cmd := exec.Command(bin, argv...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s", out)
		require.Equal(t, 2, ee.ExitCode(), "%s", out)
		require.Contains(t, string(out), "walletgate-shared, not found beside walletgate (in "+dir+")")
		require.Contains(t, string(out), "go build -tags shared -o "+filepath.Join(dir, "walletgate-shared")+" ./cmd/walletgate")
		require.NotContains(t, string(out), "no-such-key", "refused before the key is read")
	}
	entries, err := os.ReadDir(state)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing was opened or written")

	copyBinary(t, dir, "walletgate-shared") // the lean binary under the other name
	cmd := exec.Command(bin)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "built without -tags shared")
	require.Equal(t, 1, strings.Count(string(out), "walletgate:"), "one refusal, not a chain of starts: %s", out)
}

// An unknown command is refused with exit code 2, whatever its name ("none"
// once slipped through as a no-op with exit 0).
func TestUnknownCommandIsRefused(t *testing.T) {
	for _, name := range []string{"none", "bogus"} {
		cmd := exec.Command(binary, name)
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s: %s", name, out)
		require.Equal(t, 2, ee.ExitCode())
		require.Contains(t, string(out), `unknown command "`+name+`"`)
	}
}
