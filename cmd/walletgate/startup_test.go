package main_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// initialize and tools/list are answered from the configuration while the
// node has not answered the start-up batch yet; a tool call waits for it,
// and is served once it passed.
// In human mode too: the approval page starts while the node is asked.
func TestInitializeIsAnsweredBeforeTheNode(t *testing.T) {
	for mode, extra := range map[string][]string{
		"token": nil,
		"human": {"WALLETGATE_CONFIRM=human", "WALLETGATE_OPEN_BROWSER=off"},
	} {
		t.Run(mode, func(t *testing.T) { answeredBeforeTheNode(t, extra) })
	}
}

func answeredBeforeTheNode(t *testing.T, extra []string) {
	info := startDevnet(t)
	p := newRPCProxy(t, info.RPC)
	p.hold("eth_chainId") // the start-up batch carries it
	t.Cleanup(p.unhold)
	c := startServer(t, cleanEnv(append([]string{"WALLETGATE_RPC=" + p.srv.URL, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE=" + info.KeyFile}, extra...)...))

	res := c.initialize()
	require.Equal(t, "walletgate", res["serverInfo"].(map[string]any)["name"])
	list := c.request("tools/list", map[string]any{})
	require.Nil(t, list["error"])
	var names []string
	for _, tl := range list["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	require.Contains(t, names, "wallet_send", "the write tools are listed before the node answered")
	require.Equal(t, 1, p.heldWaiting(), "both were answered while the node's check was still held")

	// A call now waits for the check; released, it is served.
	c.send(`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"wallet_address","arguments":{}}}`)
	p.unhold()
	for {
		msg := c.next()
		if msg["id"] != float64(100) {
			continue
		}
		result := msg["result"].(map[string]any)
		require.Nil(t, result["isError"], text(result))
		require.Equal(t, info.DevAccount, result["structuredContent"].(map[string]any)["address"])
		break
	}
}

// A node on another chain than the configured one: initialize is still
// answered, every tool call is refused with NODE_CHECK_FAILED and the
// mismatch, nothing is read, and the exit status says so once the client
// leaves.
func TestAFailedNodeCheckRefusesEveryToolCall(t *testing.T) {
	info := startDevnet(t)
	c := startServer(t, cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=11155111", "WALLETGATE_KEY_FILE="+info.KeyFile))
	c.initialize()
	for _, tool := range []string{"wallet_address", "wallet_balance"} {
		res := c.callTool(tool, map[string]any{})
		require.Equal(t, true, res["isError"], text(res))
		require.True(t, strings.HasPrefix(text(res), "NODE_CHECK_FAILED"), text(res))
		require.Contains(t, text(res), "chain id mismatch")
		require.Contains(t, text(res), "11155111")
	}
	c.stop()
	require.Equal(t, 2, c.cmd.ProcessState.ExitCode(), "stderr:\n%s", c.stderr.String())
	require.Contains(t, c.stderr.String(), "NODE_CHECK_FAILED")
}
