package main_test

// What moved is what counts, tried from outside: the real binary on the dev
// chain, hostile test contracts (testdata/contracts: Mirage, QuirkyToken's
// under-logging) and the fault proxy. In every test the caps wallet_policy
// shows equal what left the wallet on chain.

import (
	"context"
	"encoding/json"
	"math/big"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/testdata"
)

// devSender sends transactions from the dev account straight to the node,
// not through walletgate: deployments and set-up.
type devSender struct {
	t    *testing.T
	node *ethclient.Client
	key  signer.Signer
	from common.Address
}

func newDevSender(t *testing.T, info devnetInfo) *devSender {
	node, err := ethclient.Dial(info.RPC)
	require.NoError(t, err)
	t.Cleanup(node.Close)
	key, err := signer.FromKeyFile(info.KeyFile)
	require.NoError(t, err)
	return &devSender{t: t, node: node, key: key, from: common.HexToAddress(info.DevAccount)}
}

// send sends one transaction and waits for its successful receipt.
func (d *devSender) send(to *common.Address, value *big.Int, data []byte) *types.Receipt {
	t, ctx := d.t, context.Background()
	t.Helper()
	if value == nil {
		value = new(big.Int)
	}
	nonce, err := d.node.PendingNonceAt(ctx, d.from)
	require.NoError(t, err)
	gas, err := d.node.EstimateGas(ctx, ethereum.CallMsg{From: d.from, To: to, Value: value, Data: data})
	require.NoError(t, err)
	head, err := d.node.HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	chainID, err := d.node.ChainID(ctx)
	require.NoError(t, err)
	tip := big.NewInt(1e9)
	tx, err := d.key.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip),
		Gas: gas * 2, To: to, Value: value, Data: data}), chainID)
	require.NoError(t, err)
	require.NoError(t, d.node.SendTransaction(ctx, tx))
	var rcpt *types.Receipt
	waitFor(t, "the set-up transaction's receipt", func() bool {
		rcpt, err = d.node.TransactionReceipt(ctx, tx.Hash())
		return err == nil
	})
	require.Equal(t, types.ReceiptStatusSuccessful, rcpt.Status)
	return rcpt
}

// deploy deploys a test contract and returns its address and ABI.
func (d *devSender) deploy(name string, args ...any) (common.Address, abi.ABI) {
	j, code, err := testdata.Contract(name)
	require.NoError(d.t, err)
	parsed, err := abi.JSON(strings.NewReader(j))
	require.NoError(d.t, err)
	ctor, err := parsed.Pack("", args...)
	require.NoError(d.t, err)
	rcpt := d.send(nil, nil, append(append([]byte{}, code...), ctor...))
	return rcpt.ContractAddress, parsed
}

// pack is abi.Pack that fails the test.
func pack(t *testing.T, a abi.ABI, method string, args ...any) string {
	data, err := a.Pack(method, args...)
	require.NoError(t, err)
	return hexutil.Encode(data)
}

// tokenOf reads token.balanceOf(who) on the node.
func tokenOf(t *testing.T, node *ethclient.Client, token, who common.Address) *big.Int {
	out, err := node.CallContract(context.Background(), ethereum.CallMsg{To: &token, Data: append(common.FromHex("0x70a08231"), common.LeftPadBytes(who.Bytes(), 32)...)}, nil)
	require.NoError(t, err)
	return new(big.Int).SetBytes(out)
}

// usedOf is what wallet_policy says asset (an address, or ETH) used in window.
func usedOf(t *testing.T, c *stdioClient, asset, window string) string {
	t.Helper()
	pol := c.callTool("wallet_policy", map[string]any{})["structuredContent"].(map[string]any)
	for _, cp := range pol["caps"].([]any) {
		m := cp.(map[string]any)
		if strings.EqualFold(m["asset"].(string), asset) && m["window"] == window {
			return m["used"].(string)
		}
	}
	t.Fatalf("no %s cap for %s in %v", window, asset, pol["caps"])
	return ""
}

