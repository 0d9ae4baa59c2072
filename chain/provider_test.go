package chain_test

// Nodes as they are: the HTTP layer under the client against the dev chain
// behind a proxy imitating a hosted provider (internal/nodeproxy).

import (
	"context"
	"math/big"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/internal/nodeproxy"
	"github.com/walletgate/walletgate/signer"
)

// behindProxy is the dev chain served over HTTP with a provider proxy in
// front of it, a client through the proxy and one straight to the chain.
func behindProxy(t *testing.T) (*devnet.Devnet, *nodeproxy.Proxy, *chain.Client, *chain.Client) {
	t.Helper()
	d := startDevnet(t, devnet.Options{HTTPAddr: "127.0.0.1:0"})
	p := nodeproxy.New(d.HTTPURL())
	t.Cleanup(p.Close)
	c, err := chain.Dial(context.Background(), []string{p.URL()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return d, p, c, inProcess(t, d)
}

// manyTokens is a watch list long enough that a watched lookup is a batch
// of more than 20 requests.
func manyTokens(d *devnet.Devnet) []common.Address {
	var out []common.Address
	for i := 0; i < 10; i++ {
		out = append(out, d.Contracts.USDT, d.Contracts.DAI)
	}
	return out
}

func TestBatchesSplitToTheNodesLimit(t *testing.T) {
	for _, tc := range []struct {
		name, words string
		operator    int // WALLETGATE_RPC_BATCH_LIMIT
		wantLimit   int
	}{
		{"the node names its limit", "batch size limit exceeded: at most 10 requests per batch", 0, 10},
		{"geth's words name none: halved until it fits", "batch too large", 0, 0},
		{"Besu's words", "Number of requests exceeds max batch size", 0, 0},
		{"the operator's limit: never refused", "batch too large", 10, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, p, c, direct := behindProxy(t)
			c.SetBatchLimit(tc.operator)
			p.BatchLimit(10, tc.words)
			ctx := context.Background()
			tokens := manyTokens(d)
			head, err := direct.LatestHead(ctx)
			require.NoError(t, err)
			want, err := direct.BalancesAround(ctx, signer.DevAddress, tokens, head.Number)
			require.NoError(t, err)
			got, err := c.BalancesAround(ctx, signer.DevAddress, tokens, head.Number)
			require.NoError(t, err, "the batch (%d requests) is split and answered whole", 2*(2+len(tokens)))
			require.Equal(t, want, got)

			sizes := p.Batches()
			refused := 0
			for _, n := range sizes {
				if n > 10 {
					refused++
				}
			}
			if tc.operator > 0 {
				require.Zero(t, refused, "with the operator's limit no batch is over it: %v", sizes)
			} else {
				// A limit the node names is learned from one refusal; one it
				// does not name is halved until the batch fits (44, 22, 11: three).
				require.Equal(t, map[bool]int{true: 1, false: 3}[tc.wantLimit > 0], refused, "refused, then the limit is learned and kept: %v", sizes)
			}
			if tc.wantLimit > 0 {
				require.Equal(t, tc.wantLimit, c.BatchLimit())
			} else {
				require.LessOrEqual(t, c.BatchLimit(), 10)
				require.Positive(t, c.BatchLimit())
			}
			// The next batch goes out split at once.
			before := len(p.Batches())
			_, err = c.BalancesAround(ctx, signer.DevAddress, tokens, head.Number)
			require.NoError(t, err)
			for _, n := range p.Batches()[before:] {
				require.LessOrEqual(t, n, 10)
			}
		})
	}
}

func TestTooManyRequestsRetriedAfterRetryAfter(t *testing.T) {
	d, p, c, _ := behindProxy(t)
	p.TooManyRequests(2, "1")
	code, err := c.Code(context.Background(), d.Contracts.USDT)
	require.NoError(t, err, "two 429s, then the answer")
	require.NotEmpty(t, code)
	limited, next := p.RateLimited()
	require.Len(t, limited, 2)
	require.Len(t, next, 2)
	for i := range limited {
		require.GreaterOrEqual(t, next[i].Sub(limited[i]), time.Second, "Retry-After: 1 is honoured")
	}
	retried, _ := c.TransportStats()
	require.Equal(t, 2, retried)
}

func TestTooManyRequestsBeyondTheTimeoutFailsWithoutWaiting(t *testing.T) {
	_, p, c, _ := behindProxy(t)
	c.SetCallTimeout(2 * time.Second)
	p.TooManyRequests(5, "60")
	asked := p.Arrived("eth_getCode")
	start := time.Now()
	_, err := c.Code(context.Background(), common.Address{1})
	require.Error(t, err)
	require.Contains(t, err.Error(), "429")
	require.Less(t, time.Since(start), 30*time.Second, "a Retry-After past the RPC timeout is not waited for")
	require.Equal(t, asked+1, p.Arrived("eth_getCode"), "not retried: no room within the timeout")
}

func TestABroadcastIsNeverResentByTheTransport(t *testing.T) {
	d, p, c, _ := behindProxy(t)
	ctx := context.Background()
	for _, status := range []int{429, 503} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			before := p.Arrived("eth_sendRawTransaction")
			p.FailHTTP(1, status, "0")
			tx := devTransfer(t, d, c)
			err := c.SendRaw(ctx, tx)
			require.Error(t, err, "the answer reaches the caller: the outcome rule decides what to re-send")
			require.Contains(t, err.Error(), strconv.Itoa(status))
			require.Equal(t, before+1, p.Arrived("eth_sendRawTransaction"), "one broadcast arrived, never a second")
			// A read answered 503 the same way is retried.
			p.FailHTTP(1, status, "0")
			_, err = c.Code(ctx, d.Contracts.USDT)
			require.NoError(t, err)
		})
	}
}

