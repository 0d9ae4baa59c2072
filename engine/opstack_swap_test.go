package engine

// A real Uniswap swap on the --op-stack dev chain, through the engine as
// wallet_swap builds it: its legs' L1 fee bounds counted, its receipts'
// l1Fee settled, and its undo leg (after a refused swap leg) carrying and
// paying its own L1 fee. See opstack_legs_test.go for why the l1Fee comes
// from the proxy's receipts.

import (
	"bytes"
	"context"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/chain/uniswap"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/internal/nodeproxy"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// opStackBed is the --op-stack dev chain behind a proxy, with Uniswap.
type opStackBed struct {
	t     *testing.T
	dev   *devnet.Devnet
	proxy *nodeproxy.Proxy
	chain *chain.Client
	swaps *uniswap.Swapper
}

// newOPStackBed starts it with l1 in L1Block (skips without the OP or the
// Uniswap artifacts unless WALLETGATE_REQUIRE_OPSTACK or
// WALLETGATE_REQUIRE_UNISWAP is 1).
func newOPStackBed(t *testing.T, l1 devnet.L1Values) *opStackBed {
	d, p, c, _ := opStackEngine(t, l1, big.NewInt(1))
	if d.Contracts.Uniswap == nil {
		if os.Getenv("WALLETGATE_REQUIRE_UNISWAP") == "1" {
			t.Fatal("WALLETGATE_REQUIRE_UNISWAP=1 but the --op-stack dev chain has no Uniswap: " + devnet.EnableSwapsHint)
		}
		t.Skip("the Uniswap artifacts are not installed: " + devnet.EnableSwapsHint)
	}
	u := d.Contracts.Uniswap
	s := uniswap.New(uniswap.Config{Chain: c, Network: "dev", Deadline: 15 * time.Minute,
		Deployment: &policy.Uniswap{Factory: u.Factory, QuoterV2: u.QuoterV2, SwapRouter02: u.SwapRouter02}, WETH: u.WETH9})
	return &opStackBed{t: t, dev: d, proxy: p, chain: c, swaps: s}
}

// engine is an engine on the bed with capETH and capUSDT in every window.
func (b *opStackBed) engine(capETH, capUSDT *big.Int) *Engine {
	limit := func() map[common.Address]*big.Int {
		return map[common.Address]*big.Int{policy.NativeAsset: new(big.Int).Set(capETH), b.dev.Contracts.USDT: new(big.Int).Set(capUSDT)}
	}
	return New(Deps{Chain: b.chain, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Minute, 8, nil),
		Limits: caps.Limits{PerTx: limit(), PerSession: limit(), PerDay: limit()}, Capped: true,
		Recorder: &memRecorder{now: time.Now}, ReceiptTimeout: 10 * time.Second})
}

// oracleBound is the GasPriceOracle's L1 fee bound of call now, read with
// a view of its own (not through the engine's paths).
func (b *opStackBed) oracleBound(call chain.Call) *big.Int {
	b.t.Helper()
	return oracleBound(b.t, b.chain, call)
}

// gasPaid is what the dev chain's own receipt of tx says its gas cost.
func (b *opStackBed) gasPaid(tx common.Hash) *big.Int {
	b.t.Helper()
	rc, err := b.dev.Client().TransactionReceipt(context.Background(), tx)
	require.NoError(b.t, err)
	return new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
}

// swapIn is 10 USDT for DAI in the fee-500 pool.
func (b *opStackBed) swapIn() uniswap.Swap {
	return uniswap.Swap{From: signer.DevAddress, In: b.dev.Contracts.USDT, Out: b.dev.Contracts.DAI, AmountIn: big.NewInt(10_000_000), Fee: 500, Bps: 50}
}