// previewAndConfirm previews a write, confirms it, checks both answers
// against the tool's output schema, and returns the confirm's result (or
// the preview's refusal).
func previewAndConfirm(t *testing.T, c *stdioClient, tool string, args map[string]any) map[string]any {
	t.Helper()
	schemas := c.outputSchemas()
	res := c.callTool(tool, args)
	sc, ok := res["structuredContent"].(map[string]any)
	if !ok {
		return res
	}
	require.NoError(t, schemas.Check(tool, sc, res["isError"] == true), text(res))
	confirm := map[string]any{"confirm": sc["confirm_token"]}
	for k, v := range args {
		confirm[k] = v
	}
	res = c.callTool(tool, confirm)
	if sc, ok := res["structuredContent"].(map[string]any); ok {
		require.NoError(t, schemas.Check(tool, sc, res["isError"] == true), text(res))
	}
	return res
}

func statusOf(res map[string]any) string {
	if code := refusalCode(res); code != "" && res["structuredContent"] == nil {
		return code
	}
	return res["structuredContent"].(map[string]any)["status"].(string)
}

// startPartialCall is walletgate behind the proxy with USDT capped at 10 per
// transaction and 20 per session and day, and the calls of a plan whose
// first moves 5 USDT to sink and whose second (Mirage.poke) passes every
// simulation and fails for real.
func startPartialCall(t *testing.T, sinkHex string) (*behindProxy, common.Address, common.Address, []any) {
	b := startBehindProxy(t, "WALLETGATE_ALLOW_CALLS=any", "WALLETGATE_CAP_PER_TX=ETH=1,USDT=10",
		"WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=20", "WALLETGATE_CAP_PER_DAY=ETH=1,USDT=20")
	mirage, mabi := newDevSender(t, b.info).deploy("Mirage")
	sink := common.HexToAddress(sinkHex)
	usdtABI, err := abi.JSON(strings.NewReader(`[{"name":"transfer","type":"function","inputs":[{"name":"to","type":"address"},{"name":"value","type":"uint256"}],"outputs":[]}]`))
	require.NoError(t, err)
	return b, sink, mirage, []any{
		map[string]any{"to": b.view.usdt.Hex(), "data": pack(t, usdtABI, "transfer", sink, big.NewInt(5_000_000))},
		map[string]any{"to": mirage.Hex(), "data": pack(t, mabi, "poke")},
	}
}

// Finding 1: a wallet_call whose first call moves 5 USDT and whose second
// passes every simulation and fails once the first landed. Each round is
// incomplete and counts its 5 USDT, so the session cap of 20 holds: the sink
// gets 20, and the caps count exactly what left.
func TestPartialCallIsCountedAgainstTheCaps(t *testing.T) {
	b, sink, _, calls := startPartialCall(t, "0x00000000000000000000000000000000005e7710")
	var outcomes []string
	for round := 0; round < 6; round++ {
		res := previewAndConfirm(t, b.c, "wallet_call", map[string]any{"calls": calls})
		outcomes = append(outcomes, statusOf(res))
		if statusOf(res) == "incomplete" {
			sc := res["structuredContent"].(map[string]any)
			legs := sc["legs"].([]any)
			require.Len(t, legs, 2, text(res))
			require.Equal(t, "included", legs[0].(map[string]any)["status"])
			require.Equal(t, "not_sent", legs[1].(map[string]any)["status"])
			require.True(t, strings.HasPrefix(text(res), "INCOMPLETE: "), text(res))
			require.Contains(t, text(res), "−5 USDT")
			// The answer says what each window counts after it.
			var day string
			for _, cp := range sc["caps"].([]any) {
				if m := cp.(map[string]any); strings.EqualFold(m["asset"].(string), b.view.usdt.Hex()) && m["window"] == "per day" {
					day = m["used"].(string)
				}
			}
			require.Equal(t, strconv.Itoa(5*(round+1)), day, text(res))
		}
	}
	require.Equal(t, []string{"incomplete", "incomplete", "incomplete", "incomplete", "CAP_EXCEEDED", "CAP_EXCEEDED"}, outcomes)
	require.Equal(t, big.NewInt(20_000_000), b.view.usdtOf(sink), "at most the session cap left")
	require.Equal(t, "20", usedOf(t, b.c, b.view.usdt.Hex(), "per session"), "every USDT that left is counted")
	require.Equal(t, "20", usedOf(t, b.c, b.view.usdt.Hex(), "per day"))

	// The operator's audit shows each confirm as it ended.
	audit := exec.Command(binary, "audit", "show")
	audit.Env = cleanEnv("WALLETGATE_STATE_DIR=" + b.state)
	shown, err := audit.CombinedOutput()
	require.NoError(t, err, string(shown))
	require.Equal(t, 4, strings.Count(string(shown), "wallet_call answered INCOMPLETE"), string(shown))
}

