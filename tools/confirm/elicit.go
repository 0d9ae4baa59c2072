package confirm

// Confirmation mode "elicit": a confirm proceeds only after the person says
// yes through MCP elicitation (form mode), asked by the server directly, so
// the model cannot answer for them. Rules: the client must have declared the
// elicitation capability (mcp-go does not check; we do, and refuse rather than
// fall back to token mode); anything but an explicit accept carrying
// {"approve": true} refuses (mcp-go does not validate the answer's shape; we
// do); the question carries the same preview text the model was shown. In
// protocol 2026-07-28 the question travels in the confirm's answer and the
// person's answer in its retry (roundtrip.go); before it, walletgate sends
// elicitation/create.

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/walletgate/walletgate/engine"
)

// Refusal codes of elicit mode.
const (
	CodeElicitationUnavailable = "ELICITATION_UNAVAILABLE"
	CodeHumanDeclined          = "HUMAN_DECLINED"
)

// approvalSchema is the form the person answers: one required boolean.
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{
			"type":        "boolean",
			"title":       "Approve this transaction",
			"description": "Yes only if you checked the network, the recipient, the asset and the amount above.",
		},
	},
	"required": []string{"approve"},
}

// formQuestion is what the person is asked about plan p.
func formQuestion(p *engine.Plan) mcp.ElicitationParams {
	text := p.Text()
	if text == "" {
		text = "(the preview is not available)"
	}
	return mcp.ElicitationParams{
		Message:         "walletgate asks you to approve a transaction.\n\n" + text + "\n\nApprove it?",
		RequestedSchema: approvalSchema,
	}
}

// elicitMode asks the person through MCP elicitation, after the token was
// consumed; in 2026-07-28 it judges the answer the retried call carried.
type elicitMode struct {
	m        *Mode
	answered bool
	answer   *mcp.ElicitationResult
}

// Redeem returns the token as it came; a retried call's answer must be one
// walletgate asked for with exactly this call, or nothing is spent.
func (m *elicitMode) Redeem(ctx context.Context, confirm, tool string, canonical []byte) (string, *Refusal) {
	if !answering(ctx) {
		return confirm, nil
	}
	res, ref := m.m.takeAnswer(ctx, askForm, confirm, tool, canonical)
	if ref != nil {
		return "", ref
	}
	m.answered, m.answer = true, res
	return confirm, nil
}

// Ask asks the person to approve the previewed plan. It approves only an
// explicit accept with approve == true.
func (m *elicitMode) Ask(ctx context.Context, p *engine.Plan) engine.Approval {
	if m.answered {
		return judgeApproval(m.answer)
	}
	if !canElicitForm(ctx) {
		return engine.Deny(refuse(CodeElicitationUnavailable, "walletgate is set to ask the person through MCP elicitation (WALLETGATE_CONFIRM=elicit), but this client did not declare that it supports elicitation. Nothing was signed or sent. The operator should use a client that supports elicitation, or set WALLETGATE_CONFIRM=token for this one."))
	}
	ms := server.ServerFromContext(ctx)
	if ms == nil || modern(ctx) {
		// A 2026-07-28 confirm is asked before its token is spent
		// (askFirst); reaching here means the question could not be put.
		return engine.Deny(refuse(CodeElicitationUnavailable, "walletgate could not put the approval question to the person through this client. Nothing was signed or sent, and this confirmation is spent. %s", askAgain(p.Tool)))
	}
	res, err := ms.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  formQuestion(p),
	})
	if err != nil {
		return engine.Deny(refuse(CodeElicitationUnavailable, "the approval request to the person failed (%s). Nothing was signed or sent, and this confirmation is spent. %s", elicitFailure(err), askAgain(p.Tool)))
	}
	return judgeApproval(res)
}

// judgeApproval approves only an explicit accept carrying {"approve": true}.
func judgeApproval(res *mcp.ElicitationResult) engine.Approval {
	if res == nil {
		return engine.Deny(refuse(CodeHumanDeclined, "the client sent no answer from the person to the approval question. Nothing was signed or sent."))
	}
	switch res.Action {
	case mcp.ElicitationResponseActionAccept:
		content, ok := res.Content.(map[string]any)
		if !ok || len(content) != 1 {
			return engine.Deny(refuse(CodeHumanDeclined, "the approval answer was not the expected form ({\"approve\": true or false}). Nothing was signed or sent."))
		}
		if approve, ok := content["approve"].(bool); ok && approve {
			return engine.Approve()
		}
		return engine.Deny(refuse(CodeHumanDeclined, "the person did not approve the transaction. Nothing was signed or sent."))
	case mcp.ElicitationResponseActionDecline:
		return engine.Deny(refuse(CodeHumanDeclined, "the person declined the transaction. Nothing was signed or sent."))
	case mcp.ElicitationResponseActionCancel:
		return engine.Deny(refuse(CodeHumanDeclined, "the person dismissed the approval request without approving. Nothing was signed or sent."))
	}
	return engine.Deny(refuse(CodeHumanDeclined, "the approval answer %s is not an approval. Nothing was signed or sent.", engine.Quote(fmt.Sprint(res.Action))))
}

// askAgain is what to do after the question could not be put.
func askAgain(tool string) string {
	if tool == "" {
		tool = "the tool"
	}
	return "To try again, call " + tool + " without \"confirm\" for a new preview and confirm that; if this client cannot show the person walletgate's question, the operator can set WALLETGATE_CONFIRM=token or human for it."
}

// elicitFailure says why a server-sent elicitation failed, in words for the
// person and the assistant: the MCP library's own text for a client that
// speaks 2026-07-28 is advice to server developers and never reaches them.
func elicitFailure(err error) string {
	switch {
	case errors.Is(err, server.ErrServerInitiatedRequestUnsupported):
		return "this client speaks MCP 2026-07-28, where walletgate cannot send it a question of its own"
	case errors.Is(err, server.ErrNoActiveSession), errors.Is(err, server.ErrElicitationNotSupported):
		return "this connection cannot carry a question from walletgate to the client"
	}
	return inert(err.Error(), 200)
}