// swapPlan builds sw's plan on e as wallet_swap does (tools/swap.go's
// swapPlan: the uniswap package's legs through BuildLegs, the input's
// spend, the minimum output, the undo of the approval and the allowance
// re-check), with the input's Transfer to the pool as the expected effect
// (the default receipt check, instead of the tool's Verify). It returns
// BuildLegs' refusal, if any.
func (b *opStackBed) swapPlan(e *Engine, sw uniswap.Swap) (*uniswap.Built, *Plan, *Refusal) {
	b.t.Helper()
	ctx := context.Background()
	built, err := b.swaps.Build(ctx, sw)
	require.NoError(b.t, err)
	p := &Plan{}
	for _, l := range built.Legs {
		p.Legs = append(p.Legs, Leg{Label: l.Label, Call: l.Call})
	}
	spendOf := func(legs []Leg) caps.Spend {
		sp := caps.Spend{policy.NativeAsset: new(big.Int), sw.In: new(big.Int).Set(sw.AmountIn)}
		for _, l := range legs {
			sp[policy.NativeAsset].Add(sp[policy.NativeAsset], l.Call.MaxCost())
		}
		return sp
	}
	if _, ref := e.BuildLegs(ctx, p, built.State, spendOf); ref != nil {
		return built, p, ref
	}
	p.Spend = spendOf(p.Legs)
	usdt := Asset{Address: sw.In, Symbol: "USDT", Decimals: 6, Known: true}
	pool := uniswap.PoolAddress(b.dev.Contracts.Uniswap.Factory, sw.In, sw.Out, sw.Fee)
	p.Effects = []Effect{{Asset: usdt, From: sw.From, To: pool, Amount: sw.AmountIn}}
	p.MinIn = caps.Spend{sw.Out: new(big.Int).Set(built.MinOut)}
	p.Undo = func(i int) []Leg {
		var legs []Leg
		for _, a := range built.Undo(i) {
			legs = append(legs, Leg{Label: "approval back to " + a.Amount.String(), Call: a.Call})
		}
		return legs
	}
	p.Recheck = func() ([]*chain.View, func() *Refusal) {
		v := built.RecheckView()
		return []*chain.View{v}, func() *Refusal {
			if err := built.CheckAllowance(v); err != nil {
				return RPCRefusal(err)
			}
			return nil
		}
	}
	return built, p, nil
}

// allowance is the router's USDT allowance from the wallet, on chain.
func (b *opStackBed) allowance() *big.Int {
	b.t.Helper()
	v := chain.AllowanceView(b.dev.Contracts.USDT, signer.DevAddress, b.dev.Contracts.Uniswap.SwapRouter02)
	_, err := b.chain.StateAndViews(context.Background(), signer.DevAddress, v)
	require.NoError(b.t, err)
	a, err := chain.DecodeUint256(v.Return)
	require.NoError(b.t, err)
	return a
}

