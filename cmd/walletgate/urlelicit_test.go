package main_test

import (
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// initializeWith initializes with the given client capabilities on version.
func (c *stdioClient) initializeWith(version string, capabilities map[string]any) {
	c.t.Helper()
	res := c.request("initialize", map[string]any{
		"protocolVersion": version, "capabilities": capabilities,
		"clientInfo": map[string]any{"name": "e2e-url", "version": "0"},
	})
	require.Nil(c.t, res["error"])
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// A client that declared URL-mode elicitation confirms a human-mode preview
// with its id: walletgate asks the client to open that preview's approval
// page, the person approves there (in Chromium), and the write completes —
// the model never held a code. A client without URL mode is refused with the
// same id, and nothing moves.
func TestURLElicitationOpensTheApprovalPage(t *testing.T) {
	browser := startBrowser(t)
	info := startDevnet(t)
	view := newChainView(t, info)
	env := append(capsEnv(info, t.TempDir()), "WALLETGATE_CONFIRM=human")
	c := startServer(t, env)
	c.initializeWith("2025-11-25", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
	page := pageOf(t, c)
	to := common.HexToAddress("0x00000000000000000000000000000000000b0a77")
	args := map[string]any{"to": to.Hex(), "amount": "3", "asset": "USDT"}
	id := previewID(t, c, args)
	nonce := view.nonce()

	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 4242, "method": "tools/call", "params": map[string]any{"name": "wallet_send", "arguments": withConfirm(args, id)}})
	c.send(string(call))
	var elicit map[string]any
	for elicit == nil {
		msg := c.next()
		if msg["method"] == "elicitation/create" {
			elicit = msg
		}
		require.NotEqual(t, float64(4242), msg["id"], "the confirm answered before asking the client: %v", msg)
	}
	params := elicit["params"].(map[string]any)
	require.Equal(t, "url", params["mode"])
	require.Equal(t, page+"p/"+id, params["url"], "the page of exactly this preview")
	reply, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": elicit["id"], "result": map[string]any{"action": "accept"}})
	c.send(string(reply))
	waitForOr(t, "walletgate to wait for the person's decision", func() bool {
		return strings.Contains(c.stderr.String(), "waiting for the person's decision")
	}, func() string { return c.stderr.String() })
	require.Equal(t, nonce, view.nonce(), "nothing is sent before the person approves")

	tab := newTab(t, browser)
	tab.requireStatus(tab.navigate(params["url"].(string)), http.StatusOK, "the preview's page, opened as the client would")
	tab.requireStatus(tab.click("approve"), http.StatusOK, "approve")

	var done map[string]any
	for done == nil {
		msg := c.next()
		if msg["id"] == float64(4242) {
			done = msg["result"].(map[string]any)
		}
	}
	require.Nil(t, done["isError"], text(done))
	require.Equal(t, "confirmed", done["structuredContent"].(map[string]any)["status"], text(done))
	require.Equal(t, big.NewInt(3_000_000), view.usdtOf(to), "exactly the approved send")
	require.Equal(t, nonce+1, view.nonce())

	// A client without URL mode: the id is no code, and nothing moves; the
	// refusal says what the person does (TestHumanModeOpensTheApprovalPage…).
	plain := startServer(t, env)
	plain.initialize()
	id = previewID(t, plain, args)
	res := plain.callTool("wallet_send", withConfirm(args, id))
	require.Equal(t, true, res["isError"], text(res))
	require.True(t, strings.HasPrefix(text(res), "APPROVAL_PENDING"), text(res))
	require.Equal(t, nonce+1, view.nonce())
}
