package main_test

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"
)

// chainView reads the devnet directly, not through walletgate.
type chainView struct {
	t    *testing.T
	node *ethclient.Client
	usdt common.Address
	dev  common.Address
}

func newChainView(t *testing.T, info devnetInfo) *chainView {
	node, err := ethclient.Dial(info.RPC)
	require.NoError(t, err)
	t.Cleanup(node.Close)
	return &chainView{t: t, node: node, usdt: common.HexToAddress(info.Contracts["USDT"]), dev: common.HexToAddress(info.DevAccount)}
}

func (v *chainView) usdtOf(who common.Address) *big.Int {
	out, err := v.node.CallContract(context.Background(), ethereum.CallMsg{To: &v.usdt, Data: append(common.FromHex("0x70a08231"), common.LeftPadBytes(who.Bytes(), 32)...)}, nil)
	require.NoError(v.t, err)
	return new(big.Int).SetBytes(out)
}

// pendingNonce is the wallet's next nonce counting the node's pool: a
// transaction handed to the node counts from the moment
// eth_sendRawTransaction answered, mined or not. Read after the signal that
// walletgate is done, it proves what was sent without waiting for a block.
func (v *chainView) pendingNonce() uint64 {
	n, err := v.node.PendingNonceAt(context.Background(), v.dev)
	require.NoError(v.t, err)
	return n
}

// recoveryFinished waits for c's line saying its start's recovery of
// journaled transactions is done (serve.go): an assertion that the recovery
// sent nothing more is then not a race with it. The recovery starts after
// the client's handshake or a bound of seconds.
func recoveryFinished(t *testing.T, c *stdioClient) {
	t.Helper()
	waitForOr(t, "the recovery of journaled transactions to finish", func() bool {
		return strings.Contains(c.stderr.String(), "recovery of journaled transactions finished")
	}, func() string { return c.stderr.String() })
}

func (v *chainView) nonce() uint64 {
	n, err := v.node.NonceAt(context.Background(), v.dev, nil)
	require.NoError(v.t, err)
	return n
}

// waitForOr is waitFor that shows what explain says when it times out.
func waitForOr(t *testing.T, what string, cond func() bool, explain func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; walletgate's stderr:\n%s", what, explain())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFor polls cond for up to 15 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func journalHas(t *testing.T, state, kind string) bool {
	files, _ := filepath.Glob(filepath.Join(state, "*", "journal.jsonl"))
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		if strings.Contains(string(raw), `"kind":"`+kind+`"`) {
			return true
		}
	}
	return false
}

func TestLostBroadcastAnswerIsNoDoubleSend(t *testing.T) {
	info := startDevnet(t)
	proxy := newRPCProxy(t, info.RPC)
	view := newChainView(t, info)
	state := t.TempDir()
	c := startServer(t, capsEnv(devnetInfo{RPC: proxy.srv.URL, KeyFile: info.KeyFile}, state))
	c.initialize()
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e05")
	args := map[string]any{"to": to.Hex(), "amount": "9", "asset": "USDT"}
	args["confirm"] = c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	nonce := view.nonce()

	proxy.dropAnswer("eth_sendRawTransaction") // forwarded, answer lost
	res := c.callTool("wallet_send", args)
	sc := res["structuredContent"].(map[string]any)
	require.Contains(t, []any{"confirmed", "pending"}, sc["status"], text(res))
	waitFor(t, "the transfer", func() bool { return view.usdtOf(to).Sign() > 0 })
	c.stop() // it has finished every confirm (drained) and sends nothing more
	require.Equal(t, nonce+1, view.pendingNonce(), "one transaction, none other in the node's pool")
	require.Equal(t, big.NewInt(9_000_000), view.usdtOf(to), "sent exactly once")
	require.Equal(t, nonce+1, view.nonce(), "one transaction")
	require.True(t, journalHas(t, state, "broadcast"))
}

