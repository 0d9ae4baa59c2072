package engine

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/testdata"
)

// usdtOf is an address's USDT balance on the dev chain.
func (b *testBed) usdtOf(a common.Address) *big.Int {
	out, err := b.chain.TokenBalancesAt(context.Background(), b.dev.Contracts.USDT, a, b.head())
	require.NoError(b.t, err)
	return out[0]
}

func (b *testBed) head() uint64 {
	n, err := b.dev.Client().BlockNumber(context.Background())
	require.NoError(b.t, err)
	return n
}

// approveAsDev sets the dev wallet's USDT allowance for spender outside
// walletgate (through zero, as USDT requires).
func (b *testBed) approveAsDev(spender common.Address, amount int64) {
	usdt := b.dev.Contracts.USDT
	for _, v := range []int64{0, amount} {
		_, err := b.dev.SendAsDev(context.Background(), &usdt, nil, chain.ApproveData(spender, big.NewInt(v)), 200_000)
		require.NoError(b.t, err)
	}
}

// deploy deploys a test contract and returns it with its ABI.
func (b *testBed) deploy(name string, args ...any) (common.Address, abi.ABI) {
	a, err := b.dev.Deploy(context.Background(), name, args...)
	require.NoError(b.t, err)
	j, _, err := testdata.Contract(name)
	require.NoError(b.t, err)
	parsed, err := abi.JSON(strings.NewReader(j))
	require.NoError(b.t, err)
	return a, parsed
}

// previewCall builds and issues an effects-bound plan of one call.
func (b *testBed) previewCall(e *Engine, to common.Address, data []byte) (string, []byte, *Plan, *Refusal) {
	p := &Plan{Legs: []Leg{{Label: "call", Call: chain.Call{From: signer.DevAddress, To: to, Data: data}}}}
	if _, ref := e.BuildTraced(context.Background(), p); ref != nil {
		return "", nil, nil, ref
	}
	canonical := append([]byte(to.Hex()), data...)
	token, _, ref := e.Issue("wallet_call", canonical, p)
	require.Nil(b.t, ref)
	return token, canonical, p, nil
}

// The drainer's calldata asks for nothing, but its simulation pulls the
// whole allowance: the caps see the pull at preview, and a pull that grew
// since the preview is refused at confirm. Nothing is signed either time.
func TestDrainerIsCaughtByItsEffects(t *testing.T) {
	b := newTestBed(t)
	sink := common.HexToAddress("0x00000000000000000000000000000000000d4a17")
	drainer, dabi := b.deploy("Drainer", sink)
	claim, err := dabi.Pack("claim", b.dev.Contracts.USDT)
	require.NoError(t, err)

	b.approveAsDev(drainer, 50_000_000)
	e := b.engine(&memRecorder{now: time.Now}, 40_000_000) // 40 USDT per window
	nonce := b.nonce()
	_, _, _, ref := b.previewCall(e, drainer, claim)
	require.NotNil(t, ref)
	require.Equal(t, caps.CodeExceeded, ref.Code, ref.Message)
	require.Equal(t, nonce, b.nonce())

	b.approveAsDev(drainer, 5_000_000)
	token, canonical, p, ref := b.previewCall(e, drainer, claim)
	require.Nil(t, ref)
	require.Equal(t, big.NewInt(5_000_000), p.Traced.Out[b.dev.Contracts.USDT], "the pull is an outflow")
	require.Equal(t, big.NewInt(5_000_000), p.Spend[b.dev.Contracts.USDT])

	b.approveAsDev(drainer, 30_000_000) // between preview and confirm
	nonce = b.nonce()
	out, ref := e.Confirm(context.Background(), TokenMode{}, token, "wallet_call", canonical)
	require.Nil(t, out)
	require.NotNil(t, ref)
	require.Equal(t, CodeEffectsChanged, ref.Code, ref.Message)
	require.Contains(t, ref.Message, "moves 30 USDT out of the wallet, not 5", "the engine names the table's tokens itself")
	require.Equal(t, nonce, b.nonce(), "nothing signed")
	require.Zero(t, b.usdtOf(sink).Sign())
	for _, u := range e.Ledger().Usage(b.dev.Contracts.USDT) {
		if u.Used != nil {
			require.Zero(t, u.Used.Sign(), "no cap consumed (%s)", u.Window)
		}
	}
}

// A contract that pulls more when run for real than in a simulation ends
// in effect_mismatch, with the caps settled to what really moved.
func TestSimulationAndInclusionDivergeIsAMismatch(t *testing.T) {
	b := newTestBed(t)
	sink := common.HexToAddress("0x00000000000000000000000000000000000d4a18")
	tipjar, tabi := b.deploy("Tipjar", sink, big.NewInt(1_000_000))
	tip, err := tabi.Pack("tip", b.dev.Contracts.USDT)
	require.NoError(t, err)
	b.approveAsDev(tipjar, 10_000_000)

	e := b.engine(&memRecorder{now: time.Now}, 40_000_000)
	token, canonical, p, ref := b.previewCall(e, tipjar, tip)
	require.Nil(t, ref)
	require.Equal(t, big.NewInt(1_000_000), p.Traced.Out[b.dev.Contracts.USDT], "the simulation pulls the small tip")
	out, ref := e.Confirm(context.Background(), TokenMode{}, token, "wallet_call", canonical)
	require.Nil(t, ref)
	require.Equal(t, StatusEffectMismatch, out.Status, "%+v", out)
	require.Equal(t, big.NewInt(3_000_000), b.usdtOf(sink), "what really moved")
	require.NotEmpty(t, out.Missing)
	for _, u := range e.Ledger().Usage(b.dev.Contracts.USDT) {
		if u.Window == caps.PerSession {
			require.Equal(t, big.NewInt(3_000_000), u.Used, "settled to the real movement")
		}
	}
}

// WETH9's withdraw moves a balance without a Transfer log: the balance
// probes still see the outflow.
func TestOutflowWithoutATransferLogIsSeen(t *testing.T) {
	b := newTestBed(t)
	if b.dev.Contracts.Uniswap == nil {
		t.Fatal(devnet.SwapTestsNeedArtifacts)
	}
	weth := b.dev.Contracts.Uniswap.WETH9
	_, err := b.dev.SendAsDev(context.Background(), &weth, big.NewInt(1e15), common.FromHex("0xd0e30db0"), 100_000) // deposit()
	require.NoError(t, err)
	e := b.engine(&memRecorder{now: time.Now})
	withdraw := append(common.FromHex("0x2e1a7d4d"), common.LeftPadBytes(big.NewInt(1e15).Bytes(), 32)...)
	_, _, _, ref := b.previewCall(e, weth, withdraw)
	require.NotNil(t, ref, "WETH has no cap here: an outflow of it is refused")
	require.Equal(t, caps.CodeUncapped, ref.Code, ref.Message)
}
