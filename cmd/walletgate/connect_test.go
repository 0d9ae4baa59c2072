package main_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// walletgate connect with no service behind it answers every request with an
// error that says so and how to start it, on stdout as JSON-RPC only; it
// reads no WALLETGATE_ variable (a configuration walletgate would refuse
// changes nothing) and opens no key.
func TestConnectWithoutTheServiceSaysHowToStartIt(t *testing.T) {
	cmd := exec.Command(binary, "connect", "--socket", filepath.Join(t.TempDir(), "absent.sock"))
	cmd.Env = cleanEnv("WALLETGATE_NO_SUCH_VARIABLE=1", "WALLETGATE_KEY_FILE=/nonexistent/key")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	require.Empty(t, stderr.String(), "nothing to say beside the answers")
	c := &stdioClient{t: t, lines: make(chan string, 8), stderr: &syncBuffer{}}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		c.lines <- l
	}
	close(c.lines)
	for _, id := range []float64{1, 2} {
		msg := c.next()
		require.Equal(t, id, msg["id"])
		e := msg["error"].(map[string]any)
		require.Equal(t, float64(-32001), e["code"])
		require.Contains(t, e["message"], "walletgate service is not reachable")
		require.Contains(t, e["message"], "sudo systemctl start walletgate")
		require.Contains(t, e["message"], "sudo walletgate service run")
	}
	_, more := <-c.lines
	require.False(t, more, "the notification is not answered")
}
