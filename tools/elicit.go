package tools

// Confirmation mode "elicit": a confirm proceeds only after the person says
// yes through MCP elicitation (form mode), asked by the server directly, so
// the model cannot answer for them. Rules: the client must have declared the
// elicitation capability (mcp-go does not check; we do, and refuse rather than
// fall back to token mode); anything but an explicit accept carrying
// {"approve": true} refuses (mcp-go does not validate the answer's shape; we
// do); the question carries the same preview text the model was shown.

import (
	"context"
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

// elicitMode asks the person through MCP elicitation, after the token was
// consumed.
type elicitMode struct{}

// Redeem returns the token as it came.
func (elicitMode) Redeem(_ context.Context, confirm, _ string, _ []byte) (string, *Refusal) {
	return confirm, nil
}

// Ask asks the person to approve the previewed plan. It returns nil only on
// an explicit accept with approve == true.
func (elicitMode) Ask(ctx context.Context, p *engine.Plan) *Refusal {
	session := server.ClientSessionFromContext(ctx)
	withInfo, ok := session.(server.SessionWithClientInfo)
	if !ok || withInfo.GetClientCapabilities().Elicitation == nil {
		return refuse(CodeElicitationUnavailable, "walletgate is set to ask the person through MCP elicitation (WALLETGATE_CONFIRM=elicit), but this client did not declare that it supports elicitation. Nothing was signed or sent. The operator should use a client that supports elicitation, or set WALLETGATE_CONFIRM=token for this one.")
	}
	ms := server.ServerFromContext(ctx)
	if ms == nil {
		return refuse(CodeElicitationUnavailable, "the MCP session cannot send an elicitation request. Nothing was signed or sent.")
	}
	text := p.Text()
	if text == "" {
		text = "(the preview is not available)"
	}
	req := mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params: mcp.ElicitationParams{
			Message:         "walletgate asks you to approve a transaction.\n\n" + text + "\n\nApprove it?",
			RequestedSchema: approvalSchema,
		},
	}
	res, err := ms.RequestElicitation(ctx, req)
	if err != nil {
		return refuse(CodeElicitationUnavailable, "the approval request to the person failed (%s). Nothing was signed or sent.", inert(err.Error(), 200))
	}
	switch res.Action {
	case mcp.ElicitationResponseActionAccept:
		content, ok := res.Content.(map[string]any)
		if !ok || len(content) != 1 {
			return refuse(CodeHumanDeclined, "the approval answer was not the expected form ({\"approve\": true or false}). Nothing was signed or sent.")
		}
		if approve, ok := content["approve"].(bool); ok && approve {
			return nil
		}
		return refuse(CodeHumanDeclined, "the person did not approve the transaction. Nothing was signed or sent.")
	case mcp.ElicitationResponseActionDecline:
		return refuse(CodeHumanDeclined, "the person declined the transaction. Nothing was signed or sent.")
	case mcp.ElicitationResponseActionCancel:
		return refuse(CodeHumanDeclined, "the person dismissed the approval request without approving. Nothing was signed or sent.")
	}
	return refuse(CodeHumanDeclined, "the approval answer %s is not an approval. Nothing was signed or sent.", displayInput(fmt.Sprint(res.Action)))
}