// A swap's undo leg (the approval taken back after the node refused the
// swap leg: approve included, swap not sent) carries its own L1 fee bound,
// read in its preparation's round trip, counted against what the
// reservation has left as every leg's is, and settled with its receipt's
// l1Fee. When the reservation's rest covers the undo's gas but not its L1
// fee bound too, the undo is not sent and the approval counts as standing.
func TestAnUndoLegCarriesItsL1FeeBound(t *testing.T) {
	l1 := devnet.L1Values{BaseFee: big.NewInt(1e15), BlobBaseFee: big.NewInt(1), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
	const l1Paid = 3e14 // the proxy's l1Fee on every receipt but where a case says otherwise
	run := func(t *testing.T, b *opStackBed, e *Engine, plan *Plan) *Outcome {
		t.Helper()
		// The node refuses the swap leg's broadcast (its words: underpriced),
		// and never had it: the approval landed, the swap is not sent.
		b.proxy.SendErrorAfter(1, "transaction underpriced", false, 1)
		canonical := []byte("op undo " + t.Name())
		token, _, ref := e.Issue("wallet_swap", canonical, plan)
		require.Nil(t, ref)
		out, ref := e.Confirm(context.Background(), TokenMode{}, token, "wallet_swap", canonical)
		require.Nil(t, ref)
		require.Equal(t, StatusIncomplete, out.Status)
		require.Equal(t, uniswap.LegApprove, out.Legs[0].Label)
		require.Equal(t, LegIncluded, out.Legs[0].Status)
		require.Equal(t, uniswap.LegSwap, out.Legs[1].Label)
		require.Equal(t, LegNotSent, out.Legs[1].Status)
		require.Len(t, out.Legs, 3)
		require.True(t, out.Legs[2].Undo)
		return out
	}

	t.Run("sent, counted and settled with its l1Fee", func(t *testing.T) {
		b := newOPStackBed(t, l1)
		e := b.engine(big.NewInt(1e18), big.NewInt(1e12))
		b.proxy.L1Fee(func(common.Hash) *big.Int { return big.NewInt(l1Paid) })
		_, plan, ref := b.swapPlan(e, b.swapIn())
		require.Nil(t, ref)
		require.Len(t, plan.Legs, 2)
		out := run(t, b, e, plan)
		require.Equal(t, LegIncluded, out.Legs[2].Status, "the approval is taken back")
		require.Zero(t, b.allowance().Sign())

		require.Len(t, plan.Legs, 3, "the undo leg as it was signed")
		undo := plan.Legs[2].Call
		require.NotNil(t, undo.L1Fee, "the undo leg carries an L1 fee bound")
		require.Equal(t, b.oracleBound(undo), undo.L1Fee, "the oracle's, for its size")
		gasMax := new(big.Int).Mul(new(big.Int).SetUint64(undo.Gas), undo.MaxFee)
		require.Equal(t, new(big.Int).Add(gasMax, undo.L1Fee), undo.MaxCost(), "its max cost counts the bound")

		// Settled on both receipts, each with the proxy's l1Fee.
		want := new(big.Int).Add(b.gasPaid(out.Legs[0].Tx), b.gasPaid(out.Legs[2].Tx))
		want.Add(want, big.NewInt(2*l1Paid))
		require.Equal(t, want, out.Fee)
		u := used(e, policy.NativeAsset, b.dev.Contracts.USDT)
		require.Equal(t, want, u[policy.NativeAsset], "the ETH used: the two receipts' gas and l1Fee")
		require.Zero(t, u[b.dev.Contracts.USDT].Sign(), "no approval left standing, no USDT moved")
	})

	t.Run("the L1 bound decides it does not fit", func(t *testing.T) {
		b := newOPStackBed(t, l1)
		e := b.engine(big.NewInt(1e18), big.NewInt(1e12))
		built, plan, ref := b.swapPlan(e, b.swapIn())
		require.Nil(t, ref)
		undoBound := b.oracleBound(built.Undo(1)[0].Call) // approve(router, 0): the approve's size
		reserved := plan.Spend[policy.NativeAsset]
		// The approve's receipt says it paid an l1Fee that leaves exactly
		// the undo's L1 bound of the reservation (a little above its own
		// bound, as when the L1 fee rises after the confirm's re-check):
		// enough for the undo's gas, not for its gas and its L1 fee.
		b.proxy.L1Fee(func(h common.Hash) *big.Int {
			tx, _, err := b.dev.Client().TransactionByHash(context.Background(), h)
			if err != nil || !bytes.Equal(tx.Data(), plan.Legs[0].Call.Data) {
				return big.NewInt(l1Paid)
			}
			v := new(big.Int).Sub(reserved, b.gasPaid(h))
			return v.Sub(v, undoBound)
		})
		out := run(t, b, e, plan)
		require.Equal(t, LegNotSent, out.Legs[2].Status, "the undo does not fit what the reservation has left")
		require.Equal(t, CodeInsufficientFunds, out.Legs[2].Code)
		require.True(t, strings.Contains(out.Legs[2].Reason, "more than the reservation has left"), out.Legs[2].Reason)
		require.Equal(t, built.Swap.AmountIn, b.allowance(), "the approval stands")
		u := used(e, policy.NativeAsset, b.dev.Contracts.USDT)
		require.Equal(t, new(big.Int).Sub(reserved, undoBound), u[policy.NativeAsset], "the approve's receipt: gas and l1Fee")
		require.Equal(t, built.Swap.AmountIn, u[b.dev.Contracts.USDT], "the standing approval counts")
	})
}

// A real swap on the --op-stack dev chain (10 USDT for DAI through
// SwapRouter02, approve then swap): the preview's max fee is both legs' gas
// limit × max fee plus both legs' L1 fee bounds, which decide whether it
// fits the ETH cap; confirmed, it settles on both receipts with their
// l1Fee, different per leg, which decide the ETH the caps count.
func TestASwapOnTheOPStackChainCountsEveryLegsL1Fee(t *testing.T) {
	l1 := devnet.L1Values{BaseFee: big.NewInt(1e14), BlobBaseFee: big.NewInt(1), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
	b := newOPStackBed(t, l1)
	ctx := context.Background()
	e := b.engine(big.NewInt(1e18), big.NewInt(1e12))
	sw := b.swapIn()
	built, plan, ref := b.swapPlan(e, sw)
	require.Nil(t, ref)
	require.Equal(t, []string{uniswap.LegApprove, uniswap.LegSwap}, []string{plan.Legs[0].Label, plan.Legs[1].Label})

	gasMax, bounds := new(big.Int), new(big.Int)
	for _, l := range plan.Legs {
		require.NotNil(t, l.Call.L1Fee, "leg %q carries its L1 fee bound", l.Label)
		require.Equal(t, b.oracleBound(l.Call), l.Call.L1Fee, "leg %q: the oracle's bound for its size", l.Label)
		gasMax.Add(gasMax, new(big.Int).Mul(new(big.Int).SetUint64(l.Call.Gas), l.Call.MaxFee))
		bounds.Add(bounds, l.Call.L1Fee)
	}
	require.Equal(t, new(big.Int).Add(gasMax, bounds), plan.Fee(), "the preview's max fee: gas × max fee and the L1 bound of both legs")
	require.Equal(t, plan.Fee(), plan.Spend[policy.NativeAsset], "what the caps count in ETH")

	// An ETH cap one wei below that max fee refuses the same swap (the
	// chain has not moved: same gas, same fees), though it is far above
	// the gas part alone.
	tight := b.engine(new(big.Int).Sub(plan.Fee(), big.NewInt(1)), big.NewInt(1e12))
	require.Less(t, gasMax.Cmp(new(big.Int).Sub(plan.Fee(), big.NewInt(1))), 0)
	_, _, ref = b.swapPlan(tight, sw)
	require.NotNil(t, ref, "the L1 bounds take it over the cap")
	require.Equal(t, caps.CodeExceeded, ref.Code)

	// The proxy's receipts: the approve paid 1.1e14 wei of L1 fee, the
	// swap 2.3e14 (more calldata).
	router := b.dev.Contracts.Uniswap.SwapRouter02
	b.proxy.L1Fee(func(h common.Hash) *big.Int {
		tx, _, err := b.dev.Client().TransactionByHash(context.Background(), h)
		if err != nil {
			return nil
		}
		if tx.To() != nil && *tx.To() == router {
			return big.NewInt(23e13)
		}
		return big.NewInt(11e13)
	})
	usdtBefore := b.tokenBalance(sw.In)
	daiBefore := b.tokenBalance(sw.Out)
	canonical := []byte("op swap")
	token, _, ref := e.Issue("wallet_swap", canonical, plan)
	require.Nil(t, ref)
	out, ref := e.Confirm(ctx, TokenMode{}, token, "wallet_swap", canonical)
	require.Nil(t, ref)
	require.Equal(t, StatusConfirmed, out.Status, "missing: %v", out.Missing)
	require.Len(t, out.Legs, 2)

	gas := new(big.Int).Add(b.gasPaid(out.Legs[0].Tx), b.gasPaid(out.Legs[1].Tx))
	want := new(big.Int).Add(gas, big.NewInt(11e13+23e13))
	require.Equal(t, want, out.Fee, "the fee: both receipts' gas and l1Fee")
	require.Equal(t, new(big.Int).Add(b.gasPaid(out.Legs[0].Tx), big.NewInt(11e13)), out.Legs[0].Fee)
	require.Equal(t, new(big.Int).Add(b.gasPaid(out.Legs[1].Tx), big.NewInt(23e13)), out.Legs[1].Fee)
	u := used(e, policy.NativeAsset, sw.In)
	require.Equal(t, want, u[policy.NativeAsset], "the ETH the caps count: each leg's gas plus its receipt's l1Fee")
	require.Equal(t, sw.AmountIn, u[sw.In])
	require.Equal(t, new(big.Int).Sub(usdtBefore, sw.AmountIn), b.tokenBalance(sw.In), "10 USDT left the wallet")
	require.GreaterOrEqual(t, new(big.Int).Sub(b.tokenBalance(sw.Out), daiBefore).Cmp(built.MinOut), 0, "at least the minimum DAI arrived")
}

// tokenBalance is the wallet's balance of token, on chain.
func (b *opStackBed) tokenBalance(token common.Address) *big.Int {
	b.t.Helper()
	v := &chain.View{To: token, Data: chain.BalanceOfData(signer.DevAddress)}
	_, err := b.chain.StateAndViews(context.Background(), signer.DevAddress, v)
	require.NoError(b.t, err)
	n, err := chain.DecodeUint256(v.Return)
	require.NoError(b.t, err)
	return n
}
