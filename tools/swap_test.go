package tools_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

type quoteOut struct {
	AmountOut     string `json:"amount_out"`
	AmountOutBase string `json:"amount_out_base"`
	MinOutBase    string `json:"min_out_base"`
	Block         uint64 `json:"block"`
	Fee           uint32 `json:"fee"`
	Calldata      string `json:"calldata"`
}

type swapPreviewOut struct {
	Status  string `json:"status"`
	Preview struct {
		Quote quoteOut `json:"quote"`
		Legs  []struct {
			Label string `json:"label"`
		} `json:"legs"`
	} `json:"preview"`
	ConfirmToken string `json:"confirm_token"`
}

// swapEnv is a dev chain with Uniswap; without its artifacts the test fails
// saying how to install them.
func swapEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	if e.dev.Contracts.Uniswap == nil {
		t.Fatal(devnet.SwapTestsNeedArtifacts)
	}
	return e
}

func (e *env) allowance(token common.Address) *big.Int {
	e.t.Helper()
	a, err := e.chain.Allowance(e.ctx, token, signer.DevAddress, e.dev.Contracts.Uniswap.SwapRouter02)
	require.NoError(e.t, err)
	return a
}

func (e *env) swap(args map[string]any) (swapPreviewOut, confirmOut, string) {
	e.t.Helper()
	var p swapPreviewOut
	e.ok("wallet_swap", mustJSON(args), &p)
	require.Equal(e.t, "confirmation_required", p.Status)
	var out confirmOut
	text := e.ok("wallet_swap", mustJSON(with(args, p.ConfirmToken)), &out)
	require.Equal(e.t, "confirmed", out.Status, text)
	return p, out, text
}

func TestQuoteEqualsExecutedOutput(t *testing.T) {
	e := swapEnv(t)
	weth := e.dev.Contracts.Uniswap.WETH9
	var q quoteOut
	e.ok("wallet_swap_quote", `{"token_in":"USDT","token_out":"WETH","amount_in":"90"}`, &q)
	require.Equal(t, uint32(500), q.Fee)
	require.True(t, strings.HasPrefix(q.Calldata, "0xc6a5026a"))

	before := e.balanceOf(weth, signer.DevAddress)
	p, out, text := e.swap(map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "90"})
	require.Equal(t, q.AmountOutBase, p.Preview.Quote.AmountOutBase, "nothing moved between quote and preview")
	got := new(big.Int).Sub(e.balanceOf(weth, signer.DevAddress), before)
	require.Equal(t, q.AmountOutBase, got.String(), "the executed output equals the quote; %s", text)
	require.Len(t, out.Effects, 2)
}

func TestSwapsMoveBalancesAsPreviewed(t *testing.T) {
	e := swapEnv(t)
	u := e.dev.Contracts.Uniswap
	cases := []struct {
		name     string
		args     map[string]any
		in, out  common.Address // zero in: ETH
		inBase   *big.Int
		wantLegs []string
	}{
		{"USDT-like to WETH (approval needed)", map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "30"}, e.dev.Contracts.USDT, u.WETH9, big.NewInt(30_000_000), []string{"approve", "swap"}},
		{"WETH to DAI: 18-decimal in and out", map[string]any{"token_in": "WETH", "token_out": "DAI", "amount_in": "0.01", "slippage_bps": 100}, u.WETH9, e.dev.Contracts.DAI, big.NewInt(10_000_000_000_000_000), []string{"approve", "swap"}},
		{"DAI to USDT-like", map[string]any{"token_in": "DAI", "token_out": "USDT", "amount_in": "20", "fee": 500}, e.dev.Contracts.DAI, e.dev.Contracts.USDT, new(big.Int).Mul(big.NewInt(20), devnet.Ether), []string{"approve", "swap"}},
		{"ETH to USDT-like (msg.value)", map[string]any{"token_in": "ETH", "token_out": "USDT", "amount_in": "0.02"}, common.Address{}, e.dev.Contracts.USDT, big.NewInt(20_000_000_000_000_000), []string{"swap"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outBefore := e.balanceOf(c.out, signer.DevAddress)
			var inBefore *big.Int
			if (c.in != common.Address{}) {
				inBefore = e.balanceOf(c.in, signer.DevAddress)
			}
			ethBefore := e.ethOf(signer.DevAddress)

			p, out, _ := e.swap(c.args)
			var labels []string
			for _, l := range p.Preview.Legs {
				labels = append(labels, l.Label)
			}
			require.Equal(t, c.wantLegs, labels)

			gotOut := new(big.Int).Sub(e.balanceOf(c.out, signer.DevAddress), outBefore)
			minOut, _ := new(big.Int).SetString(p.Preview.Quote.MinOutBase, 10)
			require.GreaterOrEqual(t, gotOut.Cmp(minOut), 0, "at least the previewed minimum arrived")
			require.Equal(t, p.Preview.Quote.AmountOutBase, gotOut.String(), "nothing moved: exactly the quote")
			if (c.in != common.Address{}) {
				require.Equal(t, new(big.Int).Sub(inBefore, c.inBase), e.balanceOf(c.in, signer.DevAddress))
				require.Zero(t, e.allowance(c.in).Sign(), "the exact approval is used up")
			} else {
				spent := new(big.Int).Sub(ethBefore, e.ethOf(signer.DevAddress))
				require.Equal(t, 1, spent.Cmp(c.inBase), "ETH in plus fees")
			}
			rcpt, err := e.dev.Client().TransactionReceipt(e.ctx, common.HexToHash(out.TxHash))
			require.NoError(t, err)
			require.Equal(t, uint64(1), rcpt.Status)
		})
	}
}

