package main_test

// Nonces after a crash or a lost broadcast (issue 24): whatever walletgate
// left behind, the next sends confirm one after the other, on consecutive
// nonces, and nothing is paid twice.

import (
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

var (
	crashBinOnce sync.Once
	crashBin     string
	crashBinErr  error
)

// crashBinary is walletgate built with -tags walletgate_crashpoints: it
// kills itself at the step WGTEST_CRASH_AT names (engine/crashpoint.go). It
// is built once, by the first test that needs it.
func crashBinary(t *testing.T) string {
	t.Helper()
	crashBinOnce.Do(func() {
		crashBin = filepath.Join(filepath.Dir(binary), "walletgate-crash")
		build := exec.Command("go", "build", "-tags", "walletgate_crashpoints", "-o", crashBin, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		crashBinErr = build.Run()
	})
	require.NoError(t, crashBinErr, "go build -tags walletgate_crashpoints")
	return crashBin
}

// confirmUSDT previews and confirms a USDT send and returns the confirm's
// structured result.
func confirmUSDT(t *testing.T, c *stdioClient, to common.Address, amount string) map[string]any {
	t.Helper()
	args := map[string]any{"to": to.Hex(), "amount": amount, "asset": "USDT"}
	res := c.callTool("wallet_send", args)
	sc, ok := res["structuredContent"].(map[string]any)
	require.True(t, ok, text(res))
	args["confirm"] = sc["confirm_token"]
	res = c.callTool("wallet_send", args)
	sc, ok = res["structuredContent"].(map[string]any)
	require.True(t, ok && res["isError"] != true, text(res))
	return sc
}

// TestKilledBetweenReservedAndSigned: walletgate dies after its reservation
// (caps and nonce) is journaled and before anything is signed. The next
// start gives back both, on the record, and two sends then confirm on the
// very next nonces — none waits behind a nonce nothing will ever use.
func TestKilledBetweenReservedAndSigned(t *testing.T) {
	info := startDevnet(t)
	proxy := newRPCProxy(t, info.RPC)
	view := newChainView(t, info)
	state := t.TempDir()
	env := append(capsEnv(devnetInfo{RPC: proxy.srv.URL, KeyFile: info.KeyFile}, state), "WALLETGATE_RECEIPT_TIMEOUT=10s")
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e24")
	nonce := view.nonce()

	c := startBinaryIn(t, crashBinary(t), "", append(env, "WGTEST_CRASH_AT=reserved"))
	c.initialize()
	args := map[string]any{"to": to.Hex(), "amount": "11", "asset": "USDT"}
	args["confirm"] = c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 999, "method": "tools/call", "params": map[string]any{"name": "wallet_send", "arguments": args}})
	c.send(string(req))
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		require.Error(t, err, "killed, not exited")
	case <-time.After(30 * time.Second):
		t.Fatalf("walletgate did not reach its crash point; stderr:\n%s", c.stderr.String())
	}
	require.True(t, journalHas(t, state, "cap_reserve"), "it died after reserving")
	require.False(t, journalHas(t, state, "signed"), "and before signing")
	require.Equal(t, nonce, view.nonce())

	c2 := startServer(t, env)
	c2.initialize()
	c2.request("tools/list", map[string]any{}) // the handshake is done: the release runs
	waitForOr(t, "the phantom's release", func() bool {
		return strings.Contains(c2.stderr.String(), "released a phantom cap reservation")
	}, c2.stderr.String)
	require.Equal(t, "0", dayUsed(t, c2, "USDT"), "nothing was signed for the phantom: its caps are released")

	first := confirmUSDT(t, c2, to, "5")
	require.Equal(t, "confirmed", first["status"], first["message"])
	require.Equal(t, float64(nonce), first["nonce"], "the dead reservation's nonce is used, not skipped")
	second := confirmUSDT(t, c2, to, "3")
	require.Equal(t, "confirmed", second["status"], second["message"])
	require.Equal(t, float64(nonce+1), second["nonce"])
	require.Equal(t, nonce+2, view.nonce())
	require.Equal(t, big.NewInt(8_000_000), view.usdtOf(to), "the two sends, and nothing of the dead one")
	require.Equal(t, "8", dayUsed(t, c2, "USDT"))
	require.True(t, journalHas(t, state, "nonce_free"), "the nonce was given back on the record")
}