// The same plan stopping on chain: the second call is signed (the node lets
// it through its pre-signing check) and reverts. The answer is incomplete
// with a reverted leg, and the first call's 5 USDT count.
func TestPartialCallRevertingOnChainIsCounted(t *testing.T) {
	b, sink, mirage, calls := startPartialCall(t, "0x00000000000000000000000000000000005e7711")
	nonce := b.view.nonce()
	b.proxy.setFault("eth_call", func(params json.RawMessage) *fault {
		if strings.Contains(strings.ToLower(string(params)), strings.ToLower(mirage.Hex())) {
			return &fault{result: json.RawMessage(`"0x"`)}
		}
		return nil
	})
	res := previewAndConfirm(t, b.c, "wallet_call", map[string]any{"calls": calls})
	require.Equal(t, "incomplete", statusOf(res), text(res))
	legs := res["structuredContent"].(map[string]any)["legs"].([]any)
	require.Equal(t, "included", legs[0].(map[string]any)["status"])
	require.Equal(t, "reverted", legs[1].(map[string]any)["status"], text(res))
	require.Equal(t, nonce+2, b.view.nonce(), "both calls were sent")
	require.Equal(t, big.NewInt(5_000_000), b.view.usdtOf(sink))
	require.Equal(t, "5", usedOf(t, b.c, b.view.usdt.Hex(), "per day"))
}

// Finding 3: a call previewed as paying the wallet 7 DAI that pays nothing
// on chain is effect_mismatch, with the measured inflow in the answer.
func TestShortInflowIsEffectMismatch(t *testing.T) {
	b := startBehindProxy(t, "WALLETGATE_ALLOW_CALLS=any")
	dev := newDevSender(t, b.info)
	mirage, mabi := dev.deploy("Mirage")
	dai := common.HexToAddress(b.info.Contracts["DAI"])
	mint, err := abi.JSON(strings.NewReader(`[{"name":"mint","type":"function","inputs":[{"name":"to","type":"address"},{"name":"value","type":"uint256"}],"outputs":[]}]`))
	require.NoError(t, err)
	seven := new(big.Int).Mul(big.NewInt(7), big.NewInt(1e18))
	dev.send(&dai, nil, common.FromHex(pack(t, mint, "mint", mirage, seven)))
	before := tokenOf(t, dev.node, dai, b.view.dev)

	calls := []any{map[string]any{"to": mirage.Hex(), "data": pack(t, mabi, "pay", dai, seven)}}
	preview := b.c.callTool("wallet_call", map[string]any{"calls": calls})
	require.Contains(t, text(preview), "+7 DAI", "the simulation pays 7 DAI")
	res := previewAndConfirm(t, b.c, "wallet_call", map[string]any{"calls": calls})
	require.Equal(t, "effect_mismatch", statusOf(res), text(res))
	require.Contains(t, text(res), "0 DAI arrived in the wallet, the preview showed 7")
	var daiChange map[string]any
	for _, c := range res["structuredContent"].(map[string]any)["changes"].([]any) {
		if m := c.(map[string]any); strings.EqualFold(m["asset"].(string), dai.Hex()) {
			daiChange = m
		}
	}
	require.NotNil(t, daiChange, text(res))
	require.Equal(t, "0", daiChange["in"])
	require.Equal(t, "7", daiChange["previewed_in"])
	require.Equal(t, true, daiChange["measured"])
	require.Equal(t, before, tokenOf(t, dev.node, dai, b.view.dev), "nothing arrived on chain")
}

