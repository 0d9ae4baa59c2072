package main_test

// The outcome rule, tried from outside: the real binary on the dev chain
// behind a node that lies or fails. In every test the answer, the caps and
// the chain agree, and the next start does nothing the answer denied.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// behindProxy is walletgate on a fresh dev chain behind a fault-injecting
// proxy, with the tight caps of capsEnv.
type behindProxy struct {
	info  devnetInfo
	proxy *rpcProxy
	view  *chainView
	state string
	env   []string
	c     *stdioClient
}

func startBehindProxy(t *testing.T, extraEnv ...string) *behindProxy {
	info := startDevnet(t)
	b := &behindProxy{info: info, proxy: newRPCProxy(t, info.RPC), view: newChainView(t, info), state: t.TempDir()}
	b.env = append(capsEnv(devnetInfo{RPC: b.proxy.srv.URL, KeyFile: info.KeyFile}, b.state), extraEnv...)
	b.c = startServer(t, b.env)
	b.c.initialize()
	return b
}

// restart stops walletgate and starts it again on the same state.
func (b *behindProxy) restart(t *testing.T) {
	b.c.stop()
	b.c = startServer(t, b.env)
	b.c.initialize()
}

// previewUSDT previews a USDT send and returns the arguments with the token.
func (b *behindProxy) previewUSDT(t *testing.T, to common.Address, amount string) map[string]any {
	args := map[string]any{"to": to.Hex(), "amount": amount, "asset": "USDT"}
	res := b.c.callTool("wallet_send", args)
	sc, ok := res["structuredContent"].(map[string]any)
	require.True(t, ok, text(res))
	args["confirm"] = sc["confirm_token"]
	return args
}

func refusalCode(res map[string]any) string {
	if res["isError"] != true {
		return ""
	}
	return strings.SplitN(text(res), ":", 2)[0]
}

// Refused, then sent anyway: a node that refuses a broadcast it never
// stored. The answer says nothing was sent, the caps agree, and the next
// start does not send it.
func TestRefusedBroadcastIsNeverSentLater(t *testing.T) {
	b := startBehindProxy(t)
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e11")
	nonce := b.view.nonce()
	args := b.previewUSDT(t, to, "7")
	b.proxy.setFault("eth_sendRawTransaction", func(json.RawMessage) *fault { return &fault{errMsg: "txpool is full"} })
	res := b.c.callTool("wallet_send", args)
	require.Equal(t, "SEND_FAILED", refusalCode(res), text(res))
	require.Contains(t, text(res), "Nothing was sent")
	require.Equal(t, "0", dayUsed(t, b.c, "USDT"), "released")
	require.True(t, journalHas(t, b.state, "refused_final"))

	b.proxy.setFault("eth_sendRawTransaction", nil)
	sends := b.proxy.arrivedCount("eth_sendRawTransaction")
	b.restart(t)
	recoveryFinished(t, b.c) // recovery runs in the background
	require.Equal(t, sends, b.proxy.arrivedCount("eth_sendRawTransaction"), "the recovery broadcast nothing")
	require.Equal(t, nonce, b.view.pendingNonce(), "the refused bytes were never sent")
	require.Zero(t, b.view.usdtOf(to).Sign(), "the refused bytes were never sent")
	require.Equal(t, nonce, b.view.nonce())
	require.Equal(t, "0", dayUsed(t, b.c, "USDT"))

	// Its nonce is free: the next send takes it and lands.
	args = b.previewUSDT(t, to, "3")
	res = b.c.callTool("wallet_send", args)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	require.Equal(t, big.NewInt(3_000_000), b.view.usdtOf(to))
	require.Equal(t, nonce+1, b.view.nonce())
}

