package engine

// The L1 data fee of every leg of a plan, on the --op-stack dev chain (the
// real GasPriceOracle and L1Block bytecode, with Uniswap deployed as on the
// plain dev chain) behind internal/nodeproxy: a later leg's risen bound is
// refused at confirm, a bound that rises between legs must fit what the
// reservation has left, an undo leg carries its bound, and a real swap's
// two legs are counted with their bounds and settled with their receipts'
// l1Fee. geth does not charge the L1 fee (it is not an OP-stack node: the
// wallet loses value and gas only, and its receipts carry no l1Fee), so the
// proxy puts l1Fee on the receipts, as an OP-stack node does, and the
// accounting is checked against the proxy's receipts.

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

func oracleBound(t *testing.T, c *chain.Client, call chain.Call) *big.Int {
	t.Helper()
	v := chain.L1FeeBoundView(call)
	_, err := c.StateAndViews(context.Background(), signer.DevAddress, v)
	require.NoError(t, err)
	bound, err := v.Uint256()
	require.NoError(t, err)
	return bound
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

// At confirm the re-check reads every leg's L1 fee bound again in its one
// batch, not the first leg's only: a plan whose first leg's preview counted
// a bound far above the oracle's, and whose second leg's counted the
// oracle's exactly, is refused FEES_ROSE on the second leg when the L1 base
// fee rises a hundredfold — with nothing signed, nothing broadcast and no
// cap consumed. Both ways a plan of several legs is built: simulated in
// sequence (BuildLegs: approve-then-swap, zero-then-approve) and traced
// (BuildTraced: wallet_call with several calls, wallet_approve).
func TestALaterLegsRisenL1FeeBoundIsRefusedAtConfirm(t *testing.T) {
	l1 := devnet.L1Values{BaseFee: big.NewInt(1e12), BlobBaseFee: big.NewInt(1), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d4")
	for _, traced := range []bool{false, true} {
		name := "simulated in sequence"
		if traced {
			name = "effects traced"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			d, p, c, e := opStackEngine(t, l1, big.NewInt(1e17))
			plan := &Plan{Recipient: &to, Legs: []Leg{
				{Label: "first", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(1e15)}},
				{Label: "second", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(2e15)}},
			}}
			if traced {
				_, ref := e.BuildTraced(ctx, plan)
				require.Nil(t, ref)
			} else {
				st, err := c.StateAndViews(ctx, signer.DevAddress)
				require.NoError(t, err)
				spendOf := func(legs []Leg) caps.Spend {
					sp := caps.Spend{policy.NativeAsset: new(big.Int)}
					for _, l := range legs {
						sp[policy.NativeAsset].Add(sp[policy.NativeAsset], l.Call.MaxCost())
					}
					return sp
				}
				_, ref := e.BuildLegs(ctx, plan, st, spendOf)
				require.Nil(t, ref)
				plan.Spend = spendOf(plan.Legs)
				plan.Effects = []Effect{{Asset: ETH, From: signer.DevAddress, To: to, Amount: big.NewInt(2e15)}}
			}
			second := plan.Legs[1].Call.L1Fee
			require.NotNil(t, second)
			require.Positive(t, second.Sign())
			// The first leg's preview counted a thousand times its bound
			// (and the caps with it): a hundredfold rise stays within it.
			extra := new(big.Int).Mul(plan.Legs[0].Call.L1Fee, big.NewInt(999))
			plan.Legs[0].Call.L1Fee = new(big.Int).Add(plan.Legs[0].Call.L1Fee, extra)
			plan.Spend[policy.NativeAsset] = new(big.Int).Add(plan.Spend[policy.NativeAsset], extra)
			canonical := []byte("op later leg " + name)
			token, _, ref := e.Issue("wallet_call", canonical, plan)
			require.Nil(t, ref)

			risen := l1
			risen.BaseFee = big.NewInt(1e14)
			require.NoError(t, d.SetL1Values(ctx, risen))

			nonce, err := d.Client().PendingNonceAt(ctx, signer.DevAddress)
			require.NoError(t, err)
			balance, err := d.Client().BalanceAt(ctx, signer.DevAddress, nil)
			require.NoError(t, err)
			usedBefore := used(e, policy.NativeAsset)[policy.NativeAsset]
			sent := p.Broadcasts()
			batches := len(p.Batches())

			_, ref = e.Confirm(ctx, TokenMode{}, token, "wallet_call", canonical)
			require.NotNil(t, ref, "the second leg's L1 fee bound rose above the previewed one")
			require.Equal(t, CodeFeesRose, ref.Code)
			require.Contains(t, ref.Message, `"second"`, "it names the leg whose bound rose")
			require.Contains(t, ref.Message, ETH.Format(second), "and what its preview counted")
			require.Contains(t, ref.Message, "new preview", "and what to do")
			require.Equal(t, batches+1, len(p.Batches()), "every leg's bound read again in the re-check's one batch")

			after, err := d.Client().PendingNonceAt(ctx, signer.DevAddress)
			require.NoError(t, err)
			require.Equal(t, nonce, after, "nothing signed or sent")
			balanceAfter, err := d.Client().BalanceAt(ctx, signer.DevAddress, nil)
			require.NoError(t, err)
			require.Equal(t, balance, balanceAfter)
			require.Equal(t, sent, p.Broadcasts(), "no broadcast")
			require.Equal(t, usedBefore, used(e, policy.NativeAsset)[policy.NativeAsset], "nothing counted against the caps")
		})
	}
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

