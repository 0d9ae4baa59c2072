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
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/shopspring/decimal"

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
	// Why, in human mode with WALLETGATE_HUMAN_ABOVE set, says why a token
	// suffices or a person must approve; "" otherwise.
	Why string
	// Service is set in service mode: the text names only what the person
	// does (serviceApproval), never a command or a path.
	Service bool
	// Way, in human mode, says how the person reaches the preview's page
	// (wayToPage).
	Way string
}

// PersonWay is how the person reaches the approval page in human mode. Its
// zero value opens nothing and names no file or command.
type PersonWay struct {
	// Open opens a preview's page in the person's browser; nil: walletgate
	// does not (NoOpen says why, for the log and wallet_policy).
	Open   func(url string) error
	NoOpen string
	// URLFile is the 0600 file holding the page's address; "" when it
	// could not be written.
	URLFile string
	// Terminal is the exact command line that approves in a terminal; ""
	// when the approvals socket is not up.
	Terminal string
}

// pageWay is what wayToPage says was done to show the person the page.
type pageWay int

const (
	pageNotOpened pageWay = iota // walletgate could not open it
	pageOpened                   // the preview just opened it
	pageReminder                 // a later call: it was opened at the preview if it could be
)

// previewPage is preview id's own page on the approval page.
func (s *Server) previewPage(id string) string {
	return strings.TrimSuffix(s.pageURL, "/") + "/p/" + id
}

// wayToPage says, to the model and through it to the person, how the
// person reaches preview id's page: opened in their browser, or where its
// address is. It never gives the address (it holds the page's secret, which
// the model must not have). Every human-mode sentence about where the person
// approves is built here.
func (s *Server) wayToPage(id string, w pageWay) string {
	var b strings.Builder
	switch {
	case w == pageOpened:
		b.WriteString("walletgate opened preview " + id + "'s approval page in the person's default browser on this computer; if they do not see it, ")
	case w == pageReminder && s.way.Open != nil:
		b.WriteString("walletgate opened preview " + id + "'s approval page in the person's default browser when it made the preview; if they do not see it, ")
	default:
		b.WriteString("walletgate could not open a browser for the person, so tell them: ")
	}
	switch {
	case s.pageURL != "" && s.way.URLFile != "":
		b.WriteString("the approval page's address is in the file " + s.way.URLFile + " (and at the start of walletgate's log); preview " + id + " is listed there")
	case s.pageURL != "":
		b.WriteString("the approval page's address is at the start of walletgate's log; preview " + id + " is listed there")
	default:
		b.WriteString("the approval page is not running")
	}
	if s.way.Terminal != "" {
		b.WriteString(", or they can approve in a terminal with: " + s.way.Terminal)
	}
	b.WriteString(".")
	return b.String()
}

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
}

// previewFor is the preview result of pv for tool, confirmed as c says.
func previewFor[P any](pv P, c confirmation, tool string) previewOf[P] {
	return previewOf[P]{Status: "confirmation_required", Preview: pv, ConfirmToken: c.Token, Approval: c.approval(tool), ExpiresAt: c.Expires.UTC().Format(time.RFC3339)}
}

func (c confirmation) approval(tool string) *approvalJSON {
	if c.ApprovalID == "" {
		return nil
	}
	if c.Service {
		return &approvalJSON{ID: c.ApprovalID, Mode: policy.ConfirmHuman, How: serviceApproval(c.ApprovalID, tool)}
	}
	return &approvalJSON{ID: c.ApprovalID, Mode: policy.ConfirmHuman,
		How: "The person must approve preview " + c.ApprovalID + " themselves: " + c.Way + " They are then shown a one-time code. Call " + tool + " again with exactly the same arguments plus \"confirm\": \"<that code>\". If your client can open URLs for the user (MCP URL-mode elicitation), you may instead confirm with \"confirm\": \"" + c.ApprovalID + "\": walletgate asks the client to open this preview's approval page and waits for the person's decision there."}
}

func (s *Server) human() bool { return s.cfg.Confirm == policy.ConfirmHuman }

// offer issues the confirmation of a preview and renders the result: in
// token and elicit modes the token goes to the model; in human mode it stays
// with the broker and the preview is listed for the person, with display()
// as what they see besides the text.
func (s *Server) offer(tool string, canonical []byte, p *engine.Plan, display func() approval.Display, render func(confirmation) (any, string)) (*mcp.CallToolResult, *Refusal) {
	why := ""
	byToken := false
	if s.human() {
		byToken, why = s.tier(p)
		p.ByToken = byToken
		p.ConfirmBy = "person"
		if byToken {
			p.ConfirmBy = "token"
		}
	}
	token, expires, ref := s.engine.Issue(tool, canonical, p)
	if ref != nil {
		return nil, ref
	}
	var result any
	var text string
	if !s.human() {
		result, text = render(confirmation{Token: token, Expires: expires})
	} else if byToken {
		result, text = render(confirmation{Token: token, Expires: expires, Why: why})
	} else {
		// The text says the page is being opened; should the opener not
		// even start, the preview is rendered again saying where it is.
		opening, way := s.way.Open != nil, pageNotOpened
		if opening {
			way = pageOpened
		}
		req := approval.Request{Tool: tool, Fingerprint: gate.Fingerprint(tool, canonical), Token: token, Expires: expires}
		id, err := s.approvals.Add(req, func(id string) approval.Display {
			result, text = render(confirmation{ApprovalID: id, Expires: expires, Why: why, Way: s.wayToPage(id, way), Service: s.service})
			d := display()
			d.Text, d.Why = personText(text), why
			return d
		})
		if err != nil {
			s.gate.Revoke(token)
			return nil, approvalRefusal(err)
		}
		if opening {
			if err := s.way.Open(s.previewPage(id)); err != nil {
				s.log.Warn("the approval page could not be opened in the person's browser; the preview says where it is", "preview", id, "err", err)
				result, text = render(confirmation{ApprovalID: id, Expires: expires, Why: why, Way: s.wayToPage(id, pageNotOpened)})
			} else {
				s.log.Info("opened the approval page of a preview in the person's browser", "preview", id)
			}
		}
	}
	p.SetText(text)
	return success(result, text), nil
}

