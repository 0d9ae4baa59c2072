package tools_test

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
	"github.com/walletgate/walletgate/tools/confirm"
)

// humanPreview is a human-mode preview's structured result.
type humanPreview struct {
	Status       string  `json:"status"`
	ConfirmToken *string `json:"confirm_token"`
	Approval     *struct {
		ID, Mode, How string
	} `json:"approval"`
	Preview struct {
		AmountBase string `json:"amount_base"`
	} `json:"preview"`
}

// humanEnv is a server in human mode whose broker the test holds, as the
// page and the terminal do.
func humanEnv(t *testing.T, d *devnet.Devnet) (*env, *approval.Broker) {
	t.Helper()
	hub := confirm.NewApprovals(nil, "")
	b := hub.Broker()
	e := serverOn(t, d, func(deps *tools.Deps) {
		deps.Config.Confirm = "human"
		deps.Approvals = hub
	})
	return e, b
}

func (e *env) humanPreview(args map[string]any) (humanPreview, string) {
	e.t.Helper()
	res := e.call("wallet_send", mustJSON(args))
	text := resultText(res)
	require.False(e.t, res.IsError, text)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(e.t, err)
	var p humanPreview
	require.NoError(e.t, json.Unmarshal(raw, &p))
	require.Equal(e.t, "confirmation_required", p.Status)
	require.Nil(e.t, p.ConfirmToken, "a human-mode preview carries no token")
	require.NotContains(e.t, string(raw)+text, "wgc_", "no token anywhere in what the model gets")
	require.NotNil(e.t, p.Approval)
	require.Equal(e.t, "human", p.Approval.Mode)
	require.Contains(e.t, text, "preview "+p.Approval.ID)
	return p, text
}

func TestHumanModeOnlyThePersonsCodeConfirms(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	e, b := humanEnv(t, d)
	to := addr("0x00000000000000000000000000000000000000f1")
	args := map[string]any{"to": to.Hex(), "amount": "3.5", "asset": "USDT"}
	before := e.state()
	recv := e.balanceOf(d.Contracts.USDT, to)

	p, text := e.humanPreview(args)
	v, ok := b.Get(p.Approval.ID)
	require.True(t, ok, "the preview is listed for the person")
	require.Equal(t, approval.Pending, v.State)
	require.Contains(t, text, v.Display.Text, "the person sees the facts the model was shown")
	require.Contains(t, v.Display.Text, "To:        "+to.Hex())
	for _, forModel := range []string{"call wallet_send again", "confirm", "PREVIEW", "Network:", "Expires:"} {
		require.NotContains(t, v.Display.Text, forModel, "what is addressed to the model, or said elsewhere on the page, stays out")
	}
	require.Equal(t, &approval.Party{Role: "Recipient", Address: to.Hex(), Kind: "an account without code",
		Checksum: "given in one case: there was no checksum to catch a typo, compare every character"}, v.Display.Party)
	require.Equal(t, approval.Amount{Label: "Send", Rounded: "3.5 USDT"}, v.Display.Amounts[0])
	require.Regexp(t, `^at most 0\.\d+ ETH$`, v.Display.FeeMax.Rounded)
	require.Contains(t, v.Display.CapsLeft, "USDT per transaction: 96.5 of 100 left")
	require.Regexp(t, `^Succeeds against block \d+\.$`, v.Display.Simulation)
	require.Equal(t, "local dev chain", v.Display.Marker)
	require.Nil(t, v.Outcome)

	// What a model alone can try: the preview's own fields, guesses, a
	// token-mode token. None is a code the person was shown.
	for _, guess := range []string{p.Approval.ID, "123-456", "000000", "wgc_" + strings.Repeat("a", 32), ""} {
		res := e.call("wallet_send", mustJSON(with(args, guess)))
		require.True(t, res.IsError, "guess %q", guess)
		got := resultText(res)
		require.True(t, strings.HasPrefix(got, approval.CodePending+": ") || strings.HasPrefix(got, approval.CodeUnknown+": "), got)
	}
	require.Equal(t, before, e.state(), "no guess signed, sent or reserved anything")

	code, _, err := b.Approve(p.Approval.ID)
	require.NoError(t, err)
	require.Regexp(t, `^\d{3}-\d{3}$`, code)

	var out confirmOut
	text = e.ok("wallet_send", mustJSON(with(args, strings.ReplaceAll(code, "-", ""))), &out)
	require.Equal(t, "confirmed", out.Status, text)
	require.Equal(t, new(big.Int).Add(recv, big.NewInt(3_500_000)), e.balanceOf(d.Contracts.USDT, to), "the chain shows the approved transfer")
	require.Equal(t, before.nonce+1, e.state().nonce)

	after := e.state()
	e.refused("wallet_send", mustJSON(with(args, code)), approval.CodeUsed)
	require.Equal(t, after, e.state(), "a used code moves nothing")
	v, _ = b.Get(p.Approval.ID)
	require.Equal(t, approval.Used, v.State)
	require.NotNil(t, v.Outcome, "the person is told how it ended")
	require.Equal(t, "confirmed", v.Outcome.Status)
	require.Equal(t, []string{out.TxHash}, v.Outcome.TxHashes)
	require.Equal(t, out.Block, v.Outcome.Block)
	require.Equal(t, []string{"3.5 USDT (" + d.Contracts.USDT.Hex() + ") from " + signer.DevAddress.Hex() + " to " + to.Hex()}, v.Outcome.Effects)
}

