package tools_test

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/testdata"
	"github.com/walletgate/walletgate/tools"
)

type changesOut struct {
	Moves []struct {
		Direction, Asset, Symbol, Amount, Raw string
	} `json:"moves"`
	Allowances []struct {
		Token, Spender, Before, After string
		Exposure                      bool
	} `json:"allowances"`
	Summary string `json:"summary"`
}

type approvePreviewOut struct {
	Status  string `json:"status"`
	Preview struct {
		Action          string     `json:"action"`
		AllowanceBefore string     `json:"allowance_before"`
		AllowanceAfter  string     `json:"allowance_after"`
		Exposure        bool       `json:"exposure"`
		Legs            []struct{} `json:"legs"`
		Changes         changesOut `json:"changes"`
	} `json:"preview"`
	ConfirmToken string `json:"confirm_token"`
}

func (e *env) allowanceOf(token, spender common.Address) *big.Int {
	e.t.Helper()
	a, err := e.chain.Allowance(e.ctx, token, signer.DevAddress, spender)
	require.NoError(e.t, err)
	return a
}

// usdtUsed is the session window's used USDT, from wallet_policy.
func (e *env) usdtUsed() string {
	e.t.Helper()
	var pol struct {
		Caps []map[string]string `json:"caps"`
	}
	e.ok("wallet_policy", `{}`, &pol)
	for _, c := range pol.Caps {
		if c["symbol"] == "USDT" && c["window"] == "per session" {
			return c["used"]
		}
	}
	e.t.Fatal("no USDT session cap")
	return ""
}

// approve previews and confirms an approval and returns the preview; the
// confirmed transaction's hash is in lastTx.
func (e *env) approve(spender common.Address, amount string) approvePreviewOut {
	e.t.Helper()
	args := map[string]any{"token": "USDT", "spender": spender.Hex(), "amount": amount}
	var p approvePreviewOut
	e.ok("wallet_approve", mustJSON(args), &p)
	require.Equal(e.t, "confirmation_required", p.Status)
	var out confirmOut
	text := e.ok("wallet_approve", mustJSON(with(args, p.ConfirmToken)), &out)
	require.Equal(e.t, "confirmed", out.Status, text)
	e.lastTx = out.TxHash
	return p
}

// An exact approval, a lowering and a revoke each leave the allowance on
// chain exactly where the preview said; only the raise counts against the
// caps.
func TestApproveExactlyThenLowerThenRevoke(t *testing.T) {
	e := newEnv(t)
	spender := addr("0x00000000000000000000000000000000000a1101")
	usdt := e.dev.Contracts.USDT

	var read struct {
		Allowance     string `json:"allowance"`
		AllowanceBase string `json:"allowance_base"`
	}
	e.ok("wallet_allowance", mustJSON(map[string]any{"token": "USDT", "spender": spender.Hex()}), &read)
	require.Equal(t, "0", read.Allowance)

	p := e.approve(spender, "25")
	require.Equal(t, "0", p.Preview.AllowanceBefore)
	require.True(t, p.Preview.Exposure)
	require.Len(t, p.Preview.Changes.Allowances, 1)
	require.Equal(t, "25", p.Preview.Changes.Allowances[0].After)
	require.Equal(t, big.NewInt(25_000_000), e.allowanceOf(usdt, spender))
	require.Equal(t, "25", e.usdtUsed(), "a raised allowance is exposure")
	var v struct {
		Approvals []struct{ Token, From, To, Amount string } `json:"approvals"`
	}
	e.ok("wallet_verify_tx", mustJSON(map[string]any{"tx": e.lastTx}), &v)
	require.Equal(t, []struct{ Token, From, To, Amount string }{{usdt.Hex(), signer.DevAddress.Hex(), spender.Hex(), "25"}}, v.Approvals, "wallet_verify_tx decodes the Approval log")

	p = e.approve(spender, "10")
	require.False(t, p.Preview.Exposure)
	require.Len(t, p.Preview.Legs, 2, "through zero first, as USDT requires")
	require.Equal(t, big.NewInt(10_000_000), e.allowanceOf(usdt, spender))
	require.Equal(t, "25", e.usdtUsed(), "a lowering counts nothing")

	p = e.approve(spender, "0")
	require.Equal(t, "revoke", p.Preview.Action)
	require.Zero(t, e.allowanceOf(usdt, spender).Sign())
	require.Equal(t, "25", e.usdtUsed(), "a revoke counts nothing")

	e.ok("wallet_allowance", mustJSON(map[string]any{"token": "USDT", "spender": spender.Hex()}), &read)
	require.Equal(t, "0", read.AllowanceBase)
}