func newFundedSigner(t *testing.T, e *env) signer.Signer {
	t.Helper()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	dir := t.TempDir()
	path := dir + "/other.key"
	require.NoError(t, os.WriteFile(path, []byte(common.Bytes2Hex(crypto.FromECDSA(key))), 0o600))
	s, err := signer.FromKeyFile(path)
	require.NoError(t, err)
	require.NoError(t, e.dev.FundAccount(e.ctx, s.Address(), new(big.Int).Mul(big.NewInt(100), devnet.Ether), big.NewInt(200_000_000_000), new(big.Int).Mul(big.NewInt(100_000), devnet.Ether)))
	var _ *ecdsa.PrivateKey = key
	return s
}

func TestPriceMovedBetweenPreviewAndConfirm(t *testing.T) {
	e := swapEnv(t)
	u := e.dev.Contracts.Uniswap
	other := newFundedSigner(t, e)
	args := map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "50", "slippage_bps": 10}
	var p swapPreviewOut
	e.ok("wallet_swap", mustJSON(args), &p)

	// Someone else buys WETH with USDT in the same pool: WETH gets dearer.
	_, err := e.dev.SwapAs(e.ctx, other, e.dev.Contracts.USDT, u.WETH9, 500, big.NewInt(50_000_000_000))
	require.NoError(t, err)

	before := e.state()
	wethBefore := e.balanceOf(u.WETH9, signer.DevAddress)
	text := e.refused("wallet_swap", mustJSON(with(args, p.ConfirmToken)), "PRICE_MOVED")
	require.Contains(t, text, "Nothing was signed")
	require.Equal(t, before, e.state(), "nothing spent, nonce and caps unchanged")
	require.Equal(t, wethBefore, e.balanceOf(u.WETH9, signer.DevAddress))
	require.Zero(t, e.allowance(e.dev.Contracts.USDT).Sign(), "no approval was sent either")
}

func TestZeroFirstApprovalRestoresAllowance(t *testing.T) {
	e := swapEnv(t)
	u := e.dev.Contracts.Uniswap
	// An allowance already exists but is short: USDT needs it set to zero
	// before any new non-zero value.
	_, err := e.dev.SendAsDev(e.ctx, &e.dev.Contracts.USDT, nil, chain.ApproveData(u.SwapRouter02, big.NewInt(1_000_000)), 300_000)
	require.NoError(t, err)
	p, _, _ := e.swap(map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "5"})
	var labels []string
	for _, l := range p.Preview.Legs {
		labels = append(labels, l.Label)
	}
	require.Equal(t, []string{"reset approval", "approve", "swap"}, labels)
	require.Equal(t, big.NewInt(1_000_000), e.allowance(e.dev.Contracts.USDT), "back where it was before the approval legs")

	// With enough allowance, no approval leg at all.
	_, err = e.dev.SendAsDev(e.ctx, &e.dev.Contracts.DAI, nil, chain.ApproveData(u.SwapRouter02, new(big.Int).Mul(big.NewInt(50), devnet.Ether)), 300_000)
	require.NoError(t, err)
	p, _, _ = e.swap(map[string]any{"token_in": "DAI", "token_out": "USDT", "amount_in": "10"})
	require.Len(t, p.Preview.Legs, 1)
	require.Equal(t, new(big.Int).Mul(big.NewInt(40), devnet.Ether), e.allowance(e.dev.Contracts.DAI))
}

