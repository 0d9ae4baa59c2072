package main_test

// USD caps priced on chain (issue 42), tried as a new user would: the dev
// chain's Chainlink mocks, the built binary, a real MCP client over stdio.

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
)

// feedABI is what the tests call on the dev chain's MockV3Aggregator.
var feedABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[
	{"type":"function","name":"updateAnswer","inputs":[{"type":"int256"}],"outputs":[],"stateMutability":"nonpayable"},
	{"type":"function","name":"updateRoundData","inputs":[{"type":"uint80"},{"type":"int256"},{"type":"uint256"},{"type":"uint256"}],"outputs":[],"stateMutability":"nonpayable"}]`))
	if err != nil {
		panic(err)
	}
	return a
}()

// callFeed sends method(args…) to the dev chain's feed of asset from the
// dev facilitator (not the wallet) and waits for its receipt.
func callFeed(t *testing.T, info devnetInfo, asset, method string, args ...any) {
	t.Helper()
	ctx := context.Background()
	node, err := ethclient.Dial(info.RPC)
	require.NoError(t, err)
	defer node.Close()
	data, err := feedABI.Pack(method, args...)
	require.NoError(t, err)
	f := signer.DevFacilitator()
	nonce, err := node.PendingNonceAt(ctx, f.Address())
	require.NoError(t, err)
	feed := common.HexToAddress(info.PriceFeeds[asset])
	id := new(big.Int).SetUint64(info.ChainID)
	tx, err := f.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: id, Nonce: nonce, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(20e9), Gas: 1_000_000, To: &feed, Data: data}), id)
	require.NoError(t, err)
	require.NoError(t, node.SendTransaction(ctx, tx))
	waitForOr(t, "the feed update's receipt", func() bool {
		r, err := node.TransactionReceipt(ctx, tx.Hash())
		return err == nil && r.Status == types.ReceiptStatusSuccessful
	}, func() string { return tx.Hash().Hex() })
}

// headTime is the dev chain's latest block time.
func headTime(t *testing.T, info devnetInfo) uint64 {
	t.Helper()
	node, err := ethclient.Dial(info.RPC)
	require.NoError(t, err)
	defer node.Close()
	h, err := node.HeaderByNumber(context.Background(), nil)
	require.NoError(t, err)
	return h.Time
}

func ethBalance(t *testing.T, info devnetInfo, who common.Address) *big.Int {
	t.Helper()
	node, err := ethclient.Dial(info.RPC)
	require.NoError(t, err)
	defer node.Close()
	b, err := node.BalanceAt(context.Background(), who, nil)
	require.NoError(t, err)
	return b
}

func usdEnv(info devnetInfo, extra ...string) []string {
	return cleanEnv(append([]string{"WALLETGATE_RPC=" + info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE=" + info.KeyFile,
		"WALLETGATE_CAP_PER_TX=ETH=1,USDC=1000,USDT=1000,USD=unlimited",
		"WALLETGATE_CAP_PER_SESSION=ETH=1,USDC=1000,USDT=1000,USD=unlimited",
		"WALLETGATE_CAP_PER_DAY=ETH=1,USDC=1000,USDT=1000,USD=100"}, extra...)...)
}

// sendConfirmed previews and confirms a send and returns the preview.
func sendConfirmed(t *testing.T, c *stdioClient, args map[string]any) map[string]any {
	t.Helper()
	pv := c.callTool("wallet_send", args)
	require.Equal(t, "confirmation_required", pv["structuredContent"].(map[string]any)["status"], text(pv))
	confirm := map[string]any{"confirm": pv["structuredContent"].(map[string]any)["confirm_token"]}
	for k, v := range args {
		confirm[k] = v
	}
	res := c.callTool("wallet_send", confirm)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	return pv["structuredContent"].(map[string]any)
}

// The "Done when": with USD=100 a day and ETH at $3,000, 0.02 ETH
// ($60 and its fee) confirms, 30 USDC then confirms, 20 USDT is refused
// CAP_EXCEEDED naming the USD day window, and once the ETH feed's round is
// older than its heartbeat an ETH send is refused PRICE_UNAVAILABLE naming
// the feed and round, and nothing moves. wallet_policy shows the USD
// windows; every result is checked against its output schema.
func TestUSDCapDoneWhen(t *testing.T) {
	info := startDevnet(t)
	view := newChainView(t, info)
	c := startServer(t, withStateDir(t, usdEnv(info)))
	c.initialize()
	require.Equal(t, map[string]string{"per day": "100 0 100"}, capRows(t, c, "USD"), "the USD day window; per transaction and session are unlimited, as written")

	alice := common.HexToAddress("0x00000000000000000000000000000000000e2e42")
	pv := sendConfirmed(t, c, map[string]any{"to": alice.Hex(), "amount": "0.02"})
	usd := pv["usd"].(map[string]any)
	require.True(t, strings.HasPrefix(usd["total"].(string), "60."), "0.02 ETH and its max fee at $3,000: %v", usd)
	line := usd["assets"].([]any)[0].(map[string]any)
	require.Equal(t, "ETH", line["asset"])
	require.Equal(t, "3000", line["price"])
	require.Equal(t, info.PriceFeeds["ETH"], line["feed"])
	require.Equal(t, "1", line["round"])
	require.Equal(t, "20000000000000000", ethBalance(t, info, alice).String())

	bob := common.HexToAddress("0x00000000000000000000000000000000000e2e43")
	sendConfirmed(t, c, map[string]any{"to": bob.Hex(), "amount": "30", "asset": "USDC"})
	day := capRows(t, c, "USD")["per day"]
	require.True(t, strings.HasPrefix(day, "100 90."), "$60 + $30 and the fees counted: %s", day)

	res := c.callTool("wallet_send", map[string]any{"to": bob.Hex(), "amount": "20", "asset": "USDT"})
	require.Equal(t, "CAP_EXCEEDED", refusalCode(res), text(res))
	require.Contains(t, text(res), "per day cap")
	require.Contains(t, text(res), "USD")
	require.Equal(t, "0", view.usdtOf(bob).String())

	// Age the ETH round past its heartbeat (1h by default).
	now := headTime(t, info)
	old := new(big.Int).SetUint64(now - 2*3600)
	callFeed(t, info, "ETH", "updateRoundData", big.NewInt(7), big.NewInt(3_000_00000000), old, old)
	nonce := view.nonce()
	res = c.callTool("wallet_send", map[string]any{"to": alice.Hex(), "amount": "0.001"})
	require.Equal(t, "PRICE_UNAVAILABLE", refusalCode(res), text(res))
	require.Contains(t, text(res), info.PriceFeeds["ETH"])
	require.Contains(t, text(res), "round 7")
	require.Contains(t, text(res), "older than the feed's heartbeat")
	require.Equal(t, nonce, view.nonce(), "nothing was sent")
	require.Equal(t, "20000000000000000", ethBalance(t, info, alice).String(), "nothing moved")
	require.True(t, strings.HasPrefix(capRows(t, c, "USD")["per day"], "100 90."), "no cap was used")
}

// A price that rises between the preview and the confirm so far that the
// write no longer fits is refused PRICE_MOVED at the confirm, nothing sent;
// a non-positive answer is refused PRICE_UNAVAILABLE; the operator's unpriced asset passes on its own caps,
// and its preview says it is not in the USD total.
func TestUSDPriceMovedNonPositiveAndUnpriced(t *testing.T) {
	info := startDevnet(t)
	view := newChainView(t, info)
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e44")
	c := startServer(t, withStateDir(t, usdEnv(info, "WALLETGATE_USD_UNPRICED=DAI",
		"WALLETGATE_CAP_PER_TX=ETH=1,USDC=1000,USDT=1000,DAI=1000,USD=unlimited",
		"WALLETGATE_CAP_PER_SESSION=ETH=1,USDC=1000,USDT=1000,DAI=1000,USD=unlimited",
		"WALLETGATE_CAP_PER_DAY=ETH=1,USDC=1000,USDT=1000,DAI=1000,USD=100")))
	c.initialize()

	args := map[string]any{"to": to.Hex(), "amount": "0.03"}
	pv := c.callTool("wallet_send", args)
	require.Equal(t, "confirmation_required", pv["structuredContent"].(map[string]any)["status"], text(pv))
	callFeed(t, info, "ETH", "updateAnswer", big.NewInt(4_000_00000000))
	nonce := view.nonce()
	args["confirm"] = pv["structuredContent"].(map[string]any)["confirm_token"]
	res := c.callTool("wallet_send", args)
	require.Equal(t, "PRICE_MOVED", refusalCode(res), text(res))
	require.Contains(t, text(res), "$4000")
	require.Equal(t, nonce, view.nonce(), "nothing was sent")
	require.Equal(t, "100 0 100", capRows(t, c, "USD")["per day"], "no cap was used")

	// A non-positive USDT answer.
	now := new(big.Int).SetUint64(headTime(t, info))
	callFeed(t, info, "USDT", "updateRoundData", big.NewInt(3), big.NewInt(0), now, now)
	res = c.callTool("wallet_send", map[string]any{"to": to.Hex(), "amount": "1", "asset": "USDT"})
	require.Equal(t, "PRICE_UNAVAILABLE", refusalCode(res), text(res))
	require.Contains(t, text(res), "not a positive price")

	// A token with no feed: the operator's unpriced DAI passes, outside the total.
	pv = c.callTool("wallet_send", map[string]any{"to": to.Hex(), "amount": "5", "asset": "DAI"})
	require.Equal(t, "confirmation_required", pv["structuredContent"].(map[string]any)["status"], text(pv))
	require.Contains(t, text(pv), "NOT IN THE USD TOTAL")
	var dai map[string]any
	for _, l := range pv["structuredContent"].(map[string]any)["usd"].(map[string]any)["assets"].([]any) {
		if l.(map[string]any)["in_total"] == false {
			dai = l.(map[string]any)
		}
	}
	require.NotNil(t, dai, "DAI is listed as not in the total")
}