// asker is this server's confirmation mode, as the engine asks it; a fresh
// one per confirm (the human mode remembers how the confirm was redeemed).
func (s *Server) asker() engine.Asker {
	switch {
	case s.human():
		return &humanMode{s: s}
	case s.cfg.Confirm == policy.ConfirmElicit:
		return &elicitMode{s: s}
	}
	return engine.TokenMode{}
}

// humanMode confirms with the one-time code the person was shown when they
// approved the preview — or, for a write at or below WALLETGATE_HUMAN_ABOVE,
// with the preview's token.
type humanMode struct {
	s        *Server
	viaToken bool   // the confirm carried a token, not the person's code
	code     string // the approval's code, when the person approved in the client's page (URL elicitation)
}

// Redeem turns the code into the gate token of the preview the person
// approved, for the same fingerprint only; a token passes through to the
// gate when tiers are configured, and Ask checks its plan allowed one.
func (h *humanMode) Redeem(ctx context.Context, code, tool string, canonical []byte) (string, *Refusal) {
	if h.s.caps.HumanAbove != nil && strings.HasPrefix(code, gate.TokenPrefix) {
		h.viaToken = true
		return code, nil
	}
	if approval.IsID(code) && (h.s.canOpenURL(ctx) || answering(ctx)) {
		return h.approveInClient(ctx, code, tool, canonical)
	}
	if approval.IsID(code) {
		if ref := h.s.idWithoutURLMode(code, tool); ref != nil {
			return "", ref
		}
	}
	token, err := h.s.approvals.Redeem(code, gate.Fingerprint(tool, canonical))
	if err != nil {
		return "", approvalRefusal(err)
	}
	return token, nil
}

// Ask approves when the person approved (they did, to get the code), and a
// token only for a plan a token may confirm: the broker never lets a token
// for a person's preview out, so this is a second lock, not the first.
// ConfirmedByToken reports whether the confirm came with a token alone (no
// person): its reservation is then held to the rolling threshold.
func (h *humanMode) ConfirmedByToken() bool { return h.viaToken }

func (h *humanMode) Ask(_ context.Context, p *engine.Plan) *Refusal {
	if h.viaToken && !p.ByToken {
		return refuse(approval.CodeUnknown, "this write needs the person's approval (%s); a token cannot confirm it. Nothing was signed or sent.", policy.EnvHumanAbove)
	}
	return nil
}

// idWithoutURLMode answers a confirm that carried the id of a preview that
// still awaits the person, from a client that cannot open pages for them:
// the person approves that preview themselves, and the assistant asks them
// for its code — no new preview. nil for an id of no such preview (the
// broker's refusal then says where it stands). Nothing is spent: the id
// approves nothing.
func (s *Server) idWithoutURLMode(id, tool string) *Refusal {
	v, ok := s.approvals.Get(id)
	if !ok || v.Tool != tool {
		return nil
	}
	const client = "; this client cannot open the approval page for the person (it did not declare MCP URL-mode elicitation), so the id alone approves nothing. Nothing was signed or sent. "
	switch v.State {
	case approval.Pending:
		return refuse(approval.CodePending, "preview %s awaits the person's approval%s%s Once they approve, they are shown a six-digit code: ask them for it and call %s again with exactly the same arguments plus \"confirm\": \"<that code>\". Do not ask for a new preview: this one stays valid until %s.",
			id, client, s.wayToPage(id, pageReminder), tool, v.Expires.UTC().Format(time.RFC3339))
	case approval.Approved:
		return refuse(approval.CodeUnknown, "the person approved preview %s%sThey were shown a six-digit code on the approval page (or in the terminal): ask them for it and call %s again with exactly the same arguments plus \"confirm\": \"<that code>\". Do not ask for a new preview.",
			id, client, tool)
	}
	return nil
}

func approvalRefusal(err error) *Refusal {
	var e *approval.Error
	if errors.As(err, &e) {
		return refuse(e.Code, "%s", e.Message)
	}
	return refuse(approval.CodeUnknown, "the approval could not be checked (%s). Nothing was signed or sent.", inert(err.Error(), 200))
}

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
	if !s.human() || s.approvals == nil {
		return
	}
	s.approvals.Finish(code, gate.Fingerprint(tool, canonical), outcomeOf(res, ref))
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