// crashAt runs a confirm while the proxy holds method, waits until the
// journal shows kind, and kills walletgate there. It returns what the next
// start needs: the restarted server's environment and the chain's view.
func crashAt(t *testing.T, method, kind string) (env []string, state string, view *chainView, to common.Address, nonce uint64) {
	info := startDevnet(t)
	proxy := newRPCProxy(t, info.RPC)
	view = newChainView(t, info)
	state = t.TempDir()
	env = capsEnv(devnetInfo{RPC: proxy.srv.URL, KeyFile: info.KeyFile}, state)
	c := startServer(t, env)
	c.initialize()
	to = common.HexToAddress("0x00000000000000000000000000000000000e2e06")
	args := map[string]any{"to": to.Hex(), "amount": "11", "asset": "USDT"}
	args["confirm"] = c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	nonce = view.nonce()

	proxy.hold(method)
	go func() {
		b, _ := jsonMarshal(map[string]any{"jsonrpc": "2.0", "id": 999, "method": "tools/call", "params": map[string]any{"name": "wallet_send", "arguments": args}})
		c.stdin.Write(append(b, '\n'))
	}()
	waitFor(t, "the journal's "+kind+" record", func() bool { return journalHas(t, state, kind) })
	require.NoError(t, c.cmd.Process.Kill()) // SIGKILL
	_ = c.cmd.Wait()
	// A held request of the dead process is dropped, not forwarded: the
	// proxy must have seen its client go before holding stops (else the
	// request could still reach the node after the crash — a case of its
	// own, in which the next start finds the transaction included).
	waitFor(t, "the proxy to drop the dead process's held requests", func() bool { return proxy.heldWaiting() == 0 })
	proxy.unhold()
	return env, state, view, to, nonce
}

// dayUsed is the per-day cap's used amount of symbol, from wallet_policy.
func dayUsed(t *testing.T, c *stdioClient, symbol string) string {
	pol := c.callTool("wallet_policy", map[string]any{})["structuredContent"].(map[string]any)
	for _, cp := range pol["caps"].([]any) {
		m := cp.(map[string]any)
		if m["symbol"] == symbol && m["window"] == "per day" {
			return m["used"].(string)
		}
	}
	t.Fatalf("no per-day cap for %s in %v", symbol, pol["caps"])
	return ""
}

// TestKilledBetweenSignedAndBroadcast: the model never got an answer, and
// the journal shows no broadcast: the next start never sends those bytes.
// They stay counted until their nonce is used by another transaction, which
// the next send does without waiting behind them.
func TestKilledBetweenSignedAndBroadcast(t *testing.T) {
	env, state, view, to, nonce := crashAt(t, "eth_sendRawTransaction", "signed")
	c2 := startServer(t, env)
	c2.initialize()
	waitForOr(t, "the abandoned record", func() bool { return journalHas(t, state, "abandoned") }, func() string { return c2.stderr.String() })
	recoveryFinished(t, c2)
	require.Equal(t, nonce, view.pendingNonce(), "never sent: nothing in the node's pool")
	require.Zero(t, view.usdtOf(to).Sign(), "never sent")
	require.Equal(t, nonce, view.nonce(), "no transaction")
	require.Equal(t, "11", dayUsed(t, c2, "USDT"), "not shown unsent: still counted")

	args := map[string]any{"to": to.Hex(), "amount": "5", "asset": "USDT"}
	args["confirm"] = c2.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	res := c2.callTool("wallet_send", args)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	require.Equal(t, big.NewInt(5_000_000), view.usdtOf(to))
	require.Equal(t, nonce+1, view.nonce(), "the new send took the free nonce")

	// The next start sees the abandoned nonce used by another transaction:
	// dropped, and its reservation released.
	c2.stop()
	c3 := startServer(t, env)
	c3.initialize()
	waitFor(t, "the dropped record", func() bool { return journalHas(t, state, "dropped") })
	require.Equal(t, "5", dayUsed(t, c3, "USDT"))
}

