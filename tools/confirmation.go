package tools

// How a preview says it is confirmed, and what a confirm's outcome tells the
// person on the approval page: the renderings of tools/confirm's
// Confirmation. Whether a confirm may proceed is tools/confirm's.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/shopspring/decimal"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools/confirm"
)

// confirmation is how a preview can be confirmed (confirm.Confirmation).
type confirmation = confirm.Confirmation

// PersonWay is how the person reaches the approval page in human mode
// (confirm.PersonWay).
type PersonWay = confirm.PersonWay

// Refusal codes of the confirmation modes.
const (
	CodeElicitationUnavailable = confirm.CodeElicitationUnavailable
	CodeHumanDeclined          = confirm.CodeHumanDeclined
	CodeAnswerUnknown          = confirm.CodeAnswerUnknown
)

// approvalJSON tells the model, in human mode, which preview the person must
// approve and what to do next.
type approvalJSON struct {
	ID   string `json:"id" jsonschema:"the preview's id, as the person sees it on the approval page and in walletgate approvals"`
	Mode string `json:"mode" enum:"human" jsonschema:"who approves"`
	How  string `json:"how" jsonschema:"what to do next"`
}

// previewOf is every write tool's preview result: the preview P, and how it
// is confirmed (a token, or in human mode the approval a person gives).
type previewOf[P any] struct {
	Status       string        `json:"status" enum:"confirmation_required" jsonschema:"a preview: nothing was signed or sent"`
	Preview      P             `json:"preview" jsonschema:"what the call would do, as walletgate built and checked it"`
	ConfirmToken string        `json:"confirm_token,omitempty" jsonschema:"single-use token for confirming exactly this preview (not given in human mode)"`
	Approval     *approvalJSON `json:"approval,omitempty" jsonschema:"human mode: which preview the person must approve, and how"`
	ExpiresAt    string        `json:"expires_at" jsonschema:"when the confirmation expires (RFC 3339, UTC)"`
	USD          *usdJSON      `json:"usd,omitempty" served:"object" jsonschema:"with USD caps: the value counted, per asset at its Chainlink price"`
}

// previewFor is the preview result of pv for tool, confirmed as c says.
func previewFor[P any](pv P, c confirmation, tool string) previewOf[P] {
	return previewOf[P]{Status: "confirmation_required", Preview: pv, ConfirmToken: c.Token, Approval: approvalOf(c, tool), ExpiresAt: c.Expires.UTC().Format(time.RFC3339)}
}

// approvalOf is, in human mode, which preview the person must approve and
// what to do next; nil otherwise.
func approvalOf(c confirmation, tool string) *approvalJSON {
	if c.ApprovalID == "" {
		return nil
	}
	if c.Service {
		return &approvalJSON{ID: c.ApprovalID, Mode: policy.ConfirmHuman, How: serviceApproval(c.ApprovalID, tool)}
	}
	return &approvalJSON{ID: c.ApprovalID, Mode: policy.ConfirmHuman,
		How: "The person must approve preview " + c.ApprovalID + " themselves: " + c.Way + " They are then shown a one-time code. Call " + tool + " again with exactly the same arguments plus \"confirm\": \"<that code>\". If your client can open URLs for the user (MCP URL-mode elicitation), you may instead confirm with \"confirm\": \"" + c.ApprovalID + "\": walletgate asks the client to open this preview's approval page and waits for the person's decision there."}
}

func (s *Server) human() bool { return s.confirm.Human() }

// offer issues the confirmation of a preview and renders the result
// (confirm.Mode.Offer), with display() as what the person sees besides the
// text in human mode.
func (s *Server) offer(tool string, canonical []byte, p *engine.Plan, display func() approval.Display, render func(confirmation) (any, string)) (*mcp.CallToolResult, *Refusal) {
	result, text, ref := s.confirm.Offer(tool, canonical, p, func(text, why string) approval.Display {
		d := display()
		d.Text, d.Why = personText(text), why
		return d
	}, render)
	if ref != nil {
		return nil, ref
	}
	return success(result, text), nil
}