func TestSwapInputCountsAgainstCaps(t *testing.T) {
	e := swapEnv(t) // USDT: 100 per transaction
	before := e.state()
	text := e.refused("wallet_swap", `{"token_in":"USDT","token_out":"WETH","amount_in":"100.5"}`, "CAP_EXCEEDED")
	require.Contains(t, text, "this needs 100.5 USDT, more than its per transaction cap of 100 USDT. At most 100 USDT fits now")
	require.Equal(t, before, e.state())

	e.swap(map[string]any{"token_in": "USDT", "token_out": "DAI", "amount_in": "60"})
	var pol struct {
		Caps []struct{ Symbol, Window, Used string } `json:"caps"`
	}
	e.ok("wallet_policy", `{}`, &pol)
	found := false
	for _, c := range pol.Caps {
		if c.Symbol == "USDT" && c.Window == "per session" {
			found = true
			require.Equal(t, "60", c.Used)
		}
	}
	require.True(t, found)
}

func TestSwapRefusals(t *testing.T) {
	e := swapEnv(t)
	before := e.state()
	cases := []struct{ name, args, code string }{
		{"same token", `{"token_in":"WETH","token_out":"WETH","amount_in":"1"}`, "BAD_SWAP"},
		{"ETH out", `{"token_in":"USDT","token_out":"ETH","amount_in":"1"}`, "BAD_SWAP"},
		{"bad fee tier", `{"token_in":"USDT","token_out":"WETH","amount_in":"1","fee":501}`, "BAD_SWAP"},
		{"fee as float", `{"token_in":"USDT","token_out":"WETH","amount_in":"1","fee":500.0}`, "BAD_ARGUMENT"},
		{"slippage too high", `{"token_in":"USDT","token_out":"WETH","amount_in":"1","slippage_bps":5000}`, "BAD_SWAP"},
		// One type per argument, the schema's: a whole number is a JSON
		// integer, as an amount is a decimal string.
		{"fee as string", `{"token_in":"USDT","token_out":"WETH","amount_in":"1","fee":"500"}`, "BAD_ARGUMENT"},
		{"slippage as string", `{"token_in":"USDT","token_out":"WETH","amount_in":"1","slippage_bps":"50"}`, "BAD_ARGUMENT"},
		{"no pool at that tier", `{"token_in":"USDT","token_out":"WETH","amount_in":"1","fee":3000}`, "NO_QUOTE"},
		{"amount as number", `{"token_in":"USDT","token_out":"WETH","amount_in":1}`, "BAD_ARGUMENT"},
		{"unknown field", `{"token_in":"USDT","token_out":"WETH","amount_in":"1","recipient":"0x00000000000000000000000000000000000000aa"}`, "BAD_ARGUMENT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.refused("wallet_swap", c.args, c.code)
			require.Equal(t, before, e.state())
		})
	}
	// A send token does not confirm a swap, and is spent by trying.
	send := map[string]any{"to": "0x00000000000000000000000000000000000000ab", "amount": "1", "asset": "USDT"}
	p := e.preview("wallet_send", send)
	e.refused("wallet_swap", mustJSON(map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "1", "confirm": p.ConfirmToken}), "ARGS_MISMATCH")
	e.refused("wallet_send", mustJSON(with(send, p.ConfirmToken)), "TOKEN_USED")
	require.Equal(t, before, e.state())
	_ = context.Background
}

