package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
	"github.com/walletgate/walletgate/tools/confirm"
)

// renderCase is one write kind's preview, and what its page must show of
// its JSON.
type renderCase struct {
	tool, args string
	amount     func(pv map[string]any) approval.Amount
	title      func(pv map[string]any) string
	headline   string // the text's first line: what has not happened yet
	fees       bool   // a transaction: the page and the text show the most the fees can be
}

// TestOnePreviewValueThreeRenderings: for each write kind rendered by the
// shared code, the model's JSON, its text and the person's page state the
// same facts (the fee, what is asked, the title), and the text's frame is
// the one every kind shares.
func TestOnePreviewValueThreeRenderings(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	hub := confirm.NewApprovals(nil, "")
	b := hub.Broker()
	e := serverOn(t, d, func(deps *tools.Deps) {
		deps.Config.Confirm = "human"
		deps.Approvals = hub
		deps.Config.AllowCalls = policy.CallsAllowed{Rules: []policy.CallRule{{Contract: d.Contracts.USDT}}}
	})
	spender := addr("0x00000000000000000000000000000000000000e7").Hex()
	transfer := "0xa9059cbb" + strings.Repeat("0", 24) + strings.Repeat("e7", 20) + strings.Repeat("0", 58) + "4c4b40" // 5 USDT
	const sent = "PREVIEW — nothing has been signed or sent.\n"
	for _, c := range []renderCase{
		{"wallet_send", `{"to":"` + spender + `","amount":"2.5","asset":"USDT"}`,
			func(pv map[string]any) approval.Amount { return approval.Amount{Label: "Send", Rounded: "2.5 USDT"} },
			func(pv map[string]any) string { return "Send 2.5 USDT to 0x0000…00e7" }, sent, true},
		{"wallet_approve", `{"token":"USDT","spender":"` + spender + `","amount":"7"}`,
			func(pv map[string]any) approval.Amount {
				return approval.Amount{Label: "Allowance for " + spender, Rounded: "0 → 7 USDT", Exact: "0 → 7 USDT (7000000 base units)"}
			},
			func(pv map[string]any) string { return pv["summary"].(string) }, sent, true},
		{"wallet_call", `{"calls":[{"to":"` + d.Contracts.USDT.Hex() + `","data":"` + transfer + `"}]}`,
			func(pv map[string]any) approval.Amount {
				s := pv["changes"].(map[string]any)["summary"].(string)
				return approval.Amount{Label: "This will", Rounded: s, Exact: s}
			},
			func(pv map[string]any) string { return pv["summary"].(string) }, sent, true},
	} {
		t.Run(c.tool, func(t *testing.T) { checkRenderings(t, e, b, c) })
	}

	// The signatures: no transaction, so no fee; what is signed away is
	// the JSON's amount, counterparty and validity.
	shub := confirm.NewApprovals(nil, "")
	se := newSigEnv(t, func(deps *tools.Deps) {
		deps.Config.AllowTypedDataAny, deps.Config.Confirm, deps.Approvals = true, "human", shub
	})
	payee := addr("0x00000000000000000000000000000000000000b1")
	token := func(pv map[string]any) string {
		return "USDC (UNVERIFIED token " + pv["token"].(map[string]any)["address"].(string) + ")"
	}
	mail := map[string]any{
		"types":       map[string]any{"EIP712Domain": domainTypes(), "Mail": []map[string]string{{"name": "contents", "type": "string"}}},
		"primaryType": "Mail", "domain": se.domain(signer.DevChainID), "message": map[string]any{"contents": "hello"},
	}
	summary := func(pv map[string]any) string { return pv["summary"].(string) }
	for _, c := range []renderCase{
		{"wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": se.permit(signer.DevAddress, addr(spender), usdc(7), 0, time.Now().Add(time.Hour))}),
			func(pv map[string]any) approval.Amount {
				s := pv["amount"].(string) + " " + token(pv) + " to " + pv["counterparty"].(string) + " until " + pv["valid_until"].(string)
				return approval.Amount{Label: "Signs away", Rounded: s, Exact: s}
			}, summary, "PREVIEW — nothing has been signed.\n", false},
		{"wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": mail}),
			func(pv map[string]any) approval.Amount {
				s := "NO CAP APPLIES: unknown typed data"
				return approval.Amount{Label: "Signs", Rounded: s, Exact: s}
			}, summary, "PREVIEW — nothing has been signed.\n", false},
		{"wallet_pay_x402", mustJSON(map[string]any{"payment_required": se.requirement(payee, usdc(3), "eip155:8453", "eip155:1337")}),
			func(pv map[string]any) approval.Amount {
				s := pv["amount"].(string) + " " + token(pv) + " to " + pv["pay_to"].(string) + ", for " + pv["resource"].(string) + " (as the paying server states it)"
				return approval.Amount{Label: "Pay", Rounded: s, Exact: s}
			}, summary, "PREVIEW — nothing has been signed or paid.\n", false},
	} {
		t.Run(c.tool, func(t *testing.T) { checkRenderings(t, se.env, shub.Broker(), c) })
	}
}

// checkRenderings previews c and compares its JSON, text and page.
func checkRenderings(t *testing.T, e *env, b *approval.Broker, c renderCase) {
	res := e.call(c.tool, c.args)
	text := resultText(res)
	require.False(t, res.IsError, text)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var r struct {
		Preview  map[string]any `json:"preview"`
		Approval struct {
			ID string `json:"id"`
		} `json:"approval"`
	}
	require.NoError(t, json.Unmarshal(raw, &r))
	v, ok := b.Get(r.Approval.ID)
	require.True(t, ok)
	page := v.Display

	require.Equal(t, c.title(r.Preview), page.Title)
	require.Equal(t, c.amount(r.Preview), page.Amounts[0])
	if c.fees {
		require.NotNil(t, page.FeeMax, "the page shows the most the fees can be")
		require.Equal(t, r.Preview["max_fee"].(string)+" ETH; the actual fee is usually lower", page.FeeMax.Exact, "the page's fee is the JSON's")
		require.Contains(t, text, r.Preview["max_fee"].(string)+" ETH", "the text's fee is the JSON's")
	} else {
		require.Nil(t, page.FeeMax, "no transaction, no fee")
		require.NotContains(t, r.Preview, "max_fee")
	}
	if base, ok := r.Preview["amount_base"].(string); ok && !c.fees {
		require.Contains(t, text, "("+base+" base units)", "a signature's text states the JSON's amount exactly")
	}
	require.True(t, strings.HasPrefix(text, c.headline+"Network:   "), text)
	require.Contains(t, text, "Caps after this")
	require.Contains(t, text, page.Text, "the page's text is the model's, less what is addressed to the model")
	for _, w := range r.Preview["warnings"].([]any) {
		require.Contains(t, page.Warnings, w, "every warning reaches the page")
	}
}