// devTransfer signs a small transfer from the dev account at its next nonce.
func devTransfer(t *testing.T, d *devnet.Devnet, c *chain.Client) *types.Transaction {
	t.Helper()
	ctx := context.Background()
	nonce, err := d.Client().PendingNonceAt(ctx, signer.DevAddress)
	require.NoError(t, err)
	to := common.HexToAddress("0x00000000000000000000000000000000000b0b")
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: c.ChainID(), Nonce: nonce, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(10e9), Gas: 21000, To: &to, Value: big.NewInt(1)})
	signed, err := signer.Dev().SignTx(tx, c.ChainID())
	require.NoError(t, err)
	return signed
}

func TestSimulateV1LearnedAtStart(t *testing.T) {
	d := startDevnet(t, devnet.Options{HTTPAddr: "127.0.0.1:0"})
	p := nodeproxy.New(d.HTTPURL())
	t.Cleanup(p.Close)
	c, err := chain.Dial(context.Background(), []string{p.URL()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.Equal(t, chain.SimulateOffered, c.SimulateV1Support(), "geth's dev node offers it")

	p.Lack("eth_simulateV1")
	c2, err := chain.Dial(context.Background(), []string{p.URL()})
	require.NoError(t, err)
	t.Cleanup(c2.Close)
	require.Equal(t, chain.SimulateMissing, c2.SimulateV1Support())
	asked := p.Arrived("eth_simulateV1")
	_, err = c2.SimulateSequence(context.Background(), []chain.Call{{From: signer.DevAddress, To: d.Contracts.USDT}, {From: signer.DevAddress, To: d.Contracts.USDT}})
	require.ErrorIs(t, err, chain.ErrNoSimulateV1)
	require.Equal(t, asked, p.Arrived("eth_simulateV1"), "refused without asking the node again")
}

// sendOne signs 1 wei from the dev account to a sink at the next nonce and
// broadcasts it with the broadcast that waits.
func sendOne(t *testing.T, c, direct *chain.Client) *chain.TxInfo {
	t.Helper()
	ctx := context.Background()
	st, err := direct.StateAndViews(ctx, signer.DevAddress)
	require.NoError(t, err)
	sink := common.HexToAddress("0x00000000000000000000000000000000005ea1ef")
	call := chain.Call{From: signer.DevAddress, To: sink, Value: big.NewInt(1), Gas: 21000, MaxFee: st.MaxFee(), Tip: st.Tip}
	tx, err := signer.Dev().SignTx(call.Tx(c.ChainID(), st.Nonce), c.ChainID())
	require.NoError(t, err)
	info, err := c.SendRawWaiting(ctx, tx, signer.DevAddress, nil, 5*time.Second)
	require.NoError(t, err)
	require.True(t, info.Mined, "the receipt came back in the broadcast's own round trip")
	return info
}

// A node that takes eth_sendRawTransactionSync's timeout only as a 0x hex
// string (Arbitrum Nitro ≥ 3.10, Polygon Bor): the start-up probe already
// shows it, so the first send goes in the node's form, through the method,
// in one round trip as on geth — never a fallback to a plain broadcast.
func TestTheSyncSendSpeaksTheNodesTimeoutDialect(t *testing.T) {
	d := startDevnet(t, devnet.Options{HTTPAddr: "127.0.0.1:0"})
	p := nodeproxy.New(d.HTTPURL())
	t.Cleanup(p.Close)
	p.HexSyncTimeout()
	c, err := chain.Dial(context.Background(), []string{p.URL()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.True(t, c.SyncSend())
	direct := inProcess(t, d)
	before := p.Requests()
	sendOne(t, c, direct)
	require.Equal(t, 1, p.Requests()-before, "one round trip, as on geth")
	require.Equal(t, 2, p.Arrived("eth_sendRawTransactionSync"), "the probe and the send, each once")
	require.Zero(t, p.Arrived("eth_sendRawTransaction"), "no fallback to a plain broadcast")
}

// A node whose dialect changes after the probe (a fallback endpoint, a proxy
// in front of it): the send refused as "invalid argument 1" is made again at
// once with a hex timeout, and the next send uses that form straight away.
func TestTheSyncSendLearnsTheTimeoutFormFromARefusal(t *testing.T) {
	_, p, c, direct := behindProxy(t)
	p.HexSyncTimeout() // after the probe, which saw geth's form
	before := p.Requests()
	sendOne(t, c, direct)
	require.Equal(t, 2, p.Requests()-before, "the refused form, then the hex one")
	before = p.Requests()
	sendOne(t, c, direct)
	require.Equal(t, 1, p.Requests()-before, "remembered: one round trip")
	require.Zero(t, p.Arrived("eth_sendRawTransaction"), "no fallback to a plain broadcast")
	require.True(t, c.SyncSend())
}