// Unlimited, above-cap and no-op approvals are refused with nothing signed.
func TestApproveRefusals(t *testing.T) {
	e := newEnv(t)
	spender := addr("0x00000000000000000000000000000000000a1102")
	before := e.state()
	max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	unlimited := policy.FormatAmount(max, 6)
	for _, tc := range []struct{ name, amount, code string }{
		{"uint256 max", unlimited, tools.CodeApprovalTooLarge},
		{"above the per-tx cap", "100.000001", tools.CodeApprovalTooLarge},
		{"already so", "0", tools.CodeApprovalUnchanged},
		{"a number form", "1e6", "BAD_AMOUNT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.refused("wallet_approve", mustJSON(map[string]any{"token": "USDT", "spender": spender.Hex(), "amount": tc.amount}), tc.code)
		})
	}
	e.refused("wallet_approve", mustJSON(map[string]any{"token": "ETH", "spender": spender.Hex(), "amount": "1"}), "BAD_TOKEN")
	require.Equal(t, before, e.state())
}

// callEnv allows wallet_call to the router, USDT and the given contracts.
func callEnv(t *testing.T, allow ...common.Address) *env {
	t.Helper()
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	if d.Contracts.Uniswap == nil {
		t.Fatal(devnet.SwapTestsNeedArtifacts)
	}
	return serverOn(t, d, func(deps *tools.Deps) {
		rules := []policy.CallRule{{Contract: d.Contracts.Uniswap.SwapRouter02}, {Contract: d.Contracts.USDT, Selector: []byte{0x09, 0x5e, 0xa7, 0xb3}}}
		for _, a := range allow {
			rules = append(rules, policy.CallRule{Contract: a})
		}
		deps.Config.AllowCalls = policy.CallsAllowed{Rules: rules}
	})
}

type callPreviewOut struct {
	Status  string `json:"status"`
	Preview struct {
		Calls []struct {
			To      string `json:"to"`
			Decoded struct {
				Function, Source string
				Args             []string
			} `json:"decoded"`
		} `json:"calls"`
		Changes  changesOut `json:"changes"`
		Warnings []string   `json:"warnings"`
	} `json:"preview"`
	ConfirmToken string `json:"confirm_token"`
}

// routerABI is SwapRouter02's ABI from Uniswap's published artifact, not
// walletgate's: calldata built the way a builder builds it.
func routerABI(t *testing.T) abi.ABI {
	dir, ok := devnet.FindArtifacts()
	require.True(t, ok)
	raw, err := os.ReadFile(filepath.Join(dir, "@uniswap/swap-router-contracts/artifacts/contracts/SwapRouter02.sol/SwapRouter02.json"))
	require.NoError(t, err)
	var art struct {
		ABI json.RawMessage `json:"abi"`
	}
	require.NoError(t, json.Unmarshal(raw, &art))
	a, err := abi.JSON(strings.NewReader(string(art.ABI)))
	require.NoError(t, err)
	return a
}

// Builder calldata for a swap — an exact approval to the router, then
// SwapRouter02's multicall(deadline, [exactInputSingle]) encoded from
// Uniswap's own ABI — goes through wallet_call inside the caps, and the
// balances on chain move as the preview said.
func TestBuilderSwapCalldataThroughWalletCall(t *testing.T) {
	e := callEnv(t)
	u := e.dev.Contracts.Uniswap
	usdt := e.dev.Contracts.USDT
	amount := big.NewInt(10_000_000)
	ra := routerABI(t)
	type params struct {
		TokenIn, TokenOut common.Address
		Fee               *big.Int
		Recipient         common.Address
		AmountIn          *big.Int
		AmountOutMinimum  *big.Int
		SqrtPriceLimitX96 *big.Int
	}
	inner, err := ra.Pack("exactInputSingle", params{usdt, u.WETH9, big.NewInt(500), signer.DevAddress, amount, big.NewInt(1), big.NewInt(0)})
	require.NoError(t, err)
	multicall, err := packMulticall(ra, big.NewInt(time.Now().Add(time.Hour).Unix()), inner)
	require.NoError(t, err)
	calls := []map[string]any{
		{"to": usdt.Hex(), "data": "0x" + common.Bytes2Hex(chain.ApproveData(u.SwapRouter02, amount))},
		{"to": u.SwapRouter02.Hex(), "data": "0x" + common.Bytes2Hex(multicall)},
	}
	usdtBefore, wethBefore := e.balanceOf(usdt, signer.DevAddress), e.balanceOf(u.WETH9, signer.DevAddress)
	var p callPreviewOut
	e.ok("wallet_call", mustJSON(map[string]any{"calls": calls}), &p)
	require.Equal(t, "confirmation_required", p.Status)
	require.Equal(t, "erc20", p.Preview.Calls[0].Decoded.Source)
	require.Equal(t, "abi", p.Preview.Calls[1].Decoded.Source)
	require.Contains(t, p.Preview.Changes.Summary, "−10 USDT")
	require.Contains(t, p.Preview.Changes.Summary, "WETH")
	var wethIn string
	for _, m := range p.Preview.Changes.Moves {
		if m.Direction == "in" && m.Symbol == "WETH" {
			wethIn = m.Raw
		}
	}
	require.NotEmpty(t, wethIn, "the preview shows the WETH coming in")

	var out confirmOut
	text := e.ok("wallet_call", mustJSON(map[string]any{"calls": calls, "confirm": p.ConfirmToken}), &out)
	require.Equal(t, "confirmed", out.Status, text)
	require.Equal(t, new(big.Int).Sub(usdtBefore, amount), e.balanceOf(usdt, signer.DevAddress))
	got := new(big.Int).Sub(e.balanceOf(u.WETH9, signer.DevAddress), wethBefore)
	require.Equal(t, wethIn, got.String(), "WETH arrived exactly as previewed")
	require.Zero(t, e.allowanceOf(usdt, u.SwapRouter02).Sign(), "the swap used the exact approval")
}

