package devnet_test

import (
	"context"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
)

// opStackDevnet starts an --op-stack dev chain with l1 in L1Block, or skips
// when Optimism's artifacts are not installed (WALLETGATE_OP_ARTIFACTS names
// a node_modules directory holding them; WALLETGATE_REQUIRE_OPSTACK=1 fails
// instead of skipping).
func opStackDevnet(t *testing.T, l1 devnet.L1Values) *devnet.Devnet {
	t.Helper()
	d, err := devnet.Start(context.Background(), devnet.Options{OPStack: true, L1: l1, OPArtifactsDir: os.Getenv("WALLETGATE_OP_ARTIFACTS")})
	if err != nil && os.Getenv("WALLETGATE_REQUIRE_OPSTACK") != "1" {
		t.Skipf("no OP-stack artifacts (%v)", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

var gpoABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[
	{"type":"function","name":"isFjord","stateMutability":"view","inputs":[],"outputs":[{"type":"bool"}]},
	{"type":"function","name":"l1BaseFee","stateMutability":"view","inputs":[],"outputs":[{"type":"uint256"}]},
	{"type":"function","name":"getL1FeeUpperBound","stateMutability":"view","inputs":[{"type":"uint256"}],"outputs":[{"type":"uint256"}]}]`))
	if err != nil {
		panic(err)
	}
	return a
}()

// fjordUpperBound is the Fjord upper bound as Optimism's specs define it:
// the unsigned size plus 68 (signature), its FastLZ bound, the linear
// regression (-42.5856 + 0.8365·size, at least 100 bytes, ×1e6) times the
// scaled fee (16·baseFeeScalar·l1BaseFee + blobBaseFeeScalar·blobBaseFee),
// over 1e12.
func fjordUpperBound(size int64, v devnet.L1Values) *big.Int {
	tx := size + 68
	flz := tx + tx/255 + 16
	est := -42_585_600 + 836_500*flz
	if est < 100e6 {
		est = 100e6
	}
	scaled := new(big.Int).Mul(big.NewInt(int64(v.BaseFeeScalar)*16), v.BaseFee)
	scaled.Add(scaled, new(big.Int).Mul(big.NewInt(int64(v.BlobBaseFeeScalar)), v.BlobBaseFee))
	out := new(big.Int).Mul(big.NewInt(est), scaled)
	return out.Div(out, big.NewInt(1e12))
}

// The real GasPriceOracle bytecode at its address, reading the L1Block
// values the genesis put in the real L1Block's slots, prices the L1 fee by
// Fjord's formula.
func TestOPStackOraclePricesARealL1Fee(t *testing.T) {
	l1 := devnet.L1Values{BaseFee: big.NewInt(30e9), BlobBaseFee: big.NewInt(5), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
	d := opStackDevnet(t, l1)
	call := func(method string, args ...any) []any {
		data, err := gpoABI.Pack(method, args...)
		require.NoError(t, err)
		out, err := d.Client().CallContract(context.Background(), ethereum.CallMsg{To: &devnet.GasPriceOracle, Data: data}, nil)
		require.NoError(t, err, method)
		vals, err := gpoABI.Unpack(method, out)
		require.NoError(t, err)
		return vals
	}
	require.Equal(t, true, call("isFjord")[0])
	require.Equal(t, l1.BaseFee, call("l1BaseFee")[0], "read from L1Block")
	for _, size := range []int64{110, 200, 1000} {
		got := call("getL1FeeUpperBound", big.NewInt(size))[0].(*big.Int)
		require.Equal(t, fjordUpperBound(size, l1), got, "size %d", size)
		require.Positive(t, got.Sign())
	}
	code, err := d.Client().CodeAt(context.Background(), devnet.L1Block, nil)
	require.NoError(t, err)
	require.NotEmpty(t, code)
}

// The --op-stack chain is the dev chain plus the two predeploys: the same
// tokens, and Uniswap at the addresses policy's table names, so a swap runs
// on it as on the plain one (engine/opstack_legs_test.go swaps there).
func TestOPStackModeDeploysUniswapToo(t *testing.T) {
	d := opStackDevnet(t, devnet.DefaultL1Values())
	u := d.Contracts.Uniswap
	if u == nil {
		if os.Getenv("WALLETGATE_REQUIRE_UNISWAP") == "1" {
			t.Fatal("WALLETGATE_REQUIRE_UNISWAP=1 but the --op-stack dev chain has no Uniswap: " + devnet.EnableSwapsHint)
		}
		t.Skip("the Uniswap artifacts are not installed: " + devnet.EnableSwapsHint)
	}
	n := policy.LookupNetwork(devnet.ChainID)
	require.NotNil(t, n.Uniswap)
	require.Equal(t, n.Uniswap.Factory, u.Factory)
	require.Equal(t, n.Uniswap.QuoterV2, u.QuoterV2)
	require.Equal(t, n.Uniswap.SwapRouter02, u.SwapRouter02)
	for name, a := range map[string]common.Address{"SwapRouter02": u.SwapRouter02, "QuoterV2": u.QuoterV2, "PoolDAIUSDT": u.PoolDAIUSDT, "GasPriceOracle": devnet.GasPriceOracle} {
		code, err := d.Client().CodeAt(context.Background(), a, nil)
		require.NoError(t, err)
		require.NotEmpty(t, code, name)
	}
}

// An OP-stack dev chain has an L2 sequencer uptime feed at its fixed address,
// up (answer 0) since start, and tests can report it down.
func TestOPStackDevnetHasASequencerUptimeFeed(t *testing.T) {
	ctx := context.Background()
	d := opStackDevnet(t, devnet.L1Values{})
	require.Equal(t, devnet.SequencerFeedAddress(), d.Contracts.SequencerUptimeFeed)
	feedABI, err := abi.JSON(strings.NewReader(`[{"type":"function","name":"latestRoundData","stateMutability":"view","inputs":[],"outputs":[{"type":"uint80"},{"type":"int256"},{"type":"uint256"},{"type":"uint256"},{"type":"uint80"}]}]`))
	require.NoError(t, err)
	status := func() []any {
		data, _ := feedABI.Pack("latestRoundData")
		out, err := d.Client().CallContract(ctx, ethereum.CallMsg{To: &d.Contracts.SequencerUptimeFeed, Data: data}, nil)
		require.NoError(t, err)
		vals, err := feedABI.Unpack("latestRoundData", out)
		require.NoError(t, err)
		return vals
	}
	require.Zero(t, status()[1].(*big.Int).Sign(), "up")
	require.NoError(t, d.SetSequencer(ctx, false, 12345))
	got := status()
	require.Equal(t, big.NewInt(1), got[1], "down")
	require.Equal(t, big.NewInt(12345), got[2], "since")
}