// Landed, then reported as not sent: the node forwards the transaction and
// answers "nonce too low". Five rounds under a session cap that fits two
// move two payments, each reported as it happened, and the caps count both.
func TestLandedThenRefusedIsReportedAsLanded(t *testing.T) {
	b := startBehindProxy(t, "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=20", "WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100")
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e12")
	nonce := b.view.nonce()
	b.proxy.setFault("eth_sendRawTransaction", func(json.RawMessage) *fault { return &fault{forward: true, errMsg: "nonce too low"} })
	var outcomes []string
	for round := 0; round < 5; round++ {
		args := map[string]any{"to": to.Hex(), "amount": "10", "asset": "USDT"}
		res := b.c.callTool("wallet_send", args)
		if sc, ok := res["structuredContent"].(map[string]any); ok {
			args["confirm"] = sc["confirm_token"]
			res = b.c.callTool("wallet_send", args)
		}
		if code := refusalCode(res); code != "" {
			outcomes = append(outcomes, code)
			continue
		}
		outcomes = append(outcomes, res["structuredContent"].(map[string]any)["status"].(string))
	}
	require.Equal(t, []string{"confirmed", "confirmed", "CAP_EXCEEDED", "CAP_EXCEEDED", "CAP_EXCEEDED"}, outcomes)
	require.Equal(t, big.NewInt(20_000_000), b.view.usdtOf(to), "exactly the two confirmed payments")
	require.Equal(t, nonce+2, b.view.nonce())
	require.Equal(t, "20", dayUsed(t, b.c, "USDT"))
}

// A receipt that is not ours: the node swallows the broadcast and answers,
// for the new hash, an earlier transaction — as it is, and with its hashes
// rewritten to the new one. Neither is confirmed; the wallet's nonce did not
// move, and the send stays counted.
func TestAReceiptThatIsNotOursIsNotConfirmed(t *testing.T) {
	for _, rewriteHash := range []bool{false, true} {
		t.Run(fmt.Sprintf("rewritten=%v", rewriteHash), func(t *testing.T) {
			b := startBehindProxy(t, "WALLETGATE_RECEIPT_TIMEOUT=2s")
			to := common.HexToAddress("0x00000000000000000000000000000000000e2e13")
			// An earlier, real transaction of the wallet.
			args := b.previewUSDT(t, to, "1")
			res := b.c.callTool("wallet_send", args)
			earlier := res["structuredContent"].(map[string]any)["tx_hash"].(string)
			var oldTx, oldRcpt json.RawMessage
			require.NoError(t, b.view.node.Client().CallContext(context.Background(), &oldTx, "eth_getTransactionByHash", earlier))
			require.NoError(t, b.view.node.Client().CallContext(context.Background(), &oldRcpt, "eth_getTransactionReceipt", earlier))
			nonce := b.view.nonce()

			args = b.previewUSDT(t, to, "2")
			b.proxy.setFault("eth_sendRawTransaction", func(json.RawMessage) *fault {
				return &fault{result: json.RawMessage(`"` + earlier + `"`)}
			})
			lie := func(old json.RawMessage, field string) func(params, result json.RawMessage) json.RawMessage {
				return func(params, _ json.RawMessage) json.RawMessage {
					if !rewriteHash {
						return old
					}
					var asked []string
					_ = json.Unmarshal(params, &asked)
					return json.RawMessage(strings.ReplaceAll(string(old), earlier, asked[0]))
				}
			}
			b.proxy.rewrite("eth_getTransactionByHash", lie(oldTx, "hash"))
			b.proxy.rewrite("eth_getTransactionReceipt", lie(oldRcpt, "transactionHash"))
			res = b.c.callTool("wallet_send", args)
			sc := res["structuredContent"].(map[string]any)
			require.Equal(t, "pending", sc["status"], text(res))
			require.NotContains(t, text(res), "CONFIRMED")
			require.Equal(t, nonce, b.view.nonce(), "nothing reached the chain")
			require.Equal(t, big.NewInt(1_000_000), b.view.usdtOf(to))
			require.Equal(t, "3", dayUsed(t, b.c, "USDT"), "an unknown outcome stays counted")
		})
	}
}

