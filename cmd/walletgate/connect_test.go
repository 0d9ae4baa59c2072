package main_test

import (
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
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

// Each connection to the service is one MCP session, with its own
// per-session caps: what one session spent does not count in another's
// session window, and the day window, kept in the one journal, counts both.
// startServiceRun runs `walletgate service run --env` on a socket of its
// own with env, and returns how to open a session (`walletgate connect`,
// initialized) and the service's stderr.
func startServiceRun(t *testing.T, env []string) (session func() *stdioClient, log *syncBuffer) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "mcp.sock")
	svc := exec.Command(binary, "service", "run", "--env", "--socket", sock)
	svc.Env = env
	log = &syncBuffer{}
	svc.Stderr = log
	require.NoError(t, svc.Start())
	t.Cleanup(func() { svc.Process.Signal(os.Interrupt); svc.Wait() })
	waitForOr(t, "the service's socket", func() bool { return strings.Contains(log.String(), "serving MCP on the service socket") }, log.String)
	return func() *stdioClient {
		cmd := exec.Command(binary, "connect", "--socket", sock)
		cmd.Env = cleanEnv()
		c := startCommand(t, cmd)
		c.initialize()
		return c
	}, log
}

func TestServiceSessionsHaveTheirOwnSessionCaps(t *testing.T) {
	info := startDevnet(t)
	view := newChainView(t, info)
	state := t.TempDir()
	session, log := startServiceRun(t, cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile,
		"WALLETGATE_STATE_DIR="+state, "WALLETGATE_CAP_PER_TX=ETH=1,USDT=10", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=10",
		"WALLETGATE_CAP_PER_DAY=ETH=1,USDT=15"))
	send := func(c *stdioClient, amount string) map[string]any {
		args := map[string]any{"to": "0x00000000000000000000000000000000000e2e27", "amount": amount, "asset": "USDT"}
		p := c.callTool("wallet_send", args)
		if p["isError"] == true {
			return p
		}
		args["confirm"] = p["structuredContent"].(map[string]any)["confirm_token"]
		return c.callTool("wallet_send", args)
	}
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e27")
	a, b := session(), session()
	require.Equal(t, "confirmed", send(a, "8")["structuredContent"].(map[string]any)["status"])
	refusedWith(t, send(a, "5"), "CAP_EXCEEDED") // a's session window: 8 of 10
	require.Equal(t, "confirmed", send(b, "5")["structuredContent"].(map[string]any)["status"], "b's session window is its own")
	refusedWith(t, send(b, "5"), "CAP_EXCEEDED") // the day: 13 of 15, shared
	require.Equal(t, big.NewInt(13_000_000), view.usdtOf(to), "what moved is what both sessions confirmed")
	require.Equal(t, 2, strings.Count(log.String(), "session started"))
}

// The service's sessions share one approval broker, each with tokens of its
// own: a person's rejection spends the preview's token in the session that
// issued it (its pending confirmation is gone), touches no other session,
// and the journal they share keeps the decision once.
func TestServiceRejectionSpendsTheTokenOfTheSessionThatIssuedIt(t *testing.T) {
	info := startDevnet(t)
	state := t.TempDir()
	sock := filepath.Join(t.TempDir(), "mcp.sock")
	svc := exec.Command(binary, "service", "run", "--env", "--socket", sock)
	svc.Env = append(capsEnv(info, state), "WALLETGATE_CONFIRM=human")
	log := &syncBuffer{}
	svc.Stderr = log
	require.NoError(t, svc.Start())
	t.Cleanup(func() { svc.Process.Signal(os.Interrupt); svc.Wait() })
	waitForOr(t, "the service's socket", func() bool { return strings.Contains(log.String(), "serving MCP on the service socket") }, log.String)
	m := pageLine.FindStringSubmatch(log.String())
	require.NotNil(t, m, "the page's address is on the service's stderr: %s", log.String())
	pageURL := m[1]
	session := func() *stdioClient {
		cmd := exec.Command(binary, "connect", "--socket", sock)
		cmd.Env = cleanEnv()
		c := startCommand(t, cmd)
		c.initialize()
		return c
	}
	pending := func(c *stdioClient) float64 {
		t.Helper()
		res := c.callTool("wallet_policy", map[string]any{})
		require.Nil(t, res["isError"], text(res))
		return res["structuredContent"].(map[string]any)["pending_confirmations"].(float64)
	}
	a, b := session(), session()
	args := map[string]any{"to": "0x00000000000000000000000000000000000e2e30", "amount": "1", "asset": "USDT"}
	previewID(t, a, map[string]any{"to": args["to"], "amount": "2", "asset": "USDT"})
	idb := previewID(t, b, args)
	require.Equal(t, []float64{1, 1}, []float64{pending(a), pending(b)}, "each session holds its own preview's token")

	pageOrigin := pageURL[:strings.Index(pageURL, "/a/")]
	require.Equal(t, http.StatusSeeOther, postForm(t, pageURL+"p/"+idb+"/reject", "csrf="+formToken(t, pageURL, idb), pageOrigin, ""))
	require.Equal(t, []float64{1, 0}, []float64{pending(a), pending(b)}, "the rejection spent b's token, and only that one")
	refusedWith(t, b.callTool("wallet_send", withConfirm(args, "123-456")), "APPROVAL_REJECTED")

	audit := exec.Command(binary, "audit", "show")
	audit.Env = cleanEnv("WALLETGATE_STATE_DIR=" + state)
	shown, err := audit.CombinedOutput()
	require.NoError(t, err, string(shown))
	require.Equal(t, 1, strings.Count(string(shown), "the person REJECTED preview "+idb+" (wallet_send)"), "the shared journal keeps the decision once:\n%s", shown)
}