// packMulticall packs multicall(uint256 deadline, bytes[] data), the
// overload with a deadline.
func packMulticall(a abi.ABI, deadline *big.Int, inner []byte) ([]byte, error) {
	for _, m := range a.Methods {
		if m.RawName == "multicall" && len(m.Inputs) == 2 && m.Inputs[0].Type.String() == "uint256" {
			args, err := m.Inputs.Pack(deadline, [][]byte{inner})
			if err != nil {
				return nil, err
			}
			return append(append([]byte{}, m.ID...), args...), nil
		}
	}
	return nil, os.ErrNotExist
}

// A drainer whose calldata asks for nothing: the preview shows what its
// simulation pulls, and the caps refuse it; nothing is signed.
func TestDrainerThroughWalletCallIsCaughtAtPreview(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	sink := addr("0x00000000000000000000000000000000000a1103")
	drainer, err := d.Deploy(context.Background(), "Drainer", sink)
	require.NoError(t, err)
	e := serverOn(t, d, func(deps *tools.Deps) {
		deps.Config.AllowCalls = policy.CallsAllowed{Rules: []policy.CallRule{{Contract: drainer}}}
	})
	j, _, err := testdata.Contract("Drainer")
	require.NoError(t, err)
	da, err := abi.JSON(strings.NewReader(j))
	require.NoError(t, err)
	claim, err := da.Pack("claim", d.Contracts.USDT)
	require.NoError(t, err)
	args := mustJSON(map[string]any{"calls": []map[string]any{{"to": drainer.Hex(), "data": "0x" + common.Bytes2Hex(claim)}}})

	e.approve(drainer, "5") // an earlier, forgotten approval
	var p callPreviewOut
	e.ok("wallet_call", args, &p)
	require.Contains(t, p.Preview.Changes.Summary, "−5 USDT", "the pull shows though the calldata names no amount")
	require.NotEmpty(t, p.Preview.Warnings)

	// An approval made outside walletgate, long ago.
	usdt := d.Contracts.USDT
	for _, v := range []int64{0, 200_000_000} {
		_, err := d.SendAsDev(context.Background(), &usdt, nil, chain.ApproveData(drainer, big.NewInt(v)), 200_000)
		require.NoError(t, err)
	}
	before := e.state()
	text := e.refused("wallet_call", args, "CAP_EXCEEDED")
	require.Contains(t, text, "200 USDT")
	require.Equal(t, before, e.state())
}

// Builder fields walletgate sets itself, targets the operator did not
// allow, and hex values are refused with what to do.
func TestWalletCallRefusals(t *testing.T) {
	e := callEnv(t)
	router := e.dev.Contracts.Uniswap.SwapRouter02.Hex()
	before := e.state()
	for _, tc := range []struct {
		name  string
		calls any
		code  string
		says  string
	}{
		{"gas from a builder", []map[string]any{{"to": router, "data": "0x", "gas": "0x5208"}}, "BAD_ARGUMENT", "walletgate sets the sender, gas"},
		{"from", []map[string]any{{"to": router, "data": "0x", "from": signer.DevAddress.Hex()}}, "BAD_ARGUMENT", "pass only to, data and value"},
		{"a target not allowed", []map[string]any{{"to": e.dev.Contracts.DAI.Hex(), "data": "0x095ea7b3"}}, tools.CodeCallNotAllowed, "WALLETGATE_ALLOW_CALLS"},
		{"an allowed contract, another function", []map[string]any{{"to": e.dev.Contracts.USDT.Hex(), "data": "0xa9059cbb"}}, tools.CodeCallNotAllowed, "0xa9059cbb"},
		{"hex wei value", []map[string]any{{"to": router, "data": "0x", "value": "0x10"}}, "BAD_AMOUNT", "decimal string"},
		{"odd hex", []map[string]any{{"to": router, "data": "0x123"}}, tools.CodeBadCall, "whole bytes"},
		{"empty list", []map[string]any{}, "BAD_ARGUMENT", "non-empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := e.refused("wallet_call", mustJSON(map[string]any{"calls": tc.calls}), tc.code)
			require.Contains(t, text, tc.says)
		})
	}
	require.Equal(t, before, e.state())
}