// Cancelled between signing and broadcast: the request's cancellation does
// not cut the broadcast short, the journal records what happened, and the
// next send does not wait behind a gap.
func TestCancelledConfirmStillBroadcastsOnce(t *testing.T) {
	b := startBehindProxy(t)
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e14")
	nonce := b.view.nonce()
	args := b.previewUSDT(t, to, "4")
	b.proxy.hold("eth_sendRawTransaction")
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 777, "method": "tools/call", "params": map[string]any{"name": "wallet_send", "arguments": args}})
	b.c.send(string(req))
	waitFor(t, "the broadcast to reach the node", func() bool { return b.proxy.arrivedCount("eth_sendRawTransaction") > 0 })
	b.c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":777,"reason":"user stopped it"}}`)
	// mcp-go handles a notification on its read loop before it reads the
	// next line: once the ping is answered, the request is cancelled.
	b.c.request("ping", map[string]any{})
	b.proxy.unhold()
	waitFor(t, "the transfer", func() bool { return b.view.usdtOf(to).Sign() > 0 })
	waitFor(t, "the receipt in the journal", func() bool { return journalHas(t, b.state, "receipt") })
	require.Equal(t, big.NewInt(4_000_000), b.view.usdtOf(to), "sent once")

	args = b.previewUSDT(t, to, "1")
	res := b.c.callTool("wallet_send", args)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	require.Equal(t, big.NewInt(5_000_000), b.view.usdtOf(to))
	require.Equal(t, nonce+2, b.view.nonce())
}

// A broadcast that gets HTTP 502 on every attempt is pending with an
// unknown outcome — not "sent" — and stays counted; the next confirm is
// refused while the node does not know it (a new transaction would queue
// behind the gap), and once the node answers again the identical bytes are
// sent and both payments land exactly once.
func TestBroadcastWithNoAnswerIsPendingAndBlocksTheNextNonce(t *testing.T) {
	b := startBehindProxy(t, "WALLETGATE_RECEIPT_TIMEOUT=2s")
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e15")
	nonce := b.view.nonce()
	args := b.previewUSDT(t, to, "6")
	b.proxy.setFault("eth_sendRawTransaction", func(json.RawMessage) *fault { return &fault{http502: true} })
	res := b.c.callTool("wallet_send", args)
	sc := res["structuredContent"].(map[string]any)
	require.Equal(t, "pending", sc["status"], text(res))
	require.Contains(t, text(res), "outcome is not known")
	require.NotContains(t, text(res), "was sent but")
	require.Equal(t, "6", dayUsed(t, b.c, "USDT"))

	args = b.previewUSDT(t, to, "1")
	res = b.c.callTool("wallet_send", args)
	require.Equal(t, "TX_OUTSTANDING", refusalCode(res), text(res))
	require.Contains(t, text(res), sc["tx_hash"].(string))
	require.Equal(t, nonce, b.view.nonce(), "nothing reached the chain")

	b.proxy.setFault("eth_sendRawTransaction", nil)
	args = b.previewUSDT(t, to, "1")
	res = b.c.callTool("wallet_send", args)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	waitFor(t, "both transfers", func() bool { return b.view.usdtOf(to).Cmp(big.NewInt(7_000_000)) == 0 })
	require.Equal(t, nonce+2, b.view.nonce())
	b.restart(t)
	recoveryFinished(t, b.c)
	require.Equal(t, nonce+2, b.view.pendingNonce(), "nothing sent twice: none other in the node's pool")
	require.Equal(t, big.NewInt(7_000_000), b.view.usdtOf(to), "nothing sent twice")
}

// Two walletgates on one wallet and state directory race their confirms:
// no nonce is taken twice, every confirm lands once.
func TestTwoProcessesRacingConfirmsNeverShareANonce(t *testing.T) {
	info := startDevnet(t)
	view := newChainView(t, info)
	state := t.TempDir()
	env := cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile,
		"WALLETGATE_STATE_DIR="+state, "WALLETGATE_CAP_PER_TX=ETH=1,USDT=100", "WALLETGATE_CAP_PER_SESSION=ETH=10,USDT=1000",
		"WALLETGATE_CAP_PER_DAY=ETH=10,USDT=1000")
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e16")
	nonce := view.nonce()
	const each = 12
	clients := []*stdioClient{startServer(t, env), startServer(t, env)}
	outcomes := make([][]string, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		c.initialize()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < each; k++ {
				args := map[string]any{"to": to.Hex(), "amount": "1", "asset": "USDT"}
				res := c.callTool("wallet_send", args)
				sc, ok := res["structuredContent"].(map[string]any)
				if !ok {
					outcomes[i] = append(outcomes[i], "preview: "+text(res))
					continue
				}
				args["confirm"] = sc["confirm_token"]
				res = c.callTool("wallet_send", args)
				if sc, ok := res["structuredContent"].(map[string]any); ok && res["isError"] != true {
					outcomes[i] = append(outcomes[i], sc["status"].(string))
				} else {
					outcomes[i] = append(outcomes[i], text(res))
				}
			}
		}()
	}
	wg.Wait()
	for i := range outcomes {
		for _, o := range outcomes[i] {
			require.Equal(t, "confirmed", o, "process %d", i)
		}
	}
	require.Equal(t, big.NewInt(2*each*1_000_000), view.usdtOf(to))
	require.Equal(t, nonce+2*each, view.nonce())
}

