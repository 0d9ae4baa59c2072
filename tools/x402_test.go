package tools_test

import (
	"encoding/base64"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

// requirement is an x402 v2 PAYMENT-REQUIRED object as @x402/core writes
// it, with one exact option per given network.
func (e *sigEnv) requirement(payTo common.Address, amount *big.Int, networks ...string) map[string]any {
	var accepts []any
	for _, n := range networks {
		accepts = append(accepts, map[string]any{"scheme": "exact", "network": n, "asset": e.tok.Hex(), "amount": amount.String(),
			"payTo": payTo.Hex(), "maxTimeoutSeconds": 300, "extra": map[string]any{"name": permitTokenName, "version": permitTokenVersion}})
	}
	return map[string]any{"x402Version": 2, "error": "Payment required",
		"resource": map[string]any{"url": "http://127.0.0.1:4021/weather", "description": "Weather", "mimeType": "application/json"},
		"accepts":  accepts}
}

type paidOut struct {
	Status           string          `json:"status"`
	Header           string          `json:"header"`
	PaymentSignature string          `json:"payment_signature"`
	PaymentPayload   json.RawMessage `json:"payment_payload"`
}

type x402Payload struct {
	X402Version int            `json:"x402Version"`
	Accepted    map[string]any `json:"accepted"`
	Resource    map[string]any `json:"resource"`
	Payload     struct {
		Signature     string `json:"signature"`
		Authorization struct {
			From, To, Value, ValidAfter, ValidBefore, Nonce string
		} `json:"authorization"`
	} `json:"payload"`
}

func (e *sigEnv) pay(req map[string]any) x402Payload {
	e.t.Helper()
	args := map[string]any{"payment_required": req}
	p := e.preview("wallet_pay_x402", args)
	var out paidOut
	e.ok("wallet_pay_x402", mustJSON(with(args, p.ConfirmToken)), &out)
	require.Equal(e.t, "signed", out.Status)
	require.Equal(e.t, "PAYMENT-SIGNATURE", out.Header)
	raw, err := base64.StdEncoding.DecodeString(out.PaymentSignature)
	require.NoError(e.t, err)
	require.JSONEq(e.t, string(out.PaymentPayload), string(raw), "the header is the payload's JSON, base64-encoded")
	var pl x402Payload
	require.NoError(e.t, json.Unmarshal(raw, &pl))
	return pl
}

// settle does what an x402 facilitator does with an exact EVM payload:
// transferWithAuthorization with its signature, from its own account.
func (e *sigEnv) settle(pl x402Payload) uint64 {
	e.t.Helper()
	a := pl.Payload.Authorization
	sig := hexutil.MustDecode(pl.Payload.Signature)
	var r, s, nonce [32]byte
	copy(r[:], sig[:32])
	copy(s[:], sig[32:64])
	copy(nonce[:], hexutil.MustDecode(a.Nonce))
	n := func(v string) *big.Int { b, ok := new(big.Int).SetString(v, 10); require.True(e.t, ok, v); return b }
	return e.submit("transferWithAuthorization", common.HexToAddress(a.From), common.HexToAddress(a.To), n(a.Value), n(a.ValidAfter), n(a.ValidBefore), nonce, sig[64], r, s)
}

func TestX402PaysExactlyThePriceAndTheSessionCapHolds(t *testing.T) {
	e := newSigEnv(t)
	payee := common.HexToAddress("0x00000000000000000000000000000000000000b1")
	price := usdc(45)
	req := e.requirement(payee, price, "eip155:8453", "eip155:1337")

	text := resultText(e.call("wallet_pay_x402", mustJSON(map[string]any{"payment_required": req})))
	require.Contains(t, text, "Pay 45 USDC")
	require.Contains(t, text, "Pay to:    "+payee.Hex())
	require.Contains(t, text, "http://127.0.0.1:4021/weather (as the paying server states it; host 127.0.0.1:4021)")

	pl := e.pay(req)
	require.Equal(t, 2, pl.X402Version)
	require.Equal(t, "eip155:1337", pl.Accepted["network"], "the option on the wallet's chain was taken")
	require.Equal(t, req["resource"], pl.Resource)
	require.Equal(t, signer.DevAddress.Hex(), pl.Payload.Authorization.From)
	require.Equal(t, price.String(), pl.Payload.Authorization.Value)

	require.Equal(t, uint64(1), e.settle(pl), "the token accepts the authorization")
	require.Equal(t, price, e.balance(payee), "the payee got exactly the price")
	require.Equal(t, uint64(0), e.settle(pl), "and it cannot be settled twice")

	// 45 of the session's 80 are used: a second payment of 45 is refused.
	e.refused("wallet_pay_x402", mustJSON(map[string]any{"payment_required": req}), "CAP_EXCEEDED")
	require.Equal(t, 1, e.signatureRecords())
}

func TestX402Refusals(t *testing.T) {
	e := newSigEnv(t, func(d *tools.Deps) {
		d.Config.AllowPayTo = policy.PayeesAllowed{Pins: []policy.HostPin{{Host: "127.0.0.1:4021", PayTo: common.HexToAddress("0x00000000000000000000000000000000000000b2")}}}
	})
	payee := common.HexToAddress("0x00000000000000000000000000000000000000b2")
	claimant := common.HexToAddress("0x00000000000000000000000000000000000000b3")
	otherChain := e.requirement(payee, usdc(1), "eip155:8453")
	uncapped := e.requirement(payee, usdc(1), "eip155:1337")
	uncapped["accepts"].([]any)[0].(map[string]any)["asset"] = "0x00000000000000000000000000000000000000c1"
	unknownScheme := e.requirement(payee, usdc(1), "eip155:1337")
	unknownScheme["accepts"].([]any)[0].(map[string]any)["scheme"] = "upto"
	permit2 := e.requirement(payee, usdc(1), "eip155:1337")
	permit2["accepts"].([]any)[0].(map[string]any)["extra"].(map[string]any)["assetTransferMethod"] = "permit2"
	v1 := e.requirement(payee, usdc(1), "eip155:1337")
	v1["x402Version"] = 1
	claimsPinnedHost := e.requirement(claimant, usdc(1), "eip155:1337")
	otherHost := e.requirement(claimant, usdc(1), "eip155:1337")
	otherHost["resource"].(map[string]any)["url"] = "https://evil.example/pay"
	tooMuch := e.requirement(payee, usdc(51), "eip155:1337")
	for _, tc := range []struct {
		name string
		req  map[string]any
		code string
	}{
		{"another chain", otherChain, tools.CodeX402NoOption},
		{"an uncapped asset", uncapped, tools.CodeX402NoOption},
		{"an unknown scheme", unknownScheme, tools.CodeX402NoOption},
		{"Permit2", permit2, tools.CodeX402NoOption},
		{"x402 v1", v1, tools.CodeX402Invalid},
		{"another payee for a pinned host", claimsPinnedHost, tools.CodeX402PayeeNotOK},
		{"a payee not allowed, for another host", otherHost, tools.CodeX402PayeeNotOK},
		{"over the per-payment cap", tooMuch, "CAP_EXCEEDED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.refused("wallet_pay_x402", mustJSON(map[string]any{"payment_required": tc.req}), tc.code)
		})
	}
	require.Zero(t, e.signatureRecords())
}