func TestSwapRefusedWhereTheTableNamesNoContract(t *testing.T) {
	// A network entry whose Uniswap addresses have no code on this node (a
	// different chain with the same id, say): refused, nothing signed.
	net := policy.LookupNetwork(devnet.ChainID)
	u := *net.Uniswap
	u.QuoterV2 = common.HexToAddress("0x00000000000000000000000000000000000000ee")
	net.Uniswap = &u
	e := newEnv(t, func(d *tools.Deps) { d.Network = &net })
	before := e.state()
	e.refused("wallet_swap_quote", `{"token_in":"USDT","token_out":"WETH","amount_in":"1"}`, "SWAPS_UNAVAILABLE")
	e.refused("wallet_swap", `{"token_in":"USDT","token_out":"WETH","amount_in":"1"}`, "SWAPS_UNAVAILABLE")
	require.Equal(t, before, e.state())
}

func TestAllowanceChangedBetweenPreviewAndConfirm(t *testing.T) {
	e := swapEnv(t)
	args := map[string]any{"token_in": "DAI", "token_out": "USDT", "amount_in": "3"}
	var p swapPreviewOut
	e.ok("wallet_swap", mustJSON(args), &p)
	require.Len(t, p.Preview.Legs, 2, "approve, then swap")
	// Someone (another client of this wallet) approves the router meanwhile.
	_, err := e.dev.SendAsDev(e.ctx, &e.dev.Contracts.DAI, nil, chain.ApproveData(e.dev.Contracts.Uniswap.SwapRouter02, big.NewInt(7)), 300_000)
	require.NoError(t, err)
	before := e.state()
	e.refused("wallet_swap", mustJSON(with(args, p.ConfirmToken)), "ALLOWANCE_CHANGED")
	require.Equal(t, before, e.state())
	require.Equal(t, big.NewInt(7), e.allowance(e.dev.Contracts.DAI))
}

func TestSwapDeadlinePassed(t *testing.T) {
	e := swapEnv(t)
	args := map[string]any{"token_in": "ETH", "token_out": "USDT", "amount_in": "0.001"}
	var p swapPreviewOut
	e.ok("wallet_swap", mustJSON(args), &p)
	// The chain's clock runs past the deadline (preview + TTL + 10 min)
	// while the confirmation itself is still valid.
	require.NoError(t, e.dev.AdjustTime(2*time.Hour))
	before := e.state()
	text := e.refused("wallet_swap", mustJSON(with(args, p.ConfirmToken)), "DEADLINE_PASSED")
	require.Contains(t, text, "deadline has passed")
	require.Equal(t, before, e.state())
}

func TestSwapWithoutTheInputTokenExplainsSTF(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	if d.Contracts.Uniswap == nil {
		t.Fatal(devnet.SwapTestsNeedArtifacts)
	}
	// A wallet with ETH for fees but no USDT at all.
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	path := t.TempDir() + "/k"
	require.NoError(t, os.WriteFile(path, []byte(common.Bytes2Hex(crypto.FromECDSA(key))), 0o600))
	poor, err := signer.FromKeyFile(path)
	require.NoError(t, err)
	require.NoError(t, d.FundAccount(context.Background(), poor.Address(), devnet.Ether, nil, nil))
	e := serverOn(t, d, func(deps *tools.Deps) { deps.Signer, deps.Address = poor, poor.Address() })
	text := e.refused("wallet_swap", `{"token_in":"USDT","token_out":"WETH","amount_in":"1"}`, "SIMULATION_REVERTED")
	require.Contains(t, text, "STF")
	require.Contains(t, text, "balance or its allowance")
}

// The operator's rules come first: a swap on a mainnet without the opt-in
// is refused as a send is, though the table names the Uniswap contracts.
func TestSwapOnMainnetRefusedWithoutOptIn(t *testing.T) {
	pretend := policy.LookupNetwork(devnet.ChainID)
	pretend.Name, pretend.Kind = "pretend mainnet", policy.Mainnet
	e := newEnv(t, func(d *tools.Deps) { d.Network = &pretend })
	if e.dev.Contracts.Uniswap == nil {
		t.Fatal(devnet.SwapTestsNeedArtifacts)
	}
	before := e.state()
	text := e.refused("wallet_swap", `{"token_in":"USDT","token_out":"WETH","amount_in":"1"}`, "MAINNET_NOT_ALLOWED")
	require.Contains(t, text, "WALLETGATE_ALLOW_MAINNET=true")
	require.Equal(t, before, e.state())
}