// askFirst is the first call of a 2026-07-28 confirm that needs the person
// (confirm.Mode.AskFirst).
func (s *Server) askFirst(ctx context.Context, token, tool string, canonical []byte) (*mcp.CallToolResult, *Refusal) {
	return s.confirm.AskFirst(ctx, token, tool, canonical)
}

// spendConfirm spends a confirm value whose call is refused before it could
// be checked, and says so (confirm.Mode.Spend).
func (s *Server) spendConfirm(tool, token string) string { return s.confirm.Spend(tool, token) }

// confirmLine ends a preview text: how to confirm it.
func confirmLine(b *strings.Builder, tool string, c confirmation) {
	if c.Why != "" {
		b.WriteString(c.Why + "\n")
	}
	if c.ApprovalID == "" {
		b.WriteString("To confirm, call " + tool + " again with exactly the same arguments plus \"confirm\": \"" + c.Token + "\". Any change needs a new preview.")
		return
	}
	if c.Service {
		b.WriteString("APPROVAL BY THE PERSON REQUIRED (preview " + c.ApprovalID + "): " + serviceApproval(c.ApprovalID, tool))
		return
	}
	b.WriteString("APPROVAL BY THE PERSON REQUIRED (preview " + c.ApprovalID + "): they approve or reject it themselves. " + c.Way + " Approving shows them a one-time code; then call " + tool + " again with exactly the same arguments plus \"confirm\": \"<that code>\". The code works once, for this preview only. You cannot approve it yourself. If your client can open URLs for the user (MCP URL-mode elicitation), confirm with \"confirm\": \"" + c.ApprovalID + "\" instead: walletgate then asks the client to open the approval page and waits for the person's decision.")
}

// confirmDescription is the confirm property of a write tool's schema.
func (s *Server) confirmDescription() string {
	if s.human() && s.caps.HumanAbove != nil {
		return "the person's code (like 123-456), or the preview's confirm_token; omit to preview"
	}
	if s.human() {
		return "the person's one-time code (like 123-456) from approving the preview; omit to preview"
	}
	return "the preview's confirm_token; omit to preview"
}

// instructions is what the server tells a client at initialize.
func (s *Server) instructions() string {
	if !s.human() {
		return Instructions
	}
	if s.service {
		return s.serviceInstructions()
	}
	if s.caps.HumanAbove != nil {
		return instructionsReads + instructionsHumanWrites + instructionsTiered + instructionsTail
	}
	return instructionsReads + instructionsHumanWrites + instructionsTail
}

// instructionsTiered is told in human mode with WALLETGATE_HUMAN_ABOVE set.
const instructionsTiered = ` Small writes are the exception: a preview at or below the operator's threshold says A TOKEN SUFFICES and carries a confirm_token; confirm those with the token as usual.`

// personText is a preview's text as the person sees it under "everything
// walletgate checked": without the opening line (the page says where it
// stands), the network line (the badge names it once) and the tail
// addressed to the model (a frozen "expires in", how to confirm).
func personText(text string) string {
	var kept []string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "PREVIEW — "), strings.HasPrefix(line, "Network:   "):
			continue
		case strings.HasPrefix(line, "Expires:   "):
			return strings.Join(kept, "\n")
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n")
}

// finishApproval tells the broker how a human-mode confirm with code ended,
// in words for the person: the approval page then shows it where they
// approved. Tokens (token and elicit modes) have no page to tell.
func (s *Server) finishApproval(code, tool string, canonical []byte, res *mcp.CallToolResult, ref *Refusal) {
	if !s.human() || !s.confirm.HasBroker() {
		return
	}
	s.confirm.Finish(code, tool, canonical, outcomeOf(res, ref))
}

