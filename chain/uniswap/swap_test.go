package uniswap_test

import (
	"context"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/chain/uniswap"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// A swap's legs are built here, on the real dev chain, with no engine or
// MCP around it: the legs follow the router's allowance and, simulated in
// sequence, return at least the minimum; the confirm's re-check fails on an
// allowance that changed; the undo takes an approval back through zero; and
// Uniswap's revert reasons are named.
func TestSwapLegsOnTheDevChain(t *testing.T) {
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
	s := uniswap.New(uniswap.Config{Chain: c, Network: "dev", Deadline: 15 * time.Minute,
		Deployment: &policy.Uniswap{Factory: u.Factory, QuoterV2: u.QuoterV2, SwapRouter02: u.SwapRouter02}, WETH: u.WETH9})
	require.Empty(t, s.Off())
	sw := uniswap.Swap{From: signer.DevAddress, In: usdt, Out: dai, AmountIn: big.NewInt(10_000_000), Fee: 500, Bps: 50}
	approve := func(v int64) {
		t.Helper()
		for _, x := range []int64{0, v} {
			_, err := d.SendAsDev(ctx, &usdt, nil, chain.ApproveData(u.SwapRouter02, big.NewInt(x)), 200_000)
			require.NoError(t, err)
		}
	}
	labels := func(legs []uniswap.Leg) []string {
		var out []string
		for _, l := range legs {
			out = append(out, l.Label)
		}
		return out
	}

	b, err := s.Build(ctx, sw)
	require.NoError(t, err)
	require.Equal(t, []string{uniswap.LegApprove, uniswap.LegSwap}, labels(b.Legs))
	require.Equal(t, uniswap.MinOut(b.Quote.AmountOut, 50), b.MinOut)
	var calls []chain.Call
	for _, l := range b.Legs {
		calls = append(calls, l.Call)
	}
	res, err := c.SimulateSequence(ctx, calls)
	require.NoError(t, err)
	require.Len(t, res, 2)
	require.Nil(t, res[1].Revert)
	require.Positive(t, uniswap.Output(res[1].Return).Cmp(b.MinOut), "the simulated swap returns at least the minimum")

	approve(3)
	b, err = s.Build(ctx, sw)
	require.NoError(t, err)
	require.Equal(t, []string{uniswap.LegResetApproval, uniswap.LegApprove, uniswap.LegSwap}, labels(b.Legs))
	require.Zero(t, b.Allowance.Cmp(big.NewInt(3)))
	require.Nil(t, b.Undo(0), "nothing to take back before the first leg")
	undo := b.Undo(2)
	require.Len(t, undo, 2)
	require.Zero(t, undo[0].Amount.Sign(), "back through zero")
	require.Zero(t, undo[1].Amount.Cmp(big.NewInt(3)), "then to what it was")
	require.Equal(t, chain.ApproveData(u.SwapRouter02, big.NewInt(3)), undo[1].Call.Data)

	recheck := func() error {
		v := b.RecheckView()
		_, err := c.StateAndViews(ctx, signer.DevAddress, v)
		require.NoError(t, err)
		return b.CheckAllowance(v)
	}
	require.NoError(t, recheck(), "the allowance is as the legs were built on")
	approve(4)
	var changed *uniswap.AllowanceChangedError
	require.ErrorAs(t, recheck(), &changed)
	require.Equal(t, uniswap.CodeAllowanceChanged, changed.Code())
	require.Equal(t, "3 4", changed.Was.String()+" "+changed.Now.String())

	require.ErrorIs(t, uniswap.Revert(&chain.RevertError{Reason: "Too little received"}), uniswap.ErrTooLittleReceived)
	require.NoError(t, uniswap.Revert(&chain.RevertError{Reason: "something else"}))

	_, err = s.Build(ctx, uniswap.Swap{From: signer.DevAddress, In: usdt, Out: dai, AmountIn: big.NewInt(10_000_000), Fee: 3000, Bps: 50})
	var noQuote *uniswap.NoQuoteError
	require.ErrorAs(t, err, &noQuote, "no pool at that fee tier")
	require.Equal(t, uniswap.CodeNoQuote, noQuote.Code())
}
