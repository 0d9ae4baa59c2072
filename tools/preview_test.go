package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
	"github.com/walletgate/walletgate/tools/confirm"
)

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
	for _, c := range []struct {
		tool, args string
		amount     func(pv map[string]any) approval.Amount
		title      func(pv map[string]any) string
	}{
		{"wallet_send", `{"to":"` + spender + `","amount":"2.5","asset":"USDT"}`,
			func(pv map[string]any) approval.Amount { return approval.Amount{Label: "Send", Rounded: "2.5 USDT"} },
			func(pv map[string]any) string { return "Send 2.5 USDT to 0x0000…00e7" }},
		{"wallet_approve", `{"token":"USDT","spender":"` + spender + `","amount":"7"}`,
			func(pv map[string]any) approval.Amount {
				return approval.Amount{Label: "Allowance for " + spender, Rounded: "0 → 7 USDT", Exact: "0 → 7 USDT (7000000 base units)"}
			},
			func(pv map[string]any) string { return pv["summary"].(string) }},
		{"wallet_call", `{"calls":[{"to":"` + d.Contracts.USDT.Hex() + `","data":"` + transfer + `"}]}`,
			func(pv map[string]any) approval.Amount {
				s := pv["changes"].(map[string]any)["summary"].(string)
				return approval.Amount{Label: "This will", Rounded: s, Exact: s}
			},
			func(pv map[string]any) string { return pv["summary"].(string) }},
	} {
		t.Run(c.tool, func(t *testing.T) {
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
			require.NotNil(t, page.FeeMax, "the page shows the most the fees can be")
			require.Equal(t, r.Preview["max_fee"].(string)+" ETH; the actual fee is usually lower", page.FeeMax.Exact, "the page's fee is the JSON's")
			require.Contains(t, text, r.Preview["max_fee"].(string)+" ETH", "the text's fee is the JSON's")
			require.True(t, strings.HasPrefix(text, "PREVIEW — nothing has been signed or sent.\nNetwork:   "), text)
			require.Contains(t, text, "Caps after this")
			require.Contains(t, text, page.Text, "the page's text is the model's, less what is addressed to the model")
			for _, w := range r.Preview["warnings"].([]any) {
				require.Contains(t, page.Warnings, w, "every warning reaches the page")
			}
		})
	}
}