// A node that never answers: a preview fails with RPC_ERROR within the
// per-request bound, and reads keep working while a confirm waits on a hung
// broadcast.
func TestHungNodeFailsPromptlyAndReadsKeepWorking(t *testing.T) {
	b := startBehindProxy(t, "WALLETGATE_RPC_TIMEOUT=2s")
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e17")
	b.proxy.hold("eth_estimateGas")
	start := time.Now()
	res := b.c.callTool("wallet_send", map[string]any{"to": to.Hex(), "amount": "1", "asset": "USDT"})
	require.Equal(t, "RPC_ERROR", refusalCode(res), text(res))
	require.Less(t, time.Since(start), 10*time.Second)
	require.Contains(t, text(res), "127.0.0.1")
	b.proxy.unhold()

	// A second process reads while the first one's broadcast hangs.
	args := b.previewUSDT(t, to, "1")
	b.proxy.hold("eth_sendRawTransaction")
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 778, "method": "tools/call", "params": map[string]any{"name": "wallet_send", "arguments": args}})
	b.c.send(string(req))
	waitFor(t, "the broadcast to hang", func() bool { return b.proxy.arrivedCount("eth_sendRawTransaction") > 0 })
	reader := startServer(t, b.env)
	reader.initialize()
	start = time.Now()
	bal := reader.callTool("wallet_balance", map[string]any{})
	require.NotEqual(t, true, bal["isError"], text(bal))
	require.Less(t, time.Since(start), 5*time.Second)
	b.proxy.unhold()
	waitFor(t, "the transfer", func() bool { return b.view.usdtOf(to).Sign() > 0 })
}

// An approval left behind: a swap whose approval was included and whose
// swap then cannot go (the node now says the price moved) takes the
// approval back inside the same reservation, and says so.
func TestSwapApprovalIsTakenBackWhenTheSwapCannotGo(t *testing.T) {
	b := startBehindProxy(t, "WALLETGATE_CAP_PER_TX=ETH=1,USDT=100,WETH=1", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=1000,WETH=1", "WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100,WETH=1")
	router := common.HexToAddress(b.info.Contracts["SwapRouter02"])
	if router == (common.Address{}) {
		t.Fatal("the dev chain has no Uniswap: install testdata's npm packages")
	}
	nonce := b.view.nonce()
	allowance := func() *big.Int {
		data := append(common.FromHex("0xdd62ed3e"), append(common.LeftPadBytes(b.view.dev.Bytes(), 32), common.LeftPadBytes(router.Bytes(), 32)...)...)
		out, err := b.view.node.CallContract(context.Background(), ethereum.CallMsg{To: &b.view.usdt, Data: data}, nil)
		require.NoError(t, err)
		return new(big.Int).SetBytes(out)
	}
	require.Zero(t, allowance().Sign())
	usdtBefore := b.view.usdtOf(b.view.dev)

	args := map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "10"}
	res := b.c.callTool("wallet_swap", args)
	sc, ok := res["structuredContent"].(map[string]any)
	require.True(t, ok, text(res))
	require.Len(t, sc["preview"].(map[string]any)["legs"], 2, "approval and swap")
	args["confirm"] = sc["confirm_token"]
	// The swap leg's own simulation, made once the approval is in, reverts.
	b.proxy.setFault("eth_call", func(params json.RawMessage) *fault {
		if !strings.Contains(strings.ToLower(string(params)), `"to":"`+strings.ToLower(router.Hex())+`"`) {
			return nil
		}
		return &fault{errMsg: "execution reverted: Too little received", errData: revertData("Too little received")}
	})
	res = b.c.callTool("wallet_swap", args)
	sc = res["structuredContent"].(map[string]any)
	require.Equal(t, "incomplete", sc["status"], text(res))
	require.True(t, strings.HasPrefix(text(res), "INCOMPLETE: "), text(res))
	legs := sc["legs"].([]any)
	require.Len(t, legs, 3, "approve, swap not sent, the approval taken back")
	require.Equal(t, "included", legs[0].(map[string]any)["status"])
	require.Equal(t, "not_sent", legs[1].(map[string]any)["status"])
	require.Equal(t, "PRICE_MOVED", legs[1].(map[string]any)["code"])
	require.Equal(t, true, legs[2].(map[string]any)["undo"])
	require.Equal(t, "included", legs[2].(map[string]any)["status"])
	require.NotContains(t, text(res), "Nothing was signed")
	require.NoError(t, b.c.outputSchemas().Check("wallet_swap", sc, res["isError"] == true))
	require.Zero(t, allowance().Sign(), "the router's allowance is back where it was")
	require.Equal(t, usdtBefore, b.view.usdtOf(b.view.dev), "no USDT moved")
	require.Equal(t, nonce+2, b.view.nonce(), "the approval and its undoing")
	require.Equal(t, "0", dayUsed(t, b.c, "USDT"), "the swap's USDT is released")
}

