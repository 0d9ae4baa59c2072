package tools_test

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/tools"
	"github.com/walletgate/walletgate/tools/confirm"
)

// modernCall sends tools/call as a 2026-07-28 client does (its version and
// capabilities in _meta, no server-sent requests), with the retry fields in
// extra, and returns the raw result.
func (e *env) modernCall(tool string, args map[string]any, caps map[string]any, extra map[string]any) map[string]any {
	e.t.Helper()
	params := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
	}}
	for k, v := range extra {
		params[k] = v
	}
	resp, err := e.mcp.GetTransport().SendRequest(e.ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(1 << 41)), Method: "tools/call", Params: params})
	require.NoError(e.t, err)
	require.Nil(e.t, resp.Error)
	var out map[string]any
	require.NoError(e.t, json.Unmarshal(resp.Result, &out))
	require.NotContains(e.t, string(resp.Result), "InputRequests", "no advice for server developers reaches a client")
	return out
}

// retry is a retried call's fields: the answer under walletgate's key and the state.
func retry(state string, action string, content any) map[string]any {
	answer := map[string]any{"action": action}
	if content != nil {
		answer["content"] = content
	}
	return map[string]any{"requestState": state, "inputResponses": map[string]any{"approve": answer}}
}

func refusedRaw(t *testing.T, res map[string]any, code string) string {
	t.Helper()
	require.Equal(t, true, res["isError"], "%v", res)
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	require.True(t, strings.HasPrefix(text, code+": "), "want %s, got %s", code, text)
	return text
}

// In protocol 2026-07-28 elicit mode asks through the confirm's answer
// (input_required) and judges the answer its retry carries; the answer only
// counts with the state walletgate issued for exactly that call, once. A
// forged, misdirected or replayed answer is refused ANSWER_UNKNOWN and
// changes nothing; the preview stays confirmable.
func TestElicitModeAsksThroughTheAnswerIn20260728(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	e := elicitEnv(t, d, nil) // no handler: nothing may be sent to the client
	to := addr("0x00000000000000000000000000000000000000e2")
	args := map[string]any{"to": to.Hex(), "amount": "2", "asset": "USDT"}
	form := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	yes := map[string]any{"approve": true}

	tok := e.preview("wallet_send", args).ConfirmToken
	before := e.state()
	ask := func() string {
		t.Helper()
		res := e.modernCall("wallet_send", with(args, tok), form, nil)
		require.Equal(t, "input_required", res["resultType"], "%v", res)
		q := res["inputRequests"].(map[string]any)["approve"].(map[string]any)
		require.Equal(t, "elicitation/create", q["method"])
		msg := q["params"].(map[string]any)["message"].(string)
		require.Contains(t, msg, "send 2 USDT")
		require.Contains(t, msg, to.Hex())
		state, _ := res["requestState"].(string)
		require.NotEmpty(t, state)
		require.Equal(t, before, e.state(), "asking spends nothing")
		return state
	}
	state := ask()

	t.Run("a forged state", func(t *testing.T) {
		refusedRaw(t, e.modernCall("wallet_send", with(args, tok), form, retry("wgask_"+strings.Repeat("a", 32), "accept", yes)), "ANSWER_UNKNOWN")
		refusedRaw(t, e.modernCall("wallet_send", with(args, tok), form, map[string]any{"inputResponses": map[string]any{"approve": map[string]any{"action": "accept", "content": yes}}}), "ANSWER_UNKNOWN")
		require.Equal(t, before, e.state())
	})
	t.Run("the state of another call", func(t *testing.T) {
		other := map[string]any{"to": to.Hex(), "amount": "3", "asset": "USDT"}
		text := refusedRaw(t, e.modernCall("wallet_send", with(other, tok), form, retry(state, "accept", yes)), "ANSWER_UNKNOWN")
		require.Contains(t, text, "Nothing was signed or sent")
		require.Equal(t, before, e.state())
	})

	state = ask() // the misdirected retry spent the first question
	res := e.modernCall("wallet_send", with(args, tok), form, retry(state, "accept", yes))
	require.Nil(t, res["isError"], "%v", res)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"])
	require.NoError(t, e.schemas.Check("wallet_send", res["structuredContent"], false))
	require.Equal(t, big.NewInt(2_000_000), e.balanceOf(d.Contracts.USDT, to))

	t.Run("a replayed answer", func(t *testing.T) {
		after := e.state()
		refusedRaw(t, e.modernCall("wallet_send", with(args, tok), form, retry(state, "accept", yes)), "ANSWER_UNKNOWN")
		require.Equal(t, after, e.state())
		require.Equal(t, big.NewInt(2_000_000), e.balanceOf(d.Contracts.USDT, to), "sent once")
	})

	t.Run("a decline spends the token", func(t *testing.T) {
		tok = e.preview("wallet_send", args).ConfirmToken
		before = e.state()
		refusedRaw(t, e.modernCall("wallet_send", with(args, tok), form, retry(ask(), "decline", nil)), "HUMAN_DECLINED")
		refusedRaw(t, e.modernCall("wallet_send", with(args, tok), form, nil), "TOKEN_USED")
		require.Equal(t, before, e.state())
	})

	t.Run("a client without elicitation", func(t *testing.T) {
		tok = e.preview("wallet_send", args).ConfirmToken
		text := refusedRaw(t, e.modernCall("wallet_send", with(args, tok), map[string]any{}, nil), "ELICITATION_UNAVAILABLE")
		require.Contains(t, text, "WALLETGATE_CONFIRM=token")
		require.Equal(t, big.NewInt(2_000_000), e.balanceOf(d.Contracts.USDT, to))
	})
}