// Between legs, the next leg's L1 fee bound is read again with the next
// leg's simulation — in the previous leg's broadcast that waits, or, on a
// node without one, in the simulation's own round trip — never in a round
// trip of its own: when the sequencer's L1 values rose while the first leg
// was on its way, the second is sent if what the reservation has left
// covers the rise (the first leg paid less than its max cost), and is not
// sent, FEES_ROSE, when it does not: the plan ends incomplete, settled on
// the first leg alone, with one broadcast.
func TestALegsL1FeeBoundRisenBetweenLegsMustFitTheReservation(t *testing.T) {
	l1 := devnet.L1Values{BaseFee: big.NewInt(1e14), BlobBaseFee: big.NewInt(1), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d4")
	for _, tc := range []struct {
		name   string
		factor int64 // the L1 base fee's rise
		sent   bool
		lack   []string
	}{
		{"a rise the reservation covers", 2, true, nil},
		{"a rise beyond it", 100, false, nil},
		{"a rise the reservation covers, no broadcast that waits", 2, true, []string{"eth_sendRawTransactionSync"}},
		{"a rise beyond it, no broadcast that waits", 100, false, []string{"eth_sendRawTransactionSync"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			d, p, c, e := opStackEngine(t, l1, big.NewInt(1e18), tc.lack...)
			if tc.lack != nil {
				require.False(t, c.SyncSend())
			}
			plan := &Plan{Recipient: &to, Legs: []Leg{
				{Label: "first", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(1e15)}},
				{Label: "second", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(2e15)}},
			}}
			st, err := c.StateAndViews(ctx, signer.DevAddress)
			require.NoError(t, err)
			spendOf := func(legs []Leg) caps.Spend {
				sp := caps.Spend{policy.NativeAsset: new(big.Int)}
				for _, l := range legs {
					sp[policy.NativeAsset].Add(sp[policy.NativeAsset], l.Call.MaxCost())
				}
				return sp
			}
			_, ref := e.BuildLegs(ctx, plan, st, spendOf)
			require.Nil(t, ref)
			plan.Spend = spendOf(plan.Legs)
			plan.Effects = []Effect{{Asset: ETH, From: signer.DevAddress, To: to, Amount: big.NewInt(2e15)}}
			canonical := []byte("op between legs " + tc.name)
			token, _, ref := e.Issue("wallet_call", canonical, plan)
			require.Nil(t, ref)

			// The sequencer's new L1 values land just before the first leg
			// reaches the node (after the confirm's re-check).
			risen := l1
			risen.BaseFee = new(big.Int).Mul(l1.BaseFee, big.NewInt(tc.factor))
			p.OnBroadcast(func(n int) {
				if n == 0 {
					require.NoError(t, d.SetL1Values(ctx, risen))
				}
			})
			nonce, err := d.Client().PendingNonceAt(ctx, signer.DevAddress)
			require.NoError(t, err)
			out, ref := e.Confirm(ctx, TokenMode{}, token, "wallet_call", canonical)
			require.Nil(t, ref)
			second := plan.Legs[1].Call
			risenBound := oracleBound(t, c, second)
			require.Positive(t, risenBound.Cmp(second.L1Fee), "the second leg's bound rose")
			if tc.sent {
				require.Equal(t, StatusConfirmed, out.Status, "%+v", out.Legs)
				require.Equal(t, 2, p.Broadcasts())
				return
			}
			require.Equal(t, StatusIncomplete, out.Status)
			require.Len(t, out.Legs, 2)
			require.Equal(t, LegIncluded, out.Legs[0].Status)
			require.Equal(t, LegNotSent, out.Legs[1].Status)
			require.Equal(t, CodeFeesRose, out.Legs[1].Code)
			require.Contains(t, out.Legs[1].Reason, ETH.Format(second.L1Fee), "it says what the preview counted")
			require.Equal(t, 1, p.Broadcasts(), "the second leg was never broadcast")
			after, err := d.Client().PendingNonceAt(ctx, signer.DevAddress)
			require.NoError(t, err)
			require.Equal(t, nonce+1, after, "one transaction signed and sent")
			rc, err := d.Client().TransactionReceipt(ctx, out.Legs[0].Tx)
			require.NoError(t, err)
			want := new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
			want.Add(want, big.NewInt(1e15))
			require.Equal(t, want, used(e, policy.NativeAsset)[policy.NativeAsset], "settled on the first leg: its value and gas")
		})
	}
}