// Finding 4: WETH9's withdraw moves WETH without a Transfer log, and a token
// that logs half of what it moves: both settle the caps at what left.
func TestOutflowsWithoutTheirLogsSettleAtWhatLeft(t *testing.T) {
	info := startDevnet(t)
	dev := newDevSender(t, info)
	weth := common.HexToAddress(info.Contracts["WETH"])
	if weth == (common.Address{}) {
		t.Fatal("the dev chain has no WETH: install testdata's npm packages")
	}
	wethABI, err := abi.JSON(strings.NewReader(`[{"name":"deposit","type":"function","inputs":[],"outputs":[],"stateMutability":"payable"},{"name":"withdraw","type":"function","inputs":[{"name":"wad","type":"uint256"}],"outputs":[]}]`))
	require.NoError(t, err)
	dev.send(&weth, big.NewInt(5e16), common.FromHex(pack(t, wethABI, "deposit")))
	quirky, qabi := dev.deploy("QuirkyToken", "Quirky", "QRK", uint8(6), big.NewInt(1_000_000_000))
	dev.send(&quirky, nil, common.FromHex(pack(t, qabi, "setUnderLog", true)))

	wethBefore := tokenOf(t, dev.node, weth, dev.from)
	q := quirky.Hex()
	c := startServer(t, append(capsEnv(info, t.TempDir()), "WALLETGATE_ALLOW_CALLS=any",
		"WALLETGATE_CAP_PER_TX=ETH=1,USDT=100,WETH=1,"+q+"=100", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=100,WETH=1,"+q+"=100",
		"WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100,WETH=1,"+q+"=100"))
	c.initialize()

	res := previewAndConfirm(t, c, "wallet_call", map[string]any{"calls": []any{map[string]any{"to": weth.Hex(), "data": pack(t, wethABI, "withdraw", big.NewInt(2e16))}}})
	require.Equal(t, "confirmed", statusOf(res), text(res))
	require.Equal(t, "0.02", usedOf(t, c, weth.Hex(), "per day"), "the WETH that left counts")
	require.Equal(t, new(big.Int).Sub(wethBefore, big.NewInt(2e16)), tokenOf(t, dev.node, weth, dev.from))

	sink := common.HexToAddress("0x00000000000000000000000000000000005e7712")
	res = previewAndConfirm(t, c, "wallet_call", map[string]any{"calls": []any{map[string]any{"to": q, "data": pack(t, qabi, "transfer", sink, big.NewInt(20_000_000))}}})
	require.Equal(t, "confirmed", statusOf(res), text(res))
	require.Equal(t, "20", usedOf(t, c, q, "per day"), "all 20 that left count, not the 10 the log says")
	require.Equal(t, big.NewInt(20_000_000), tokenOf(t, dev.node, quirky, sink))
}

// Finding 2, from outside: the client cancels a swap's confirm while its
// first transaction (the approval) is on its way to the node. Once a leg is
// signed no cancellation stops the plan: the swap is sent and lands, and the
// caps count what it moved.
func TestCancelledSwapStillSendsItsLaterLeg(t *testing.T) {
	b := startBehindProxy(t, "WALLETGATE_CAP_PER_TX=ETH=1,USDT=100,WETH=1", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=100,WETH=1", "WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100,WETH=1")
	weth := common.HexToAddress(b.info.Contracts["WETH"])
	if weth == (common.Address{}) {
		t.Fatal("the dev chain has no Uniswap: install testdata's npm packages")
	}
	nonce := b.view.nonce()
	wethBefore, usdtBefore := tokenOf(t, b.view.node, weth, b.view.dev), b.view.usdtOf(b.view.dev)
	args := map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "10"}
	res := b.c.callTool("wallet_swap", args)
	sc, ok := res["structuredContent"].(map[string]any)
	require.True(t, ok, text(res))
	require.Len(t, sc["preview"].(map[string]any)["legs"], 2, "approval and swap")
	args["confirm"] = sc["confirm_token"]

	b.proxy.hold("eth_sendRawTransaction")
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 778, "method": "tools/call", "params": map[string]any{"name": "wallet_swap", "arguments": args}})
	b.c.send(string(req))
	waitFor(t, "the approval to reach the node", func() bool { return b.proxy.arrivedCount("eth_sendRawTransaction") > 0 })
	b.c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":778,"reason":"user stopped it"}}`)
	// The cancellation travels the same pipe as the request: by the time a
	// later request on it is answered, mcp-go has read it.
	require.NotEqual(t, true, b.c.callTool("wallet_policy", map[string]any{})["isError"])
	b.proxy.unhold()
	waitFor(t, "the swap's output", func() bool { return tokenOf(t, b.view.node, weth, b.view.dev).Cmp(wethBefore) > 0 })
	require.Equal(t, nonce+2, b.view.nonce(), "the approval and the swap, nothing else")
	require.Equal(t, new(big.Int).Sub(usdtBefore, big.NewInt(10_000_000)), b.view.usdtOf(b.view.dev))
	waitFor(t, "the swap's settlement", func() bool { return usedOf(t, b.c, b.view.usdt.Hex(), "per day") == "10" })
}