// In protocol 2026-07-28 a human-mode confirm with the preview's id asks the
// client, through the confirm's answer, to open that preview's approval page,
// and its retry waits for the person's decision there. The retry counts only
// with the state walletgate issued for exactly that call, once.
func TestURLApprovalAsksThroughTheAnswerIn20260728(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	hub := confirm.NewApprovals(nil, "")
	b := hub.Broker()
	const page = "http://127.0.0.1:1/a/" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/"
	e := serverOn(t, d, func(deps *tools.Deps) {
		deps.Config.Confirm = "human"
		deps.Approvals, deps.ApprovalPage = hub, page
	})
	to := addr("0x00000000000000000000000000000000000000e3")
	args := map[string]any{"to": to.Hex(), "amount": "1.75", "asset": "USDT"}
	urlCaps := map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}

	p, _ := e.humanPreview(args)
	id := p.Approval.ID
	before := e.state()
	ask := func() string {
		t.Helper()
		res := e.modernCall("wallet_send", with(args, id), urlCaps, nil)
		require.Equal(t, "input_required", res["resultType"], "%v", res)
		q := res["inputRequests"].(map[string]any)["approve"].(map[string]any)
		require.Equal(t, "elicitation/create", q["method"])
		params := q["params"].(map[string]any)
		require.Equal(t, "url", params["mode"])
		require.Equal(t, page+"p/"+id, params["url"], "the page of exactly this preview")
		v, _ := b.Get(id)
		require.Equal(t, approval.Pending, v.State, "asking decides nothing")
		require.Equal(t, before, e.state())
		return res["requestState"].(string)
	}

	state := ask()
	refusedRaw(t, e.modernCall("wallet_send", with(args, id), urlCaps, retry(state, "decline", nil)), "HUMAN_DECLINED")
	refusedRaw(t, e.modernCall("wallet_send", with(args, id), urlCaps, retry("wgask_"+strings.Repeat("b", 32), "accept", nil)), "ANSWER_UNKNOWN")
	v, _ := b.Get(id)
	require.Equal(t, approval.Pending, v.State, "the preview still waits for the person")
	require.Equal(t, before, e.state())

	state = ask()
	_, _, err = b.Approve(id) // the person, on the page the client opened
	require.NoError(t, err)
	res := e.modernCall("wallet_send", with(args, id), urlCaps, retry(state, "accept", nil))
	require.Nil(t, res["isError"], "%v", res)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"])
	require.NoError(t, e.schemas.Check("wallet_send", res["structuredContent"], false))
	require.Equal(t, big.NewInt(1_750_000), e.balanceOf(d.Contracts.USDT, to))

	after := e.state()
	refusedRaw(t, e.modernCall("wallet_send", with(args, id), urlCaps, retry(state, "accept", nil)), "ANSWER_UNKNOWN")
	require.Equal(t, after, e.state(), "a replayed answer moves nothing")
}
