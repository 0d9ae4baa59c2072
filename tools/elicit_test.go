package tools_test

import (
	"context"
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/tools"
)

// person answers elicitation requests as a scripted human would, and keeps
// what they were shown.
type person struct {
	mu     sync.Mutex
	answer *mcp.ElicitationResult
	asked  []string
}

func (p *person) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req.Params.Message)
	return p.answer, nil
}

func elicitEnv(t *testing.T, d *devnet.Devnet, h *person) *env {
	t.Helper()
	var opts []client.ClientOption
	if h != nil {
		opts = append(opts, client.WithElicitationHandler(h))
	}
	return serverWithClient(t, d, opts, func(deps *tools.Deps) { deps.Config.Confirm = "elicit" })
}

func answer(action mcp.ElicitationResponseAction, content any) *mcp.ElicitationResult {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action, Content: content}}
}

func TestElicitModeNeedsAnExplicitYes(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	to := addr("0x00000000000000000000000000000000000000e1")
	args := map[string]any{"to": to.Hex(), "amount": "4", "asset": "USDT"}

	refusals := []struct {
		name   string
		answer *mcp.ElicitationResult
	}{
		{"decline", answer(mcp.ElicitationResponseActionDecline, nil)},
		{"cancel", answer(mcp.ElicitationResponseActionCancel, nil)},
		{"accept but approve false", answer(mcp.ElicitationResponseActionAccept, map[string]any{"approve": false})},
		{"accept with a string", answer(mcp.ElicitationResponseActionAccept, map[string]any{"approve": "true"})},
		{"accept with no content", answer(mcp.ElicitationResponseActionAccept, nil)},
		{"accept with extra fields", answer(mcp.ElicitationResponseActionAccept, map[string]any{"approve": true, "to": "0x0"})},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			h := &person{answer: c.answer}
			e := elicitEnv(t, d, h)
			tok := e.preview("wallet_send", args).ConfirmToken
			before := e.state()
			e.refused("wallet_send", mustJSON(with(args, tok)), "HUMAN_DECLINED")
			require.Equal(t, before, e.state(), "nothing signed, sent or counted")
			require.Len(t, h.asked, 1)
		})
	}

	t.Run("accept and approve", func(t *testing.T) {
		h := &person{answer: answer(mcp.ElicitationResponseActionAccept, map[string]any{"approve": true})}
		e := elicitEnv(t, d, h)
		tok := e.preview("wallet_send", args).ConfirmToken
		var out confirmOut
		e.ok("wallet_send", mustJSON(with(args, tok)), &out)
		require.Equal(t, "confirmed", out.Status)
		require.Equal(t, big.NewInt(4_000_000), e.balanceOf(d.Contracts.USDT, to))
		require.Len(t, h.asked, 1)
		// The person saw the same preview the model did.
		require.Contains(t, h.asked[0], "PREVIEW — nothing has been signed or sent.")
		require.Contains(t, h.asked[0], "send 4 USDT")
		require.Contains(t, h.asked[0], to.Hex())
		require.True(t, strings.Contains(h.asked[0], "Local dev chain"))
	})

	t.Run("a client without elicitation is refused, not waved through", func(t *testing.T) {
		e := elicitEnv(t, d, nil)
		tok := e.preview("wallet_send", args).ConfirmToken
		before := e.state()
		text := e.refused("wallet_send", mustJSON(with(args, tok)), "ELICITATION_UNAVAILABLE")
		require.Contains(t, text, "WALLETGATE_CONFIRM=token")
		require.Equal(t, before, e.state())
	})
}
