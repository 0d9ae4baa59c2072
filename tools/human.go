package tools

// Confirmation mode "human": the preview the model gets carries no usable
// token. The token stays in the approval broker with the preview; the person
// approves it on the local page or in `walletgate approvals` and is shown a
// short one-time code, which the confirm must carry. Rules: the code is
// redeemed for the token only for the same fingerprint (tool and canonical
// arguments), once, before the preview expires; a code that names a preview
// spends it on every outcome; rejecting revokes the token. Without a broker
// (the page and socket could not start) write tools are not offered.

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/policy"
)

// confirmation is how a preview can be confirmed: with the token the model
// was given (token and elicit modes), or with the code the person will get
// when they approve preview ApprovalID (human mode).
type confirmation struct {
	Token      string
	ApprovalID string
	Expires    time.Time
}

// approvalJSON tells the model, in human mode, which preview the person must
// approve and what to do next.
type approvalJSON struct {
	ID   string `json:"id" jsonschema:"the preview's id, as the person sees it on the approval page and in walletgate approvals"`
	Mode string `json:"mode" enum:"human" jsonschema:"who approves"`
	How  string `json:"how" jsonschema:"what to do next"`
}

func (c confirmation) approval(tool string) *approvalJSON {
	if c.ApprovalID == "" {
		return nil
	}
	return &approvalJSON{ID: c.ApprovalID, Mode: policy.ConfirmHuman,
		How: "The person must approve preview " + c.ApprovalID + " on walletgate's approval page or with `walletgate approvals`; they are then shown a one-time code. Call " + tool + " again with exactly the same arguments plus \"confirm\": \"<that code>\"."}
}

func (s *Server) human() bool { return s.cfg.Confirm == policy.ConfirmHuman }

// offer issues the confirmation of a preview and renders the result: in
// token and elicit modes the token goes to the model; in human mode it stays
// with the broker and the preview is listed for the person, with display()
// as what they see besides the text.
func (s *Server) offer(tool string, canonical []byte, p *engine.Plan, display func() approval.Display, render func(confirmation) (any, string)) (*mcp.CallToolResult, *Refusal) {
	token, expires, ref := s.engine.Issue(tool, canonical, p)
	if ref != nil {
		return nil, ref
	}
	var result any
	var text string
	if !s.human() {
		result, text = render(confirmation{Token: token, Expires: expires})
	} else {
		req := approval.Request{Tool: tool, Fingerprint: gate.Fingerprint(tool, canonical), Token: token, Expires: expires}
		_, err := s.approvals.Add(req, func(id string) approval.Display {
			result, text = render(confirmation{ApprovalID: id, Expires: expires})
			d := display()
			d.Text = text
			return d
		})
		if err != nil {
			s.gate.Revoke(token)
			return nil, approvalRefusal(err)
		}
	}
	p.SetText(text)
	return success(result, text), nil
}

// asker is this server's confirmation mode, as the engine asks it.
func (s *Server) asker() engine.Asker {
	switch {
	case s.human():
		return humanMode{s.approvals}
	case s.cfg.Confirm == policy.ConfirmElicit:
		return elicitMode{}
	}
	return engine.TokenMode{}
}

// humanMode confirms with the one-time code the person was shown when they
// approved the preview: the approval itself happened on the page or in the
// terminal.
type humanMode struct{ approvals *approval.Broker }

// Redeem turns the code into the gate token of the preview the person
// approved, for the same fingerprint only.
func (h humanMode) Redeem(code, tool string, canonical []byte) (string, *Refusal) {
	token, err := h.approvals.Redeem(code, gate.Fingerprint(tool, canonical))
	if err != nil {
		return "", approvalRefusal(err)
	}
	return token, nil
}

// Ask approves: the person already did, to get the code.
func (humanMode) Ask(context.Context, *engine.Plan) *Refusal { return nil }

func approvalRefusal(err error) *Refusal {
	var e *approval.Error
	if errors.As(err, &e) {
		return refuse(e.Code, "%s", e.Message)
	}
	return refuse(approval.CodeUnknown, "the approval could not be checked (%s). Nothing was signed or sent.", inert(err.Error(), 200))
}

// confirmLine ends a preview text: how to confirm it.
func confirmLine(b *strings.Builder, tool string, c confirmation) {
	if c.ApprovalID == "" {
		b.WriteString("To confirm, call " + tool + " again with exactly the same arguments plus \"confirm\": \"" + c.Token + "\". Any change needs a new preview.")
		return
	}
	b.WriteString("APPROVAL BY THE PERSON REQUIRED (preview " + c.ApprovalID + "): they approve or reject it on walletgate's approval page (its address is in walletgate's log and state directory) or with `walletgate approvals` in a terminal. Approving shows them a one-time code; then call " + tool + " again with exactly the same arguments plus \"confirm\": \"<that code>\". The code works once, for this preview only. You cannot approve it yourself.")
}

// confirmDescription is the confirm property of a write tool's schema.
func (s *Server) confirmDescription() string {
	if s.human() {
		return "the one-time code (six digits, like 123-456) the person was shown when they approved the preview of exactly these arguments; omit it to get a preview"
	}
	return "the confirm_token of a preview of exactly these arguments; omit it to get a preview"
}

// instructions is what the server tells a client at initialize.
func (s *Server) instructions() string {
	if !s.human() {
		return Instructions
	}
	return instructionsReads + instructionsHumanWrites + instructionsTail
}
