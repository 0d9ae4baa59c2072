package main_test

// Round trips, counted: the real binary on the dev chain behind the proxy,
// every request held 100 ms as by a remote node, and each tool call's
// sequential requests to the node counted (a JSON-RPC batch is one). Not a
// timing test: the delay only keeps a receipt from being asked for before
// the dev chain has sealed it.

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// tripsBed is walletgate behind a delaying, counting proxy.
type tripsBed struct {
	t     *testing.T
	info  devnetInfo
	proxy *rpcProxy
	c     *stdioClient
}

func startTripsBed(t *testing.T, syncSend bool, extraEnv ...string) *tripsBed {
	info := startDevnet(t)
	proxy := newRPCProxy(t, info.RPC)
	proxy.syncSend, proxy.delay = syncSend, 100*time.Millisecond
	env := cleanEnv("WALLETGATE_RPC="+proxy.srv.URL, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile,
		"WALLETGATE_STATE_DIR="+t.TempDir(), "WALLETGATE_CAP_PER_TX=ETH=1,USDT=100,USDC=100,WETH=1", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=1000,USDC=1000,WETH=1",
		"WALLETGATE_CAP_PER_DAY=ETH=1,USDT=1000,USDC=1000,WETH=1", "WALLETGATE_ALLOW_CALLS="+info.Contracts["USDT"])
	c := startServer(t, append(env, extraEnv...)) // a later value of a variable wins
	c.initialize()
	// initialize is answered before the start-up batch is: the calls
	// counted below are counted after it (and after the recovery it lets
	// start).
	recoveryFinished(t, c)
	return &tripsBed{t: t, info: info, proxy: proxy, c: c}
}

// call makes one tool call and returns its result and its sequential round
// trips to the node, with what each carried (for the failure message).
func (b *tripsBed) call(tool string, args map[string]any) (map[string]any, int, string) {
	m := b.proxy.mark()
	res := b.c.callTool(tool, args)
	trips := b.proxy.tripsSince(m)
	var seq []string
	for _, tr := range trips {
		seq = append(seq, "["+strings.Join(tr.methods, " ")+"]")
	}
	return res, sequential(trips), strings.Join(seq, " → ")
}

// previewConfirm previews and confirms tool with args, and returns the
// round trips of each.
func (b *tripsBed) previewConfirm(tool string, args map[string]any) (int, int) {
	t := b.t
	res, np, seqP := b.call(tool, args)
	sc, ok := res["structuredContent"].(map[string]any)
	require.True(t, ok, text(res))
	require.NotNil(t, sc["confirm_token"], text(res))
	confirm := map[string]any{"confirm": sc["confirm_token"]}
	for k, v := range args {
		confirm[k] = v
	}
	res, nc, seqC := b.call(tool, confirm)
	require.Contains(t, []string{"confirmed", "signed"}, statusOf(res), text(res))
	t.Logf("%s preview: %d round trips %s", tool, np, seqP)
	t.Logf("%s confirm: %d round trips %s", tool, nc, seqC)
	return np, nc
}

func TestRoundTripsAtTheirMinimum(t *testing.T) {
	b := startTripsBed(t, true)
	view := newChainView(t, b.info)
	to := common.HexToAddress("0x00000000000000000000000000000000000e7e29")

	_, n, seq := b.call("wallet_balance", map[string]any{})
	require.Equal(t, 1, n, "wallet_balance: %s", seq)

	// The first confirm of the process costs what the later ones do: the
	// broadcast answers with the receipt, the balances at its block ride
	// along (the settlement measures them).
	for i := 0; i < 2; i++ {
		p, c := b.previewConfirm("wallet_send", map[string]any{"to": to.Hex(), "amount": "0.001"})
		require.Equal(t, 1, p, "send %d preview", i+1)
		require.Equal(t, 2, c, "send %d confirm", i+1)
	}
	require.Equal(t, "2000000000000000", ethOf(t, view, to).String(), "both sends landed")
	p, c := b.previewConfirm("wallet_send", map[string]any{"to": to.Hex(), "amount": "2", "asset": "USDT"})
	require.Equal(t, 1, p, "USDT send preview")
	require.Equal(t, 2, c, "USDT send confirm")
	require.Equal(t, "2000000", view.usdtOf(to).String())

	// The approve preview reads the allowance (and the spender's code), then
	// simulates the legs it decided on.
	p, c = b.previewConfirm("wallet_approve", map[string]any{"token": "USDT", "spender": to.Hex(), "amount": "5"})
	require.Equal(t, 2, p, "approve preview")
	require.Equal(t, 2, c, "approve confirm")

	// A call whose simulation reveals nothing new needs one round trip.
	data := fmt.Sprintf("0xa9059cbb%064x%064x", to.Big(), 1_000_000)
	p, c = b.previewConfirm("wallet_call", map[string]any{"calls": []map[string]any{{"to": b.info.Contracts["USDT"], "data": data}}})
	require.LessOrEqual(t, p, 2, "call preview")
	require.Equal(t, 1, p, "call preview, no second simulation round")
	require.Equal(t, 2, c, "call confirm")
	require.Equal(t, "3000000", view.usdtOf(to).String())

	// A swap with its approval: the preview reads state and quote, then
	// simulates the legs built from them; the confirm re-reads and
	// re-simulates, then the approval's broadcast that waits brings back
	// its receipt, the balances at its block and the swap leg's own
	// simulation on the state it left, then the swap's: three.
	if b.info.Contracts["SwapRouter02"] == "" {
		t.Fatal("the dev chain has no Uniswap: install testdata's npm packages")
	}
	p, c = b.previewConfirm("wallet_swap", map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "10"})
	require.Equal(t, 2, p, "swap preview")
	require.Equal(t, 3, c, "swap confirm")

	// Typed data: the same whatever the number of signatures still open.
	var first [2]int
	for k := 0; k < 3; k++ {
		p, c := b.previewConfirm("wallet_sign_typed_data", map[string]any{"typed_data": devPermit(b.info, to, int64(k+1))})
		if k == 0 {
			first = [2]int{p, c}
			continue
		}
		require.Equal(t, first, [2]int{p, c}, "typed data with %d signatures open", k)
	}
}

