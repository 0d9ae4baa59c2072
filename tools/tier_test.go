package tools_test

import (
	"context"
	"encoding/json"
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
	"github.com/walletgate/walletgate/tools/confirm"
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
	hub := confirm.NewApprovals(nil, "")
	b := hub.Broker()
	dir := filepath.Join(t.TempDir(), "state")
	e := serverOn(t, d, withJournal(t, dir, "tiered", ""), func(deps *tools.Deps) {
		deps.Config.Confirm = "human"
		deps.Config.HumanAbove = []policy.CapEntry{{Asset: "ETH", Amount: "0.05"}, {Asset: "USDT", Amount: "20"}}
		deps.Approvals = hub
	})
	to := addr("0x00000000000000000000000000000000000000f7")
	small := map[string]any{"to": to.Hex(), "amount": "5", "asset": "USDT"}
	large := map[string]any{"to": to.Hex(), "amount": "25", "asset": "USDT"}
	recv := e.balanceOf(d.Contracts.USDT, to)

	// At or below the tier: a token, as in token mode, and the model alone
	// completes the write.
	p := e.preview("wallet_send", small)
	res := e.call("wallet_send", mustJSON(small))
	require.Contains(t, resultText(res), "A TOKEN SUFFICES for this write, no person is asked: with what was confirmed without the person in the last 24 hours it spends at most ")
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
	for _, r := range journalRecords(t, dir) {
		if r.Kind == tools.KindPreview {
			var rec map[string]any
			require.NoError(t, json.Unmarshal(r.Data, &rec))
			paths = append(paths, rec["confirm_by"].(string))
		}
	}
	require.Equal(t, []string{"token", "token", "person", "person"}, paths)
}

// The threshold fails closed and holds over a rolling day: splitting a
// payment into sends each below it confirms only as much as the threshold
// allows in a day by token; two token previews confirmed one after the other
// cannot together pass it (the engine checks it again when it reserves);
// typed data of an unknown kind and a token no cap applies to always need
// the person.
func TestThresholdHoldsOverADayAndFailsClosed(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	hub := confirm.NewApprovals(nil, "")
	e := serverOn(t, d, withJournal(t, filepath.Join(t.TempDir(), "state"), "tiered", ""), func(deps *tools.Deps) {
		deps.Config.Confirm = "human"
		deps.Config.HumanAbove = []policy.CapEntry{{Asset: "ETH", Amount: "0.01"}}
		deps.Config.AllowTypedDataAny = true
		deps.Approvals = hub
	})
	to := addr("0x00000000000000000000000000000000000000f8")
	send := map[string]any{"to": to.Hex(), "amount": "0.004"}

	// Split into 0.004 ETH sends: two fit in the day's 0.01 by token (fees
	// count), the third needs the person.
	var out confirmOut
	for i := 0; i < 2; i++ {
		p := e.preview("wallet_send", send)
		require.NotEmpty(t, p.ConfirmToken, "send %d goes by token", i+1)
		e.ok("wallet_send", mustJSON(with(send, p.ConfirmToken)), &out)
		require.Equal(t, "confirmed", out.Status)
	}
	_, text := e.humanPreview(send)
	require.Contains(t, text, "A PERSON MUST APPROVE this write: it spends up to 0.004")
	require.Contains(t, text, "in the last 24 hours; together that is above the 0.01 ETH a day set by WALLETGATE_HUMAN_ABOVE")
	require.Equal(t, big.NewInt(8e15), e.ethOf(to), "the model alone moved 0.008 ETH, not more")
}

// Two token-tier previews issued before either is confirmed: each fits the
// day alone, together they do not. The second confirm is refused when it
// reserves, nothing of it signed.
func TestThresholdIsCheckedAgainWhenItReserves(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	e := serverOn(t, d, withJournal(t, filepath.Join(t.TempDir(), "state"), "tiered", ""), func(deps *tools.Deps) {
		deps.Config.Confirm = "human"
		deps.Config.HumanAbove = []policy.CapEntry{{Asset: "ETH", Amount: "0.01"}}
		deps.Approvals = confirm.NewApprovals(nil, "")
	})
	to := addr("0x00000000000000000000000000000000000000f9")
	a := map[string]any{"to": to.Hex(), "amount": "0.006"}
	bArgs := map[string]any{"to": to.Hex(), "amount": "0.0061"}
	pa, pb := e.preview("wallet_send", a), e.preview("wallet_send", bArgs)
	require.NotEmpty(t, pa.ConfirmToken)
	require.NotEmpty(t, pb.ConfirmToken)
	var out confirmOut
	e.ok("wallet_send", mustJSON(with(a, pa.ConfirmToken)), &out)
	require.Equal(t, "confirmed", out.Status)
	got := resultText(e.call("wallet_send", mustJSON(with(bArgs, pb.ConfirmToken))))
	require.True(t, strings.HasPrefix(got, "PERSON_REQUIRED: "), got)
	require.Contains(t, got, "Nothing was signed or sent")
	require.Equal(t, big.NewInt(6e15), e.ethOf(to), "only the first moved")
}

// Typed data of an unknown kind, and a token no cap applies to, are above
// every threshold: the person approves them, whatever they spend.
func TestWhatCannotBeBoundedNeedsThePerson(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	hub := confirm.NewApprovals(nil, "")
	e := serverOn(t, d, func(deps *tools.Deps) {
		deps.Config.Confirm = "human"
		deps.Config.HumanAbove = []policy.CapEntry{{Asset: "ETH", Amount: "1"}, {Asset: "DAI", Amount: "1000"}}
		deps.Config.AllowTypedDataAny = true
		deps.Config.AllowUncappedTokens = true
		deps.Config.CapPerTx = []policy.CapEntry{{Asset: "ETH", Amount: "1"}}
		deps.Config.CapPerSession = []policy.CapEntry{{Asset: "ETH", Amount: "1"}}
		deps.Config.CapPerDay = []policy.CapEntry{{Asset: "ETH", Amount: "1"}}
		deps.Approvals = hub
	})
	mail := map[string]any{
		"types":       map[string]any{"EIP712Domain": []map[string]string{{"name": "name", "type": "string"}, {"name": "chainId", "type": "uint256"}}, "Grant": []map[string]string{{"name": "operator", "type": "address"}, {"name": "approved", "type": "bool"}}},
		"primaryType": "Grant", "domain": map[string]any{"name": "Some Exchange", "chainId": "1337"}, "message": map[string]any{"operator": "0x00000000000000000000000000000000000000aa", "approved": true},
	}
	res := e.call("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": mail}))
	require.False(t, res.IsError, resultText(res))
	require.Contains(t, resultText(res), "A PERSON MUST APPROVE this write: walletgate cannot tell what typed data of an unknown kind allows")
	raw, _ := json.Marshal(res.StructuredContent)
	require.NotContains(t, string(raw), `"confirm_token":"wgc_`, "no token reaches the model")

	_, text := e.humanPreview(map[string]any{"to": addr("0x00000000000000000000000000000000000000fa").Hex(), "amount": "1", "asset": "DAI"})
	require.Contains(t, text, "A PERSON MUST APPROVE this write: no cap applies to DAI")
}