// The L1 fee bounds ride in batches that run anyway: a two-leg plan's
// preview, and its confirm (the re-check, each leg's broadcast that waits
// with the next leg's simulation and bound), make as many round trips on
// the --op-stack chain as on the plain dev chain.
func TestTheL1FeeBoundsAddNoRoundTrip(t *testing.T) {
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d4")
	trips := func(opStack bool) (preview, confirm int) {
		ctx := context.Background()
		d, err := devnet.Start(ctx, devnet.Options{HTTPAddr: "127.0.0.1:0", OPStack: opStack, OPArtifactsDir: os.Getenv("WALLETGATE_OP_ARTIFACTS")})
		if err != nil && opStack && os.Getenv("WALLETGATE_REQUIRE_OPSTACK") != "1" {
			t.Skipf("no OP-stack artifacts (%v)", err)
		}
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
		p := nodeproxy.New(d.HTTPURL())
		t.Cleanup(p.Close)
		c, err := chain.Dial(ctx, []string{p.URL()})
		require.NoError(t, err)
		t.Cleanup(c.Close)
		require.Equal(t, opStack, c.OPStack())
		limit := func() map[common.Address]*big.Int {
			return map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18)}
		}
		e := New(Deps{Chain: c, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Minute, 8, nil),
			Limits: caps.Limits{PerTx: limit(), PerSession: limit(), PerDay: limit()}, Capped: true,
			Recorder: &memRecorder{now: time.Now}, ReceiptTimeout: 10 * time.Second})
		plan := &Plan{Recipient: &to, Legs: []Leg{
			{Label: "first", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(1e15)}},
			{Label: "second", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(2e15)}},
		}}
		st, err := c.StateAndViews(ctx, signer.DevAddress)
		require.NoError(t, err)
		spendOf := func(legs []Leg) caps.Spend {
			sp := caps.Spend{policy.NativeAsset: new(big.Int)}
			for _, l := range legs {
				sp[policy.NativeAsset].Add(sp[policy.NativeAsset], l.Call.MaxCost())
			}
			return sp
		}
		n := p.Requests()
		_, ref := e.BuildLegs(ctx, plan, st, spendOf)
		require.Nil(t, ref)
		preview = p.Requests() - n
		require.Equal(t, opStack, plan.Legs[1].Call.L1Fee != nil)
		plan.Spend = spendOf(plan.Legs)
		plan.Effects = []Effect{{Asset: ETH, From: signer.DevAddress, To: to, Amount: big.NewInt(2e15)}}
		token, _, ref := e.Issue("wallet_call", []byte("trips"), plan)
		require.Nil(t, ref)
		n = p.Requests()
		out, ref := e.Confirm(ctx, TokenMode{}, token, "wallet_call", []byte("trips"))
		require.Nil(t, ref)
		require.Equal(t, StatusConfirmed, out.Status)
		return preview, p.Requests() - n
	}
	plainPreview, plainConfirm := trips(false)
	opPreview, opConfirm := trips(true)
	require.Equal(t, plainPreview, opPreview, "the preview's round trips")
	require.Equal(t, plainConfirm, opConfirm, "the confirm's round trips")
	t.Logf("round trips: preview %d, confirm %d", opPreview, opConfirm)
}

