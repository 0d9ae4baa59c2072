package tools_test

import (
	"context"
	"encoding/json"
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
)

// Tiered approval (WALLETGATE_HUMAN_ABOVE) against the dev chain: at or
// below the tier the model's token confirms, and the chain shows it; above
// it, or in an asset the tier does not name, nothing the model holds
// confirms, until the person approves; the journal says which path each
// write took.
func TestTieredApprovalAgainstTheChain(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	b := approval.NewBroker(nil, nil)
	dir := filepath.Join(t.TempDir(), "state")
	e := serverOn(t, d, withJournal(t, dir, "tiered", ""), func(deps *tools.Deps) {
		deps.Config.Confirm = "human"
		deps.Config.HumanAbove = []policy.CapEntry{{Asset: "ETH", Amount: "0.05"}, {Asset: "USDT", Amount: "20"}}
		deps.Approvals = b
	})
	to := addr("0x00000000000000000000000000000000000000f7")
	small := map[string]any{"to": to.Hex(), "amount": "5", "asset": "USDT"}
	large := map[string]any{"to": to.Hex(), "amount": "25", "asset": "USDT"}
	recv := e.balanceOf(d.Contracts.USDT, to)

	// At or below the tier: a token, as in token mode, and the model alone
	// completes the write.
	p := e.preview("wallet_send", small)
	res := e.call("wallet_send", mustJSON(small))
	require.Contains(t, resultText(res), "A TOKEN SUFFICES for this write, no person is asked: it spends at most ")
	require.Contains(t, resultText(res), "5 USDT ≤ 20 USDT")
	raw, _ := json.Marshal(res.StructuredContent)
	require.NotContains(t, string(raw), `"approval"`, "no person is asked")
	var out confirmOut
	e.ok("wallet_send", mustJSON(with(small, p.ConfirmToken)), &out)
	require.Equal(t, "confirmed", out.Status)
	recv.Add(recv, big.NewInt(5_000_000))
	require.Equal(t, recv, e.balanceOf(d.Contracts.USDT, to), "the chain shows the token-confirmed send")
	require.Empty(t, b.List(), "the person was never asked")

	// Above it: no token reaches the model, and nothing it holds confirms.
	before := e.state()
	hp, text := e.humanPreview(large)
	require.Contains(t, text, "A PERSON MUST APPROVE this write: it spends up to 25 USDT, above the 20 USDT set by WALLETGATE_HUMAN_ABOVE.")
	v, _ := b.Get(hp.Approval.ID)
	require.Equal(t, "A PERSON MUST APPROVE this write: it spends up to 25 USDT, above the 20 USDT set by WALLETGATE_HUMAN_ABOVE.", v.Display.Why, "the person sees why they are asked")
	for _, guess := range []string{p.ConfirmToken, "wgc_" + strings.Repeat("a", 32), hp.Approval.ID, "123-456"} {
		got := resultText(e.call("wallet_send", mustJSON(with(large, guess))))
		require.Regexp(t, `^(TOKEN_USED|TOKEN_UNKNOWN|CODE_UNKNOWN|APPROVAL_PENDING): `, got, "guess %q", guess)
	}
	require.Equal(t, before, e.state(), "above the tier the model alone moves nothing")
	code, _, err := b.Approve(hp.Approval.ID)
	require.NoError(t, err)
	e.ok("wallet_send", mustJSON(with(large, code)), &out)
	require.Equal(t, "confirmed", out.Status)
	recv.Add(recv, big.NewInt(25_000_000))
	require.Equal(t, recv, e.balanceOf(d.Contracts.USDT, to), "the person's approval sends it")

	// An asset the tier does not name needs the person, however small.
	_, text = e.humanPreview(map[string]any{"to": to.Hex(), "amount": "0.01", "asset": "DAI"})
	require.Contains(t, text, "A PERSON MUST APPROVE this write: it spends DAI, an asset WALLETGATE_HUMAN_ABOVE does not name.")

	// wallet_policy shows the tier.
	var pol struct {
		HumanAbove []map[string]string `json:"human_above"`
	}
	policyText := e.ok("wallet_policy", `{}`, &pol)
	require.Len(t, pol.HumanAbove, 2)
	require.Equal(t, map[string]string{"asset": "ETH", "symbol": "ETH", "limit": "0.05"}, pol.HumanAbove[0])
	require.Equal(t, "20", pol.HumanAbove[1]["limit"])
	require.Contains(t, policyText, "A token suffices for a write that spends at most 0.05 ETH, 20 USDT")

	// The journal records which path each preview took.
	var paths []string
	for _, r := range records(t, dir) {
		if r.Kind == tools.KindPreview {
			var rec map[string]any
			require.NoError(t, json.Unmarshal(r.Data, &rec))
			paths = append(paths, rec["confirm_by"].(string))
		}
	}
	require.Equal(t, []string{"token", "token", "person", "person"}, paths)
}