// outcomeOf is a confirm's result or refusal as the person reads it, from
// the result's fields. A refusal of a confirm means nothing was broadcast
// (engine.Confirm answers an Outcome once anything was).
func outcomeOf(res *mcp.CallToolResult, ref *Refusal) approval.Outcome {
	if ref != nil {
		return approval.Outcome{Status: "refused", Summary: ref.Code + ": " + inert(firstSentence(ref.Message), 300) + " Nothing was sent."}
	}
	switch r := res.StructuredContent.(type) {
	case signedResult:
		return approval.Outcome{Status: "signed", Summary: fmt.Sprintf("Signed (%s, digest %s) and given to the assistant; nothing was sent.", r.Kind, r.Digest)}
	case x402Result:
		return approval.Outcome{Status: "signed", Summary: fmt.Sprintf("Payment authorization signed: %s %s to %s for %s, valid until %s; nothing was sent — the resource's server settles it.", r.Amount, r.Token.Symbol, r.PayTo, inert(r.Resource, 200), r.ValidUntil)}
	case confirmResult:
		return confirmOutcome(r)
	}
	return approval.Outcome{Status: "unknown", Summary: "walletgate could not read the outcome; the assistant was told it, and `walletgate audit` shows it."}
}

// confirmOutcome renders a transaction write's result for the person.
func confirmOutcome(r confirmResult) approval.Outcome {
	o := approval.Outcome{Status: r.Status}
	for _, l := range r.Legs {
		if l.TxHash != "" && l.Status != engine.LegNotSent {
			o.TxHashes = append(o.TxHashes, l.TxHash)
		}
	}
	if len(o.TxHashes) == 0 && r.TxHash != "" && r.Status != string(engine.StatusIncomplete) {
		o.TxHashes = []string{r.TxHash}
	}
	if r.Block != nil {
		o.Block = *r.Block
	}
	if fee, err := decimal.NewFromString(r.Fee); err == nil {
		text, exact := readableDecimal(fee, nearest)
		if !exact {
			text = "≈ " + text
		}
		o.Fee = text + " ETH"
	}
	for _, e := range r.Effects {
		o.Effects = append(o.Effects, effectPhrase(e))
	}
	var moved []string
	for _, c := range r.Changes {
		if c.Out != "0" {
			moved = append(moved, "−"+c.Out+" "+c.Symbol)
		}
		if c.In != "0" {
			moved = append(moved, "+"+c.In+" "+c.Symbol)
		}
	}
	movedText := "nothing besides the fees"
	if len(moved) > 0 {
		movedText = strings.Join(moved, ", ")
	}
	switch r.Status {
	case statusConfirmed:
		o.Summary = fmt.Sprintf("The receipt and the wallet's balances show exactly the previewed effects (%d confirmation(s)).", r.Confirmations)
	case statusEffectMismatch:
		o.Status = "mismatch"
		o.Summary = "Included, but more left the wallet or less reached it than the preview showed. Measured on chain: " + movedText + "; that is what the caps count. What the receipts show is listed below."
	case statusRevertedW:
		o.Summary = "Included, but it REVERTED: nothing moved except the network fees."
	case statusPendingW:
		o.Summary = "Sent, but not yet seen included. It stays counted against the caps until its outcome is known."
	case string(engine.StatusIncomplete):
		o.Status = "partial"
		var legs []string
		for _, l := range r.Legs {
			name := l.Label
			if l.Undo {
				name = "taking it back (" + l.Label + ")"
			}
			legs = append(legs, name+": "+strings.ReplaceAll(l.Status, "_", " "))
		}
		o.Summary = "Part of this write happened, then it stopped (" + strings.Join(legs, "; ") + "). Measured on chain: " + movedText + "; the caps count that and the fees."
	}
	return o
}

// firstSentence is a message up to its first full stop.
func firstSentence(msg string) string {
	if i := strings.Index(msg, ". "); i >= 0 {
		return msg[:i+1]
	}
	return msg
}
