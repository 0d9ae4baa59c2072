package uniswap_test

import (
	"context"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/chain/uniswap"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// A swap's plan is built here, on the real dev chain, with no MCP around
// it: the legs follow the router's allowance, the confirm's re-check
// refuses an allowance that changed, the undo takes an approval back
// through zero, and the operator's rules come first.
func TestSwapPlanOnTheDevChain(t *testing.T) {
	ctx := context.Background()
	d, err := devnet.Start(ctx, devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	if d.Contracts.Uniswap == nil {
		if os.Getenv("WALLETGATE_REQUIRE_UNISWAP") == "1" {
			t.Fatal("WALLETGATE_REQUIRE_UNISWAP=1 but the dev chain has no Uniswap: " + devnet.EnableSwapsHint)
		}
		t.Skip("the Uniswap artifacts are not installed: " + devnet.EnableSwapsHint)
	}
	c, err := chain.NewFromRPC(ctx, d.RPC(), "embedded dev chain")
	require.NoError(t, err)
	t.Cleanup(c.Close)
	u := d.Contracts.Uniswap
	usdt, dai := d.Contracts.USDT, d.Contracts.DAI
	big18 := new(big.Int).Lsh(big.NewInt(1), 100)
	limit := map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18), usdt: big18}
	newSwapper := func(rules *policy.WriteRules) *uniswap.Swapper {
		e := engine.New(engine.Deps{Chain: c, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Minute, 8, nil),
			Limits: caps.Limits{PerTx: limit, PerSession: limit, PerDay: limit}, Capped: true, Rules: rules})
		return uniswap.New(uniswap.Config{Chain: c, Engine: e, Network: "dev", Deadline: 15 * time.Minute,
			Deployment: &policy.Uniswap{Factory: u.Factory, QuoterV2: u.QuoterV2, SwapRouter02: u.SwapRouter02}, WETH: u.WETH9})
	}
	s := newSwapper(&policy.WriteRules{Network: policy.LookupNetwork(1337)})
	require.Empty(t, s.Off())
	sw := uniswap.Swap{From: signer.DevAddress, In: engine.Asset{Address: usdt, Symbol: "USDT", Decimals: 6, Known: true},
		Out: engine.Asset{Address: dai, Symbol: "DAI", Decimals: 18, Known: true}, AmountIn: big.NewInt(10_000_000), Fee: 500, Bps: 50}
	approve := func(v int64) {
		t.Helper()
		for _, x := range []int64{0, v} {
			_, err := d.SendAsDev(ctx, &usdt, nil, chain.ApproveData(u.SwapRouter02, big.NewInt(x)), 200_000)
			require.NoError(t, err)
		}
	}
	labels := func(legs []engine.Leg) []string {
		var out []string
		for _, l := range legs {
			out = append(out, l.Label)
		}
		return out
	}

	b, ref := s.Build(ctx, sw)
	require.Nil(t, ref)
	require.Equal(t, []string{"approve", "swap"}, labels(b.Plan.Legs))
	require.Equal(t, uniswap.MinOut(b.Quote.AmountOut, 50), b.MinOut)
	require.Equal(t, b.MinOut, b.Plan.MinIn[dai])
	require.Positive(t, b.SimOut.Cmp(b.MinOut), "the simulated swap returns at least the minimum")
	require.Zero(t, b.Plan.Spend[usdt].Cmp(sw.AmountIn))

	approve(3)
	b, ref = s.Build(ctx, sw)
	require.Nil(t, ref)
	require.Equal(t, []string{"reset approval", "approve", "swap"}, labels(b.Plan.Legs))
	require.Zero(t, b.Allowance.Cmp(big.NewInt(3)))
	require.Nil(t, b.Plan.Undo(0), "nothing to take back before the first leg")
	require.Equal(t, []string{"approval back to 0 USDT", "approval back to 0.000003 USDT"}, labels(b.Plan.Undo(2)))

	views, check := b.Plan.Recheck()
	_, err = c.StateAndViews(ctx, signer.DevAddress, views...)
	require.NoError(t, err)
	require.Nil(t, check(), "the allowance is as previewed")
	approve(4)
	views, check = b.Plan.Recheck()
	_, err = c.StateAndViews(ctx, signer.DevAddress, views...)
	require.NoError(t, err)
	ref = check()
	require.NotNil(t, ref)
	require.Equal(t, uniswap.CodeAllowanceChanged, ref.Code, ref.Message)

	require.Equal(t, uniswap.CodePriceMoved, uniswap.Explain(&chain.RevertError{Reason: "Too little received"}).Code)
	require.Nil(t, uniswap.Explain(&chain.RevertError{Reason: "something else"}))

	_, ref = newSwapper(&policy.WriteRules{Network: policy.LookupNetwork(1)}).Build(ctx, sw)
	require.NotNil(t, ref)
	require.Equal(t, engine.CodeMainnetNotAllowed, ref.Code, "policy comes before anything is read")
}
