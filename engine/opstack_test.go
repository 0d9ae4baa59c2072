package engine

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
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/internal/nodeproxy"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// Fees as an OP-stack chain charges them, on the --op-stack dev chain (the
// real GasPriceOracle and L1Block bytecode) behind a proxy that puts l1Fee
// on receipts, as an OP-stack node does: geth cannot charge the L1 fee
// itself (the wallet loses value and gas only), so the accounting is checked
// against the proxy's receipts. The L1 part decides whether a send
// fits the cap: 0.007 ETH plus its gas fits 0.01, plus the oracle's L1 fee
// bound it does not.
func TestTheL1FeeBoundDecidesTheCap(t *testing.T) {
	l1 := devnet.L1Values{BaseFee: big.NewInt(1e15), BlobBaseFee: big.NewInt(1), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
	capETH := big.NewInt(1e16)                 // 0.01 ETH in every window
	d, p, _, e := opStackEngine(t, l1, capETH) // the oracle's code, read in the chain-id batch
	const l1Paid = 7e14                        // what the proxy's receipts say the L1 fee was
	p.L1Fee(func(common.Hash) *big.Int { return big.NewInt(l1Paid) })
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d4")
	spendOf := func(c chain.Call) caps.Spend { return caps.Spend{policy.NativeAsset: c.MaxCost()} }

	batches := len(p.Batches())
	built, ref := e.Build(context.Background(), chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(7e15)}, to, spendOf, nil)
	require.NotNil(t, ref, "the L1 fee bound takes it over the cap")
	require.Equal(t, caps.CodeExceeded, ref.Code)
	require.Contains(t, ref.Message, "(0.007 ETH plus a max network fee of", "the refusal counts the L1 bound as fee, not as value")
	require.Equal(t, batches+1, len(p.Batches()), "one batch: the state, the estimate, the code and the oracle's bound together (the simulation is one call)")

	built, ref = e.Build(context.Background(), chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(4e15)}, to, spendOf, nil)
	require.Nil(t, ref)
	gasMax := new(big.Int).Mul(new(big.Int).SetUint64(built.Call.Gas), built.Call.MaxFee)
	require.NotNil(t, built.Call.L1Fee)
	require.Greater(t, built.Call.L1Fee.Cmp(big.NewInt(1e15)), 0, "the oracle's bound, at this L1 base fee")
	require.Less(t, new(big.Int).Add(big.NewInt(7e15), gasMax).Cmp(capETH), 0, "without the L1 part 0.007 ETH would have fitted")
	require.Equal(t, new(big.Int).Add(new(big.Int).Add(big.NewInt(4e15), gasMax), built.Call.L1Fee), built.Spend[policy.NativeAsset], "the caps count value + gas × max fee + L1 bound")

	plan := &Plan{Legs: []Leg{{Label: "send", Call: built.Call}}, Spend: built.Spend, Recipient: &to,
		Effects: []Effect{{Asset: ETH, From: signer.DevAddress, To: to, Amount: big.NewInt(4e15)}}}
	canonical := []byte("op " + to.Hex())
	token, _, ref := e.Issue("wallet_send", canonical, plan)
	require.Nil(t, ref)
	out, ref := e.Confirm(context.Background(), TokenMode{}, token, "wallet_send", canonical)
	require.Nil(t, ref)
	require.Equal(t, StatusConfirmed, out.Status)
	rc, err := d.Client().TransactionReceipt(context.Background(), out.Tx)
	require.NoError(t, err)
	gasPaid := new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
	require.Equal(t, new(big.Int).Add(gasPaid, big.NewInt(l1Paid)), out.Fee, "the fee is the proxy's receipt's: gas plus its l1Fee")
	// Settled on the receipt's fee, l1Fee included, plus the value that
	// moved: on an OP-stack node the balance change is exactly that; here
	// geth took gas only, and the caps still count the proxy's l1Fee (never
	// less than a receipt says was paid).
	require.Equal(t, new(big.Int).Add(new(big.Int).Add(big.NewInt(4e15), gasPaid), big.NewInt(l1Paid)), used(e, policy.NativeAsset)[policy.NativeAsset])
}

