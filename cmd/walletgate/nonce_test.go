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
	"github.com/ethereum/go-ethereum/core/types"
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

	killAtReserved(t, env, to)
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

// TestKilledBetweenReservedAndSignedBesideALiveProcess: two walletgates on
// one state directory; one dies after reserving and before signing. The
// other, which keeps running (no start of its own releases anything), does
// not sign its next send behind the dead one's nonce.
func TestKilledBetweenReservedAndSignedBesideALiveProcess(t *testing.T) {
	info := startDevnet(t)
	view := newChainView(t, info)
	state := t.TempDir()
	env := append(capsEnv(info, state), "WALLETGATE_RECEIPT_TIMEOUT=10s")
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e27")
	nonce := view.nonce()
	live := startServer(t, env)
	live.initialize()
	live.request("tools/list", map[string]any{})

	killAtReserved(t, env, to)
	require.True(t, journalHas(t, state, "cap_reserve"))
	require.False(t, journalHas(t, state, "signed"))

	sent := confirmUSDT(t, live, to, "5")
	require.Equal(t, "confirmed", sent["status"], sent["message"])
	require.Equal(t, float64(nonce), sent["nonce"], "the dead process's nonce is free")
	require.Equal(t, nonce+1, view.nonce())
	require.Equal(t, big.NewInt(5_000_000), view.usdtOf(to))
}

// journalHasTx reports whether a journal record of kind names tx.
func journalHasTx(t *testing.T, state, kind, tx string) bool {
	files, _ := filepath.Glob(filepath.Join(state, "*", "journal.jsonl"))
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, `"kind":"`+kind+`"`) && strings.Contains(strings.ToLower(line), strings.ToLower(tx)) {
				return true
			}
		}
	}
	return false
}

// TestLostBroadcastDoesNotJamTheWallet: the node answers a broadcast with
// its hash and then does not have it (dropped from its pool). The confirm
// answers pending and the send stays counted; the next confirm (or the next
// start) finds it lost and sends its identical bytes again — or, when the
// node refuses them and does not have them, ends it (refused-final,
// released, its nonce reused) — and the next send confirms. The lost payee
// is paid at most once.
func TestLostBroadcastDoesNotJamTheWallet(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		refuseResend, atStart bool
	}{
		{"resent by the next confirm", false, false},
		{"refused when the next confirm resends it", true, false},
		{"resent at the next start", false, true},
		{"refused when the next start resends it", true, true},
	} {
		refuseResend := tc.refuseResend
		t.Run(tc.name, func(t *testing.T) {
			b := startBehindProxy(t, "WALLETGATE_RECEIPT_TIMEOUT=3s")
			lostTo := common.HexToAddress("0x00000000000000000000000000000000000e2e25")
			nextTo := common.HexToAddress("0x00000000000000000000000000000000000e2e26")
			nonce := b.view.nonce()

			var mu sync.Mutex
			var lostRaw string
			b.proxy.setFault("eth_sendRawTransaction", func(params json.RawMessage) *fault {
				var p []string
				_ = json.Unmarshal(params, &p)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case lostRaw == "" && len(p) == 1:
					// Swallowed: never forwarded, answered with its hash.
					lostRaw = p[0]
					var tx types.Transaction
					if tx.UnmarshalBinary(common.FromHex(p[0])) != nil {
						return &fault{errMsg: "test proxy: not a transaction"}
					}
					return &fault{result: json.RawMessage(`"` + tx.Hash().Hex() + `"`)}
				case refuseResend && len(p) == 1 && p[0] == lostRaw:
					return &fault{errMsg: "txpool is full"}
				}
				return nil
			})

			lost := confirmUSDT(t, b.c, lostTo, "6")
			require.Equal(t, "pending", lost["status"], lost["message"])
			require.Equal(t, "6", dayUsed(t, b.c, "USDT"), "pending is counted")
			require.Equal(t, nonce, b.view.nonce(), "the node never had it")
			lostHash := lost["tx_hash"].(string)
			if tc.atStart {
				b.restart(t)
				end := "receipt"
				if refuseResend {
					end = "refused_final"
				}
				waitForOr(t, "the start to settle the lost transaction", func() bool { return journalHasTx(t, b.state, end, lostHash) }, b.c.stderr.String)
			}

			start := time.Now()
			next := confirmUSDT(t, b.c, nextTo, "1")
			require.Equal(t, "confirmed", next["status"], next["message"])
			require.Less(t, time.Since(start), 2*time.Minute)
			require.Equal(t, big.NewInt(1_000_000), b.view.usdtOf(nextTo))
			if refuseResend {
				require.True(t, journalHasTx(t, b.state, "refused_final", lostHash), "ended on the record")
				require.Equal(t, float64(nonce), next["nonce"], "the lost one's nonce is reused")
				require.Equal(t, nonce+1, b.view.nonce())
				require.Zero(t, b.view.usdtOf(lostTo).Sign())
				require.Equal(t, "1", dayUsed(t, b.c, "USDT"), "the lost one is released")
			} else {
				require.Equal(t, float64(nonce+1), next["nonce"])
				require.Equal(t, nonce+2, b.view.nonce())
				require.Equal(t, big.NewInt(6_000_000), b.view.usdtOf(lostTo), "its identical bytes, once")
				require.Equal(t, "7", dayUsed(t, b.c, "USDT"))
			}

			// The next start settles what is left and sends nothing twice.
			b.restart(t)
			if !refuseResend {
				waitForOr(t, "the lost transaction's receipt", func() bool { return journalHasTx(t, b.state, "receipt", lostHash) }, b.c.stderr.String)
				require.Equal(t, big.NewInt(6_000_000), b.view.usdtOf(lostTo), "paid once")
				require.Equal(t, nonce+2, b.view.nonce())
			}
			require.Empty(t, b.c.callTool("wallet_policy", map[string]any{})["structuredContent"].(map[string]any)["pending_transactions"])
		})
	}
}

// killAtReserved runs the crash-point build on env, previews an 11 USDT send
// to to and confirms it: walletgate kills itself right after the
// reservation is recorded, before signing.
func killAtReserved(t *testing.T, env []string, to common.Address) {
	t.Helper()
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
}