func TestKilledBetweenBroadcastAndReceipt(t *testing.T) {
	env, state, view, to, nonce := crashAt(t, "eth_getTransactionReceipt", "broadcast")
	// Restart: the journal's open transaction is settled in the background.
	c2 := startServer(t, env)
	c2.initialize()
	waitFor(t, "the transfer", func() bool { return view.usdtOf(to).Sign() > 0 })
	waitFor(t, "the receipt in the journal", func() bool { return journalHas(t, state, "receipt") })
	recoveryFinished(t, c2)
	require.Equal(t, nonce+1, view.pendingNonce(), "exactly one transaction, none other in the node's pool")
	require.Equal(t, big.NewInt(11_000_000), view.usdtOf(to), "exactly one transfer")
	require.Equal(t, nonce+1, view.nonce(), "exactly one transaction")

	pol := c2.callTool("wallet_policy", map[string]any{})["structuredContent"].(map[string]any)
	for _, cp := range pol["caps"].([]any) {
		m := cp.(map[string]any)
		if m["symbol"] == "USDT" && m["window"] == "per day" {
			require.Equal(t, "11", m["used"], "the crashed send still counts")
		}
	}
	require.Empty(t, pol["pending_transactions"])
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// TestFlakyNodeNeverDoubleSendsAndReportsHonestly runs sends through a node
// that fails a share of requests at random (refused, or forwarded with the
// answer lost). Each send's amount is a distinct power of ten in base units,
// so the recipient's balance, digit by digit, counts how many times each
// send landed.
func TestFlakyNodeNeverDoubleSendsAndReportsHonestly(t *testing.T) {
	info := startDevnet(t)
	proxy := newRPCProxy(t, info.RPC)
	view := newChainView(t, info)
	state := t.TempDir()
	c := startServer(t, append(capsEnv(devnetInfo{RPC: proxy.srv.URL, KeyFile: info.KeyFile}, state), "WALLETGATE_RECEIPT_TIMEOUT=3s"))
	c.initialize()
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e07")
	nonce := view.nonce()
	proxy.failRandomly(7, 0.3)

	amounts := []string{"0.000001", "0.00001", "0.0001", "0.001", "0.01", "0.1"}
	outcome := make([]string, len(amounts))
	for i, amount := range amounts {
		args := map[string]any{"to": to.Hex(), "amount": amount, "asset": "USDT"}
		var token any
		for try := 0; try < 10 && token == nil; try++ {
			if sc, ok := c.callTool("wallet_send", args)["structuredContent"].(map[string]any); ok {
				token = sc["confirm_token"]
			}
		}
		require.NotNil(t, token, "a preview got through in 10 tries")
		args["confirm"] = token
		res := c.callTool("wallet_send", args)
		if sc, ok := res["structuredContent"].(map[string]any); ok {
			outcome[i] = sc["status"].(string)
		} else {
			outcome[i] = strings.SplitN(text(res), ":", 2)[0]
		}
	}
	proxy.failRandomly(0, 0) // the node recovers; anything still in flight lands
	// Stopped, walletgate has drained its confirms and sends nothing more;
	// what it handed the node is mined (the dev chain seals while a
	// transaction waits) before the balance is read.
	c.stop()
	waitFor(t, "what reached the node to be mined", func() bool { return view.nonce() == view.pendingNonce() })

	digits := view.usdtOf(to).String()
	landed := func(i int) int { // the digit for 10^i base units
		if i >= len(digits) {
			return 0
		}
		return int(digits[len(digits)-1-i] - '0')
	}
	total := 0
	for i, o := range outcome {
		n := landed(i)
		total += n
		require.LessOrEqual(t, n, 1, "send %d (%s) landed %d times", i, o, n)
		switch o {
		case "confirmed":
			require.Equal(t, 1, n, "send %d was reported confirmed", i)
		case "pending":
			// may or may not have landed: reported honestly as not known
		default:
			require.Equal(t, 0, n, "send %d was refused (%s) but landed", i, o)
		}
	}
	require.Equal(t, nonce+uint64(total), view.nonce(), "one transaction per landed send; outcomes %v", outcome)
	t.Logf("outcomes %v, recipient %s base units", outcome, digits)
}
