package main_test

// Concurrency on the money path, from outside (issue 39): several walletgate
// processes on one state directory, their start-up reconciles beside one
// session's signature previews and confirms. Nothing here reaches inside:
// the binaries, the dev chain over HTTP, and the answers.

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
)

// sealBlock makes the dev chain seal a block now: the dev account sends
// 1 wei to a sink, outside walletgate.
func sealBlock(t *testing.T, info devnetInfo) {
	t.Helper()
	ctx := context.Background()
	node, err := ethclient.Dial(info.RPC)
	require.NoError(t, err)
	defer node.Close()
	s, err := signer.FromKeyFile(info.KeyFile)
	require.NoError(t, err)
	nonce, err := node.PendingNonceAt(ctx, s.Address())
	require.NoError(t, err)
	tip := big.NewInt(1e9)
	head, err := node.HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	sink := common.HexToAddress("0x00000000000000000000000000000000005ea1ed")
	tx, err := s.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(1337), Nonce: nonce, GasTipCap: tip,
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip), Gas: 21000, To: &sink, Value: big.NewInt(1)}), big.NewInt(1337))
	require.NoError(t, err)
	require.NoError(t, node.SendTransaction(ctx, tx))
	for i := 0; i < 100; i++ {
		if r, err := node.TransactionReceipt(ctx, tx.Hash()); err == nil && r != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the dev chain sealed no block")
}

// chainTime is the time of the dev chain's latest block.
func chainTime(t *testing.T, info devnetInfo) time.Time {
	t.Helper()
	node, err := ethclient.Dial(info.RPC)
	require.NoError(t, err)
	defer node.Close()
	head, err := node.HeaderByNumber(context.Background(), nil)
	require.NoError(t, err)
	return time.Unix(int64(head.Time), 0)
}

// Eight walletgate processes start at once on one state directory, and each
// previews an x402 payment at once; a 60 USDC authorization had expired
// before. Each start-up sweeps, and so does each preview: the day window
// ends at exactly 0 (60 released once, never below), and a payment of more
// than the day's cap is still refused while one of the whole cap passes.
func TestEightStartsAndPreviewsReleaseAnExpiredAuthorizationOnce(t *testing.T) {
	info := startDevnet(t)
	state := t.TempDir()
	env := cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile, "WALLETGATE_STATE_DIR="+state,
		"WALLETGATE_CAP_PER_TX=ETH=1,USDC=500", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDC=1000", "WALLETGATE_CAP_PER_DAY=ETH=1,USDC=100")
	usdc := info.Contracts["USDC"]
	payee := common.HexToAddress("0x00000000000000000000000000000000000e2e39")
	pay := func(c *stdioClient, amount string, timeout int) map[string]any {
		req := map[string]any{"x402Version": 2, "resource": map[string]any{"url": "http://127.0.0.1:4021/data", "description": "data", "mimeType": "application/json"},
			"accepts": []any{map[string]any{"scheme": "exact", "network": "eip155:1337", "asset": usdc, "amount": amount, "payTo": payee.Hex(),
				"maxTimeoutSeconds": timeout, "extra": map[string]any{"name": "USD Coin", "version": "2"}}}}
		return c.callTool("wallet_pay_x402", map[string]any{"payment_required": req})
	}
	confirm := func(c *stdioClient, amount string, timeout int) map[string]any {
		res := pay(c, amount, timeout)
		require.Nil(t, res["isError"], text(res))
		req := map[string]any{"x402Version": 2, "resource": map[string]any{"url": "http://127.0.0.1:4021/data", "description": "data", "mimeType": "application/json"},
			"accepts": []any{map[string]any{"scheme": "exact", "network": "eip155:1337", "asset": usdc, "amount": amount, "payTo": payee.Hex(),
				"maxTimeoutSeconds": timeout, "extra": map[string]any{"name": "USD Coin", "version": "2"}}}}
		return c.callTool("wallet_pay_x402", map[string]any{"payment_required": req, "confirm": res["structuredContent"].(map[string]any)["confirm_token"]})
	}

	a := startServer(t, env)
	a.initialize()
	// Valid until two seconds past the chain's clock (ahead of the wall's:
	// the dev chain dates each block at least a second after the last).
	ahead := int(chainTime(t, info).Sub(time.Now()).Seconds())
	out := confirm(a, "60000000", max(ahead, 0)+2)
	require.Nil(t, out["isError"], text(out))
	require.Equal(t, "60", usedOf(t, a, usdc, "per day"))
	until := chainTime(t, info).Add(3 * time.Second)
	for chainTime(t, info).Before(until) {
		sealBlock(t, info) // each block moves the chain's clock a second or more
	}

	// Four processes start at once (each start-up sweeps), each then
	// previewing at once (each preview sweeps), beside four more previews
	// from the first session's neighbours.
	var wg sync.WaitGroup
	starts := make([]*stdioClient, 8)
	for i := range starts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			starts[i] = startServer(t, env)
			starts[i].initialize()
			res := pay(starts[i], fmt.Sprintf("%d000000", i+1), 60)
			if res["isError"] != nil {
				t.Errorf("preview %d: %s", i, text(res))
			}
		}()
	}
	wg.Wait()
	for i, c := range append(starts, a) {
		require.Equal(t, "0", usedOf(t, c, usdc, "per day"), "process %d: the expired 60 released exactly once", i)
	}
	res := pay(starts[0], "160000000", 60)
	require.True(t, res["isError"].(bool), text(res))
	require.True(t, strings.HasPrefix(text(res), "X402_NO_OPTION: ") || strings.HasPrefix(text(res), "CAP_EXCEEDED: "), text(res))
	out = confirm(starts[1], "100000000", 60)
	require.Nil(t, out["isError"], text(out))
	require.Equal(t, "100", usedOf(t, starts[2], usdc, "per day"))
}
