package engine

// The L1 data fee of every leg of a plan, on the --op-stack dev chain (the
// real GasPriceOracle and L1Block bytecode) behind internal/nodeproxy: a
// later leg's risen bound is refused at confirm, a bound that rises between
// legs must fit what the reservation has left, the bounds add no round
// trip, a pending send settles on its receipt's l1Fee, and an undo is paid
// from what the reservation has left only (opstack_swap_test.go: a real
// swap, and its undo's L1 fee). geth does not charge the L1 fee (it is not an OP-stack node: the
// wallet loses value and gas only, and its receipts carry no l1Fee), so the
// proxy puts l1Fee on the receipts, as an OP-stack node does, and the
// accounting is checked against the proxy's receipts.

import (
	"bytes"
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
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/internal/nodeproxy"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// oracleBound is the GasPriceOracle's L1 fee bound of call now, read with
// a view of its own (not through the engine's paths).
func oracleBound(t *testing.T, c *chain.Client, call chain.Call) *big.Int {
	t.Helper()
	v := chain.L1FeeBoundView(call)
	_, err := c.StateAndViews(context.Background(), signer.DevAddress, v)
	require.NoError(t, err)
	bound, err := v.Uint256()
	require.NoError(t, err)
	return bound
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
				plan = builtETHLegs(t, e, c, to, plan.Legs...)
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
			plan := builtETHLegs(t, e, c, to,
				Leg{Label: "first", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(1e15)}},
				Leg{Label: "second", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(2e15)}})
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
		spendOf := ethLegsSpend
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
	plan := builtETHLegs(t, e, c, to,
		Leg{Label: "pay", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(5e16)}},
		Leg{Label: "second", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(1)}})
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

// builtETHLegs builds legs to to (ETH only) as the engine builds a plan's:
// simulated in sequence, each leg's max cost reserved, the last leg's value
// its effect.
func builtETHLegs(t *testing.T, e *Engine, c *chain.Client, to common.Address, legs ...Leg) *Plan {
	t.Helper()
	ctx := context.Background()
	plan := &Plan{Recipient: &to, Legs: legs}
	st, err := c.StateAndViews(ctx, signer.DevAddress)
	require.NoError(t, err)
	_, ref := e.BuildLegs(ctx, plan, st, ethLegsSpend)
	require.Nil(t, ref)
	plan.Spend = ethLegsSpend(plan.Legs)
	plan.Effects = []Effect{{Asset: ETH, From: signer.DevAddress, To: to, Amount: legs[len(legs)-1].Call.Value}}
	return plan
}