// revertData is the ABI encoding of Error(reason), as a node returns it.
func revertData(reason string) string {
	word := func(n int) string { return fmt.Sprintf("%064x", n) }
	padded := fmt.Sprintf("%x", reason)
	for len(padded)%64 != 0 {
		padded += "0"
	}
	return "0x08c379a0" + word(32) + word(len(reason)) + padded
}

// A client that leaves while the start's recovery waits on a transaction
// that will not settle (its broadcast was lost and the node keeps failing
// it): walletgate stops at once, not after the receipt wait
// (WALLETGATE_RECEIPT_TIMEOUT, 5 minutes in that start); the transaction stays
// counted; the next start, on an honest node, sends its identical bytes and
// it lands exactly once.
func TestStopDuringRecoveryIsPrompt(t *testing.T) {
	b := startBehindProxy(t, "WALLETGATE_RECEIPT_TIMEOUT=2s")
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e17")
	nonce := b.view.nonce()
	args := b.previewUSDT(t, to, "3")
	b.proxy.setFault("eth_sendRawTransaction", func(json.RawMessage) *fault { return &fault{http502: true} })
	res := b.c.callTool("wallet_send", args)
	require.Equal(t, "pending", res["structuredContent"].(map[string]any)["status"], text(res))
	b.c.stop()

	long := make([]string, 0, len(b.env))
	for _, kv := range b.env {
		if !strings.HasPrefix(kv, "WALLETGATE_RECEIPT_TIMEOUT=") {
			long = append(long, kv)
		}
	}
	sends := b.proxy.arrivedCount("eth_sendRawTransaction")
	b.c = startServer(t, append(long, "WALLETGATE_RECEIPT_TIMEOUT=5m"))
	b.c.initialize()
	b.c.request("tools/list", map[string]any{}) // the handshake is done: the recovery starts
	// The recovery is under way once its re-send reached the node: it is
	// retrying it, or waiting for a receipt.
	waitFor(t, "the recovery's re-send", func() bool { return b.proxy.arrivedCount("eth_sendRawTransaction") > sends })
	start := time.Now()
	b.c.stop()
	require.Less(t, time.Since(start), 5*time.Second, "a stop waits for no receipt; stderr:\n%s", b.c.stderr.String())
	require.NotContains(t, b.c.stderr.String(), "level=ERROR")
	require.Equal(t, nonce, b.view.nonce(), "nothing reached the chain")

	b.proxy.setFault("eth_sendRawTransaction", nil)
	b.c = startServer(t, b.env)
	b.c.initialize()
	require.Equal(t, "3", dayUsed(t, b.c, "USDT"), "still counted")
	waitFor(t, "the transfer", func() bool { return b.view.usdtOf(to).Sign() > 0 })
	recoveryFinished(t, b.c)
	require.Equal(t, nonce+1, b.view.pendingNonce(), "exactly once: none other in the node's pool")
	require.Equal(t, big.NewInt(3_000_000), b.view.usdtOf(to), "exactly once")
	require.Equal(t, nonce+1, b.view.nonce())
}
