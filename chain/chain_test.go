package chain_test

import (
	"context"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/signer"
)

func startDevnet(t *testing.T, opts devnet.Options) *devnet.Devnet {
	t.Helper()
	d, err := devnet.Start(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

func inProcess(t *testing.T, d *devnet.Devnet) *chain.Client {
	t.Helper()
	c, err := chain.NewFromRPC(context.Background(), d.RPC(), "in-process")
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestAccountReadsBalancesAfterRealTransfers(t *testing.T) {
	ctx := context.Background()
	d := startDevnet(t, devnet.Options{})
	c := inProcess(t, d)
	to := common.HexToAddress("0x00000000000000000000000000000000000000b0")
	start, err := c.Account(ctx, signer.DevAddress, nil)
	require.NoError(t, err)

	_, err = d.SendAsDev(ctx, &d.Contracts.USDT, nil, chain.TransferData(to, big.NewInt(1_500_000)), 300_000)
	require.NoError(t, err)
	_, err = d.SendAsDev(ctx, &d.Contracts.DAI, nil, chain.TransferData(to, big.NewInt(7)), 300_000)
	require.NoError(t, err)
	_, err = d.SendAsDev(ctx, &to, big.NewInt(42), nil, 21_000)
	require.NoError(t, err)

	acct, err := c.Account(ctx, to, []common.Address{d.Contracts.USDT, d.Contracts.DAI, to})
	require.NoError(t, err)
	require.Equal(t, big.NewInt(42), acct.ETH)
	require.Equal(t, uint64(0), acct.Nonce)
	require.False(t, acct.IsContract)
	require.NotZero(t, acct.Head.Number)
	require.Len(t, acct.Tokens, 3)

	usdt := acct.Tokens[0]
	require.NoError(t, usdt.Err)
	require.Equal(t, "USDT", usdt.Symbol)
	require.Equal(t, uint8(6), usdt.Decimals)
	require.Equal(t, big.NewInt(1_500_000), usdt.Balance)

	dai := acct.Tokens[1]
	require.NoError(t, dai.Err)
	require.Equal(t, "DAI", dai.Symbol)
	require.Equal(t, uint8(18), dai.Decimals)
	require.Equal(t, big.NewInt(7), dai.Balance)

	// An address without code is not a token: a per-token error, not a failure.
	require.ErrorContains(t, acct.Tokens[2].Err, "does not answer as an ERC-20 token")

	dev, err := c.Account(ctx, signer.DevAddress, nil)
	require.NoError(t, err)
	require.Equal(t, start.Nonce+3, dev.Nonce, "three sends")

	code, err := c.Account(ctx, d.Contracts.USDT, nil)
	require.NoError(t, err)
	require.True(t, code.IsContract)
}

func TestTransactionDecodesTransfers(t *testing.T) {
	ctx := context.Background()
	d := startDevnet(t, devnet.Options{})
	c := inProcess(t, d)
	to := common.HexToAddress("0x00000000000000000000000000000000000000b1")

	rcpt, err := d.SendAsDev(ctx, &d.Contracts.USDT, nil, chain.TransferData(to, big.NewInt(2_000_000)), 300_000)
	require.NoError(t, err)

	info, err := c.Transaction(ctx, rcpt.TxHash)
	require.NoError(t, err)
	require.True(t, info.Found)
	require.True(t, info.Mined)
	require.Equal(t, uint64(1), info.Status)
	require.Equal(t, signer.DevAddress, info.From)
	require.Equal(t, d.Contracts.USDT, *info.To)
	require.Equal(t, rcpt.BlockNumber.Uint64(), info.Block)
	require.GreaterOrEqual(t, info.Confirmations, uint64(1))
	require.Equal(t, []chain.Transfer{{Token: d.Contracts.USDT, From: signer.DevAddress, To: to, Amount: big.NewInt(2_000_000)}}, info.Transfers)
	require.Positive(t, info.Fee().Sign())

	missing, err := c.Transaction(ctx, common.HexToHash("0x1234"))
	require.NoError(t, err)
	require.False(t, missing.Found)
}

func TestErrorsNeverCarryTheURLSecrets(t *testing.T) {
	addr := closedPort(t)
	url := "http://alice:hunter2-canary@" + addr + "/v3/APIKEY-canary?token=QUERY-canary"
	_, err := chain.Dial(context.Background(), []string{url})
	require.Error(t, err)
	for _, secret := range []string{"hunter2-canary", "APIKEY-canary", "QUERY-canary", "alice"} {
		require.NotContains(t, err.Error(), secret)
	}
	require.Contains(t, err.Error(), "http://"+addr)
}

func TestFallbackOnTransportErrorOnly(t *testing.T) {
	ctx := context.Background()
	d := startDevnet(t, devnet.Options{HTTPAddr: "127.0.0.1:0"})
	dead := "http://" + closedPort(t) + "/SECRET-path"

	c, err := chain.Dial(ctx, []string{dead, d.HTTPURL()})
	require.NoError(t, err, "the first endpoint is down; the second answers")
	defer c.Close()
	require.Equal(t, big.NewInt(devnet.ChainID), c.ChainID())
	require.Equal(t, strings.TrimSuffix(d.HTTPURL(), "/"), c.Host())

	acct, err := c.Account(ctx, signer.DevAddress, []common.Address{d.Contracts.USDT})
	require.NoError(t, err)
	require.Equal(t, devnet.DevUSDT, acct.Tokens[0].Balance)
}

func TestBlockTimeEstimate(t *testing.T) {
	ctx := context.Background()
	d := startDevnet(t, devnet.Options{})
	c := inProcess(t, d)
	require.Equal(t, 12*time.Second, c.BlockTime(ctx), "no two heads read yet: the fallback")
	require.NoError(t, d.AdjustTime(5*time.Second))
	h0, err := c.LatestHead(ctx)
	require.NoError(t, err)
	// Forty blocks, 5 s apart on the chain's clock; the next state read
	// sees the latest head, and the estimate needs no request of its own.
	for i := 0; i < 40; i++ {
		require.NoError(t, d.AdjustTime(5*time.Second))
	}
	st, err := c.StateAndViews(ctx, signer.DevAddress)
	require.NoError(t, err)
	bt := c.BlockTime(ctx)
	// The dev chain also seals a few 1 s blocks of its own meanwhile: the
	// estimate is over every block between the two heads.
	span := time.Duration(st.Head.Time-h0.Time) * time.Second / time.Duration(st.Head.Number-h0.Number)
	require.Equal(t, span, bt, "heads %d and %d", h0.Number, st.Head.Number)
	require.Greater(t, bt, 3*time.Second, "far from the 12 s fallback, near the 5 s blocks")
	require.Less(t, bt, 6*time.Second)
}

// Open asks the node nothing: the client reports the id it was opened with;
// CheckChainID then asks, returns what the node said (the client's id stays
// what the caller expects), moves past a dead endpoint, and never carries an
// URL's secret in its error.
func TestOpenThenCheckChainID(t *testing.T) {
	ctx := context.Background()
	d := startDevnet(t, devnet.Options{HTTPAddr: "127.0.0.1:0"})
	dead := "http://" + closedPort(t) + "/SECRET-path"

	c, err := chain.Open(ctx, []string{dead, d.HTTPURL()}, big.NewInt(5))
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, big.NewInt(5), c.ChainID(), "before the check: the expected id")
	require.Zero(t, c.Genesis(), "before the check: no genesis yet")
	id, err := c.CheckChainID(ctx)
	require.NoError(t, err)
	require.Equal(t, big.NewInt(devnet.ChainID), id, "what the node says")
	g, err := ethclient.NewClient(d.RPC()).HeaderByNumber(ctx, big.NewInt(0))
	require.NoError(t, err)
	require.Equal(t, g.Hash(), c.Genesis(), "the genesis came with the chain id")
	other := startDevnet(t, devnet.Options{})
	og, err := ethclient.NewClient(other.RPC()).HeaderByNumber(ctx, big.NewInt(0))
	require.NoError(t, err)
	require.NotEqual(t, g.Hash(), og.Hash(), "every dev chain has a genesis of its own")
	require.Equal(t, big.NewInt(5), c.ChainID(), "the caller compares; the client keeps the expected id")
	require.Equal(t, strings.TrimSuffix(d.HTTPURL(), "/"), c.Host(), "the endpoint that answered is current")

	none, err := chain.Open(ctx, []string{dead}, big.NewInt(devnet.ChainID))
	require.NoError(t, err, "opening an HTTP endpoint asks nothing")
	defer none.Close()
	_, err = none.CheckChainID(ctx)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "SECRET-path")
}

// A token that does not answer must not taint the next one, whose metadata
// is already known: each token's read stands alone.
func TestAccountReadsATokenAfterOneThatDoesNotAnswer(t *testing.T) {
	ctx := context.Background()
	d := startDevnet(t, devnet.Options{})
	c := inProcess(t, d)
	noCode := common.HexToAddress("0x000000000000000000000000000000000000dEaD")
	_, err := c.Account(ctx, signer.DevAddress, []common.Address{d.Contracts.USDC}) // its metadata is now cached
	require.NoError(t, err)
	acct, err := c.Account(ctx, signer.DevAddress, []common.Address{noCode, d.Contracts.USDC})
	require.NoError(t, err)
	require.Error(t, acct.Tokens[0].Err)
	require.NoError(t, acct.Tokens[1].Err)
	require.Equal(t, devnet.DevUSDC, acct.Tokens[1].Balance)
}
