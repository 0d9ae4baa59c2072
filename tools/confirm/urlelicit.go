package confirm

// Human mode through the client: URL-mode elicitation. MCP reserves URL mode
// for anything that authorises a transaction: the client opens walletgate's
// approval page for one preview, the person decides there, and the confirm —
// which carried only the preview's id, nothing the model could forge or
// guess into an approval — waits for that decision. Rules: only when the
// client declared the URL mode; the page is the only place the preview is
// approved; a client without it keeps the code flow. In protocol 2026-07-28
// the request to open the page travels in the confirm's answer and the
// client's "opened" in its retry (roundtrip.go); before it, walletgate sends
// elicitation/create.

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/walletgate/walletgate/gate"
)

// canOpenURL reports whether this request's client declared URL-mode
// elicitation and the approval page is up.
func (m *Mode) canOpenURL(ctx context.Context) bool {
	if m.pageURL == "" || m.approvals == nil {
		return false
	}
	el := clientCaps(ctx).Elicitation
	return el != nil && el.URL != nil && server.ServerFromContext(ctx) != nil
}

// urlQuestion asks the client to open preview id's approval page.
func (m *Mode) urlQuestion(id string) mcp.ElicitationParams {
	return mcp.ElicitationParams{Mode: mcp.ElicitationModeURL, ElicitationID: "walletgate-" + id, URL: m.previewPage(id),
		Message: "walletgate asks you to review and approve (or reject) preview " + id + " on its approval page, on this computer. Nothing is sent unless you approve it there."}
}

// approveInClient asks the client to open preview id's page (in 2026-07-28:
// reads the answer the retried call carried), waits for the person's
// decision there, and returns the preview's gate token.
func (h *humanMode) approveInClient(ctx context.Context, id, tool string, canonical []byte) (string, *Refusal) {
	m := h.m
	var res *mcp.ElicitationResult
	if answering(ctx) {
		var ref *Refusal
		if res, ref = m.takeAnswer(ctx, askURL, id, tool, canonical); ref != nil {
			return "", ref
		}
	} else {
		var err error
		res, err = server.ServerFromContext(ctx).RequestElicitation(ctx, mcp.ElicitationRequest{
			Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
			Params:  m.urlQuestion(id),
		})
		if err != nil {
			return "", refuse(CodeElicitationUnavailable, "the client could not be asked to open the approval page (%s). Nothing was signed or sent. The person can approve preview %s on walletgate's approval page or with `walletgate approvals`, and tell you the code.", elicitFailure(err), id)
		}
	}
	if res == nil || res.Action != mcp.ElicitationResponseActionAccept {
		return "", refuse(CodeHumanDeclined, "the person did not open the approval page for preview %s. Nothing was signed or sent.", id)
	}
	// The line a test waits for before it asserts that nothing was sent
	// while the person had not decided.
	m.log.Info("the client opened the approval page; waiting for the person's decision", "preview", id)
	token, code, err := m.mine.AwaitApproval(ctx, id, gate.Fingerprint(tool, canonical))
	if err != nil {
		return "", approvalRefusal(err)
	}
	h.code = code
	if ms := server.ServerFromContext(ctx); ms != nil {
		_ = ms.SendNotificationToClient(ctx, string(mcp.MethodNotificationElicitationComplete), map[string]any{"elicitationId": "walletgate-" + id})
	}
	return token, nil
}