func TestHumanModeCodeIsBoundToTheApprovedArguments(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	e, b := humanEnv(t, d)
	to := addr("0x00000000000000000000000000000000000000f2")
	small := map[string]any{"to": to.Hex(), "amount": "1", "asset": "USDT"}
	large := map[string]any{"to": to.Hex(), "amount": "90", "asset": "USDT"}
	before := e.state()

	ps, _ := e.humanPreview(small)
	e.humanPreview(large)
	code, _, err := b.Approve(ps.Approval.ID)
	require.NoError(t, err)

	// The person approved 1 USDT; the model tries the code on 90.
	e.refused("wallet_send", mustJSON(with(large, code)), approval.CodeMismatch)
	// The mismatch spent the code: not even the approved call goes now.
	e.refused("wallet_send", mustJSON(with(small, code)), approval.CodeUsed)
	require.Equal(t, before, e.state(), "nothing moved")

	// Wrong codes against an approved preview: three and it is withdrawn.
	p2, _ := e.humanPreview(small)
	code2, _, err := b.Approve(p2.Approval.ID)
	require.NoError(t, err)
	wrong := "111-111"
	if code2 == wrong {
		wrong = "222-222"
	}
	e.refused("wallet_send", mustJSON(with(small, wrong)), approval.CodeWrong)
	e.refused("wallet_send", mustJSON(with(small, wrong)), approval.CodeWrong)
	text := e.refused("wallet_send", mustJSON(with(small, wrong)), approval.CodeWrong)
	require.Contains(t, text, "withdrawn")
	e.refused("wallet_send", mustJSON(with(small, code2)), approval.CodeWithdrawn)
	require.Equal(t, before, e.state(), "nothing moved")

	// A confirm whose arguments do not parse still spends the code.
	p3, _ := e.humanPreview(small)
	code3, _, err := b.Approve(p3.Approval.ID)
	require.NoError(t, err)
	e.refused("wallet_send", mustJSON(map[string]any{"to": to.Hex(), "amount": "1.0000001", "asset": "USDT", "confirm": code3}), "BAD_AMOUNT")
	e.refused("wallet_send", mustJSON(with(small, code3)), approval.CodeUsed)
	require.Equal(t, before, e.state(), "nothing moved")
}

func TestHumanModeRejectKillsThePreview(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	e, b := humanEnv(t, d)
	args := map[string]any{"to": addr("0x00000000000000000000000000000000000000f3").Hex(), "amount": "0.1", "asset": "ETH"}
	before := e.state()
	p, _ := e.humanPreview(args)
	require.Equal(t, 1, pendingConfirmations(e))
	require.NoError(t, b.Reject(p.Approval.ID))
	require.Equal(t, 0, pendingConfirmations(e), "rejecting revokes the token the preview held")
	e.refused("wallet_send", mustJSON(with(args, "123-456")), approval.CodeRejected)
	_, _, err = b.Approve(p.Approval.ID)
	require.Error(t, err, "a rejection cannot be turned into an approval")
	require.Equal(t, before, e.state())
}

func pendingConfirmations(e *env) int {
	var pol struct {
		Pending int `json:"pending_confirmations"`
	}
	e.ok("wallet_policy", `{}`, &pol)
	return pol.Pending
}

func TestHumanModeTellsTheModelHowItWorks(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	e, _ := humanEnv(t, d)
	list, err := e.mcp.ListTools(e.ctx, mcp.ListToolsRequest{})
	require.NoError(t, err)
	found := 0
	for _, tool := range list.Tools {
		if p, ok := tool.InputSchema.Properties["confirm"].(map[string]any); ok {
			require.Contains(t, p["description"], "one-time code", tool.Name)
			found++
		}
	}
	require.NotZero(t, found, "write tools are offered in human mode with a broker")

	// Without a broker (neither page nor socket started) writes stay off.
	off := serverOn(t, d, func(deps *tools.Deps) { deps.Config.Confirm = "human" })
	require.NotContains(t, off.listTools(), "wallet_send")
	var pol struct {
		WritesEnabled bool `json:"writes_enabled"`
	}
	off.ok("wallet_policy", `{}`, &pol)
	require.False(t, pol.WritesEnabled)
}

func TestConfirmationsAreSpentEvenWhenArgumentsDoNotParse(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	args := map[string]any{"to": addr("0x00000000000000000000000000000000000000f4").Hex(), "amount": "1", "asset": "USDT"}

	// Token mode: an undeclared argument beside a valid token.
	e := serverOn(t, d)
	p := e.preview("wallet_send", args)
	bad := with(args, p.ConfirmToken)
	bad["nonce"] = "7"
	text := e.refused("wallet_send", mustJSON(bad), "BAD_ARGUMENT")
	require.Contains(t, text, "Nothing was signed or sent. The confirmation token is spent")
	e.refused("wallet_send", mustJSON(with(args, p.ConfirmToken)), "TOKEN_USED")

	// Human mode: the same with the person's code; and a code as a number.
	h, b := humanEnv(t, d)
	before := h.state()
	// A code with a leading zero is no JSON number: approve until one is.
	var code, digits string
	for range 50 {
		hp, _ := h.humanPreview(args)
		code, _, err = b.Approve(hp.Approval.ID)
		require.NoError(t, err)
		if digits, _ = approval.ParseCode(code); digits[0] != '0' {
			break
		}
	}
	require.NotEqual(t, byte('0'), digits[0])
	asNumber := strings.Replace(mustJSON(with(args, "X")), `"X"`, digits, 1)
	text = h.refused("wallet_send", asNumber, "BAD_ARGUMENT")
	require.Contains(t, text, `like "123-456". Nothing was signed or sent.`)
	require.Contains(t, text, "Nothing was signed or sent.")
	bad = with(args, code)
	bad["value"] = "1"
	h.refused("wallet_send", mustJSON(bad), "BAD_ARGUMENT")
	h.refused("wallet_send", mustJSON(with(args, code)), approval.CodeUsed)
	require.Equal(t, before, h.state(), "nothing moved")
}