// Behind a node without eth_sendRawTransactionSync the confirm polls for the
// receipt: three round trips, the first confirm as the later ones (the
// probe riding in the start-up batch found the method missing).
func TestRoundTripsWithoutTheBroadcastThatWaits(t *testing.T) {
	b := startTripsBed(t, false)
	view := newChainView(t, b.info)
	to := common.HexToAddress("0x00000000000000000000000000000000000e7e2a")
	for i := 0; i < 2; i++ {
		p, c := b.previewConfirm("wallet_send", map[string]any{"to": to.Hex(), "amount": "0.001"})
		require.Equal(t, 1, p, "send %d preview", i+1)
		require.Equal(t, 3, c, "send %d confirm", i+1)
	}
	require.Equal(t, "2000000000000000", ethOf(t, view, to).String(), "both sends landed")
	require.Zero(t, b.proxy.arrivedCount("eth_sendRawTransactionSync"), "the node never saw the method")
}

func ethOf(t *testing.T, v *chainView, who common.Address) *big.Int {
	bal, err := v.node.BalanceAt(t.Context(), who, nil)
	require.NoError(t, err)
	return bal
}

// devPermit is an EIP-2612 permit of the dev chain's USDC for spender, of
// value whole tokens, at the token's nonce 0 (a permit never used on chain
// leaves it there: each stays open).
func devPermit(info devnetInfo, spender common.Address, value int64) map[string]any {
	domainTypes := []map[string]string{{"name": "name", "type": "string"}, {"name": "version", "type": "string"},
		{"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}}
	return map[string]any{
		"types": map[string]any{"EIP712Domain": domainTypes, "Permit": []map[string]string{
			{"name": "owner", "type": "address"}, {"name": "spender", "type": "address"}, {"name": "value", "type": "uint256"},
			{"name": "nonce", "type": "uint256"}, {"name": "deadline", "type": "uint256"}}},
		"primaryType": "Permit",
		"domain":      map[string]any{"name": "USD Coin (walletgate dev)", "version": "2", "chainId": 1337, "verifyingContract": info.Contracts["USDC"]},
		"message": map[string]any{"owner": info.DevAccount, "spender": spender.Hex(), "value": fmt.Sprint(value * 1_000_000),
			"nonce": 0, "deadline": time.Now().Add(time.Hour).Unix()},
	}
}

// USD caps add no round trip to a transaction's preview or confirm: the
// feeds' rounds ride in the batches each makes anyway. A signature, whose
// checks make no such batch, reads them in one round trip of its own, at
// the preview and at the confirm.
func TestRoundTripsWithUSDCaps(t *testing.T) {
	b := startTripsBed(t, true, "WALLETGATE_CAP_PER_TX=ETH=1,USDT=100,USDC=100,WETH=1,USD=unlimited",
		"WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=1000,USDC=1000,WETH=1,USD=unlimited", "WALLETGATE_CAP_PER_DAY=ETH=1,USDT=1000,USDC=1000,WETH=1,USD=10000")
	to := common.HexToAddress("0x00000000000000000000000000000000000e7e42")
	p, c := b.previewConfirm("wallet_send", map[string]any{"to": to.Hex(), "amount": "0.001"})
	require.Equal(t, [2]int{1, 2}, [2]int{p, c}, "ETH send, as without USD caps")
	p, c = b.previewConfirm("wallet_send", map[string]any{"to": to.Hex(), "amount": "2", "asset": "USDT"})
	require.Equal(t, [2]int{1, 2}, [2]int{p, c}, "USDT send")
	p, c = b.previewConfirm("wallet_approve", map[string]any{"token": "USDT", "spender": to.Hex(), "amount": "5"})
	require.Equal(t, [2]int{2, 2}, [2]int{p, c}, "approve")
	data := fmt.Sprintf("0xa9059cbb%064x%064x", to.Big(), 1_000_000)
	p, c = b.previewConfirm("wallet_call", map[string]any{"calls": []map[string]any{{"to": b.info.Contracts["USDT"], "data": data}}})
	require.Equal(t, [2]int{1, 2}, [2]int{p, c}, "call")
	p, c = b.previewConfirm("wallet_swap", map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "10"})
	require.Equal(t, [2]int{2, 3}, [2]int{p, c}, "swap")
	us := b.c.callTool("wallet_policy", map[string]any{})
	require.Contains(t, text(us), "USD per day")
}