// opStackEngine starts an --op-stack dev chain with l1 in L1Block and an
// engine on it whose ETH cap is capETH in every window (or skips when the
// OP artifacts are missing and WALLETGATE_REQUIRE_OPSTACK is not 1), behind
// a proxy whose node lacks the methods lack.
func opStackEngine(t *testing.T, l1 devnet.L1Values, capETH *big.Int, lack ...string) (*devnet.Devnet, *nodeproxy.Proxy, *chain.Client, *Engine) {
	d, err := devnet.Start(context.Background(), devnet.Options{HTTPAddr: "127.0.0.1:0", OPStack: true, L1: l1, OPArtifactsDir: os.Getenv("WALLETGATE_OP_ARTIFACTS")})
	if err != nil && os.Getenv("WALLETGATE_REQUIRE_OPSTACK") != "1" {
		t.Skipf("no OP-stack artifacts (%v)", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	p := nodeproxy.New(d.HTTPURL())
	t.Cleanup(p.Close)
	for _, m := range lack {
		p.Lack(m)
	}
	c, err := chain.Dial(context.Background(), []string{p.URL()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.True(t, c.OPStack())
	limit := func() map[common.Address]*big.Int {
		return map[common.Address]*big.Int{policy.NativeAsset: new(big.Int).Set(capETH)}
	}
	e := New(Deps{Chain: c, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Minute, 8, nil),
		Limits: caps.Limits{PerTx: limit(), PerSession: limit(), PerDay: limit()}, Capped: true,
		Recorder: &memRecorder{now: time.Now}, ReceiptTimeout: 5 * time.Second})
	return d, p, c, e
}

// A plan of several legs (a swap's approve and swap go this way:
// BuildLegs, simulated together with eth_simulateV1) counts every leg's L1
// data fee bound, read in the simulation's own round trip, as one leg does:
// 0.004 ETH twice plus gas fits a 0.01 ETH cap, plus the two bounds it does
// not.
func TestEveryLegOfAPlanCarriesItsL1FeeBound(t *testing.T) {
	l1 := devnet.L1Values{BaseFee: big.NewInt(1e14), BlobBaseFee: big.NewInt(1), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
	capETH := big.NewInt(1e16)
	_, p, c, e := opStackEngine(t, l1, capETH)
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d4")
	spendOf := ethLegsSpend
	plan := func(value int64) *Plan {
		return &Plan{Legs: []Leg{
			{Label: "first", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(value)}},
			{Label: "second", Call: chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(value)}},
		}}
	}
	// One leg's bound, as Build (the single-leg path) reads it.
	one, ref := e.Build(context.Background(), chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(1e15)}, to,
		func(c chain.Call) caps.Spend { return caps.Spend{policy.NativeAsset: c.MaxCost()} }, nil)
	require.Nil(t, ref)
	require.Greater(t, one.Call.L1Fee.Cmp(big.NewInt(1e14)), 0, "the oracle's bound, at this L1 base fee")

	st, err := c.StateAndViews(context.Background(), signer.DevAddress)
	require.NoError(t, err)
	small := plan(1e15)
	batches := len(p.Batches())
	_, ref = e.BuildLegs(context.Background(), small, st, spendOf)
	require.Nil(t, ref)
	require.Equal(t, batches+1, len(p.Batches()), "the bounds ride in the simulation's batch")
	gasMax := new(big.Int)
	for _, l := range small.Legs {
		require.Equal(t, one.Call.L1Fee, l.Call.L1Fee, "leg %q carries the oracle's bound (same size as the single leg)", l.Label)
		gasMax.Add(gasMax, new(big.Int).Mul(new(big.Int).SetUint64(l.Call.Gas), l.Call.MaxFee))
	}
	want := new(big.Int).Add(big.NewInt(2e15), gasMax)
	want.Add(want, new(big.Int).Mul(big.NewInt(2), one.Call.L1Fee))
	require.Equal(t, want, small.MaxCost(), "the plan's max cost: value + gas × max fee + each leg's L1 bound")

	big2 := plan(45e14)
	_, ref = e.BuildLegs(context.Background(), big2, st, spendOf)
	require.NotNil(t, ref, "the two L1 bounds take it over the cap")
	require.Equal(t, caps.CodeExceeded, ref.Code)
	require.Less(t, new(big.Int).Add(big.NewInt(9e15), gasMax).Cmp(capETH), 0, "without the L1 part 0.009 ETH would have fitted")
}

// An L1 fee that rises between preview and confirm (the sequencer's next
// L1Block values) is refused at confirm as a base fee above the max fee is:
// FEES_ROSE, the bound read again in the re-check's own round trip, and
// nothing signed, sent or counted.
func TestARiseOfTheL1FeeBoundIsRefusedAtConfirm(t *testing.T) {
	l1 := devnet.L1Values{BaseFee: big.NewInt(1e12), BlobBaseFee: big.NewInt(1), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
	d, p, _, e := opStackEngine(t, l1, big.NewInt(1e17))
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d4")
	spendOf := func(c chain.Call) caps.Spend { return caps.Spend{policy.NativeAsset: c.MaxCost()} }
	built, ref := e.Build(context.Background(), chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(1e15)}, to, spendOf, nil)
	require.Nil(t, ref)
	previewed := built.Call.L1Fee
	require.NotNil(t, previewed)
	plan := &Plan{Legs: []Leg{{Label: "send", Call: built.Call}}, Spend: built.Spend, Recipient: &to,
		Effects: []Effect{{Asset: ETH, From: signer.DevAddress, To: to, Amount: big.NewInt(1e15)}}}
	canonical := []byte("op rise " + to.Hex())
	token, _, ref := e.Issue("wallet_send", canonical, plan)
	require.Nil(t, ref)

	risen := l1
	risen.BaseFee = big.NewInt(1e14) // the L1 base fee a hundredfold
	require.NoError(t, d.SetL1Values(context.Background(), risen))

	ctx := context.Background()
	nonce, err := d.Client().PendingNonceAt(ctx, signer.DevAddress)
	require.NoError(t, err)
	balance, err := d.Client().BalanceAt(ctx, signer.DevAddress, nil)
	require.NoError(t, err)
	usedBefore := used(e, policy.NativeAsset)[policy.NativeAsset]
	sent := p.Broadcasts()
	batches := len(p.Batches())

	_, ref = e.Confirm(ctx, TokenMode{}, token, "wallet_send", canonical)
	require.NotNil(t, ref, "the L1 fee bound rose above the previewed one")
	require.Equal(t, CodeFeesRose, ref.Code)
	require.Equal(t, batches+1, len(p.Batches()), "the bound read again in the re-check's one batch")
	require.Contains(t, ref.Message, ETH.Format(previewed), "it says what the preview counted")
	require.Contains(t, ref.Message, "new preview", "and what to do")

	after, err := d.Client().PendingNonceAt(ctx, signer.DevAddress)
	require.NoError(t, err)
	require.Equal(t, nonce, after, "nothing signed or sent")
	balanceAfter, err := d.Client().BalanceAt(ctx, signer.DevAddress, nil)
	require.NoError(t, err)
	require.Equal(t, balance, balanceAfter)
	require.Equal(t, sent, p.Broadcasts(), "no broadcast")
	require.Equal(t, usedBefore, used(e, policy.NativeAsset)[policy.NativeAsset], "nothing counted against the caps")
}

// ethLegsSpend is what a plan of ETH-only legs reserves: each leg's max cost
// (value, gas × max fee, L1 bound).
func ethLegsSpend(legs []Leg) caps.Spend {
	sp := caps.Spend{policy.NativeAsset: new(big.Int)}
	for _, l := range legs {
		sp[policy.NativeAsset].Add(sp[policy.NativeAsset], l.Call.MaxCost())
	}
	return sp
}