// A send whose broadcast's fate was unknown (the node answered "already
// known" without having it) stays counted at its reservation — value, gas
// limit × max fee and the L1 fee bound — while pending; when the follow-up
// sends its identical bytes and the receipt turns up, it settles on that
// receipt: the value, the gas and the receipt's l1Fee.
func TestAPendingSendSettlesOnItsReceiptsL1Fee(t *testing.T) {
	l1 := devnet.L1Values{BaseFee: big.NewInt(1e14), BlobBaseFee: big.NewInt(1), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
	d, p, _, e := opStackEngine(t, l1, big.NewInt(1e17))
	const l1Paid = 2e14
	p.L1Fee(func(common.Hash) *big.Int { return big.NewInt(l1Paid) })
	ctx := context.Background()
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d5")
	built, ref := e.Build(ctx, chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(4e15)}, to,
		func(c chain.Call) caps.Spend { return caps.Spend{policy.NativeAsset: c.MaxCost()} }, nil)
	require.Nil(t, ref)
	require.NotNil(t, built.Call.L1Fee)
	plan := &Plan{Legs: []Leg{{Label: "send", Call: built.Call}}, Spend: built.Spend, Recipient: &to,
		Effects: []Effect{{Asset: ETH, From: signer.DevAddress, To: to, Amount: big.NewInt(4e15)}}}
	canonical := []byte("op pending " + to.Hex())
	token, _, ref := e.Issue("wallet_send", canonical, plan)
	require.Nil(t, ref)

	e.receiptTimeout = 300 * time.Millisecond // the receipt never comes: the node does not have it
	p.SendError("already known", false, 1)
	out, ref := e.Confirm(ctx, TokenMode{}, token, "wallet_send", canonical)
	require.Nil(t, ref)
	require.Equal(t, StatusPending, out.Status)
	require.Equal(t, built.Call.MaxCost(), used(e, policy.NativeAsset)[policy.NativeAsset], "counted at its reservation, the L1 bound included")

	e.receiptTimeout = 10 * time.Second
	lines, err := e.Reconcile(ctx)
	require.NoError(t, err)
	require.Len(t, lines, 1)
	require.Contains(t, lines[0], "included in block")
	rc, err := d.Client().TransactionReceipt(ctx, out.Tx)
	require.NoError(t, err)
	want := new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
	want.Add(want, big.NewInt(4e15+l1Paid))
	require.Equal(t, want, used(e, policy.NativeAsset)[policy.NativeAsset], "settled on the receipt: value, gas and its l1Fee")
}

// What the reservation has left for an undo leg is the reservation less
// what the included legs paid in fees and sent as value: an earlier leg's
// 0.05 ETH, gone from the wallet, pays for no undo. Here the plan's second
// leg (1 wei) is refused by the node after its first sent 0.05 ETH; the
// reservation's rest (the first leg's unused fees and the second's max
// cost) does not cover the undo (an approve with a kilobyte of trailing
// calldata, which the token ignores: its L1 bound is several times the two
// legs'), so it is not sent.
func TestAnUndoIsNotPaidFromAnEarlierLegsValue(t *testing.T) {
	l1 := devnet.L1Values{BaseFee: big.NewInt(1e14), BlobBaseFee: big.NewInt(1), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
	d, p, c, e := opStackEngine(t, l1, big.NewInt(1e18))
	ctx := context.Background()
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d6")
	plan := &Plan{Recipient: &to, Legs: []Leg{
		{Label: "pay", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(5e16)}},
		{Label: "second", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(1)}},
	}}
	st, err := c.StateAndViews(ctx, signer.DevAddress)
	require.NoError(t, err)
	spendOf := func(legs []Leg) caps.Spend {
		sp := caps.Spend{policy.NativeAsset: new(big.Int)}
		for _, l := range legs {
			sp[policy.NativeAsset].Add(sp[policy.NativeAsset], l.Call.MaxCost())
		}
		return sp
	}
	_, ref := e.BuildLegs(ctx, plan, st, spendOf)
	require.Nil(t, ref)
	plan.Spend = spendOf(plan.Legs)
	plan.Effects = []Effect{{Asset: ETH, From: signer.DevAddress, To: to, Amount: big.NewInt(1)}}
	undo := chain.Call{From: signer.DevAddress, To: d.Contracts.USDT, Data: append(chain.ApproveData(to, new(big.Int)), bytes.Repeat([]byte{0xff}, 1000)...)}
	undoBound := oracleBound(t, c, undo)
	require.Greater(t, undoBound.Cmp(new(big.Int).Add(plan.Legs[0].Call.L1Fee, plan.Legs[1].Call.L1Fee)), 0)
	require.Less(t, undoBound.Cmp(big.NewInt(5e16)), 0, "what the first leg sent would have paid for it")
	plan.Undo = func(int) []Leg { return []Leg{{Label: "approval back to 0", Call: undo}} }
	token, _, ref := e.Issue("wallet_call", []byte("undo value"), plan)
	require.Nil(t, ref)
	p.SendErrorAfter(1, "transaction underpriced", false, 1)
	out, ref := e.Confirm(ctx, TokenMode{}, token, "wallet_call", []byte("undo value"))
	require.Nil(t, ref)
	require.Equal(t, StatusIncomplete, out.Status)
	require.Len(t, out.Legs, 3)
	require.Equal(t, LegIncluded, out.Legs[0].Status)
	require.Equal(t, LegNotSent, out.Legs[1].Status)
	require.True(t, out.Legs[2].Undo)
	require.Equal(t, LegNotSent, out.Legs[2].Status, "the undo is not paid from the 0.05 ETH already sent")
	require.Equal(t, CodeInsufficientFunds, out.Legs[2].Code)
	require.Equal(t, 1, p.Broadcasts()-1, "the first leg and the refused second, nothing else")
	require.LessOrEqual(t, used(e, policy.NativeAsset)[policy.NativeAsset].Cmp(plan.Spend[policy.NativeAsset]), 0, "never more than reserved")
}
