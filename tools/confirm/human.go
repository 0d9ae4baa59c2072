package confirm

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

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/policy"
)

// Confirmation is how a preview can be confirmed: with the token the model
// was given (token and elicit modes), or with the code the person will get
// when they approve preview ApprovalID (human mode). Tools renders it.
type Confirmation struct {
	Token      string
	ApprovalID string
	Expires    time.Time
	// Why, in human mode with WALLETGATE_HUMAN_ABOVE set, says why a token
	// suffices or a person must approve; "" otherwise.
	Why string
	// Service is set in service mode: the text names only what the person
	// does, never a command or a path.
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
func (m *Mode) previewPage(id string) string {
	return strings.TrimSuffix(m.pageURL, "/") + "/p/" + id
}

// wayToPage says, to the model and through it to the person, how the
// person reaches preview id's page: opened in their browser, or where its
// address is. It never gives the address (it holds the page's secret, which
// the model must not have). Every human-mode sentence about where the person
// approves is built here.
func (m *Mode) wayToPage(id string, w pageWay) string {
	var b strings.Builder
	switch {
	case w == pageOpened:
		b.WriteString("walletgate opened preview " + id + "'s approval page in the person's default browser on this computer; if they do not see it, ")
	case w == pageReminder && m.way.Open != nil:
		b.WriteString("walletgate opened preview " + id + "'s approval page in the person's default browser when it made the preview; if they do not see it, ")
	default:
		b.WriteString("walletgate could not open a browser for the person, so tell them: ")
	}
	switch {
	case m.pageURL != "" && m.way.URLFile != "":
		b.WriteString("the approval page's address is in the file " + m.way.URLFile + " (and at the start of walletgate's log); preview " + id + " is listed there")
	case m.pageURL != "":
		b.WriteString("the approval page's address is at the start of walletgate's log; preview " + id + " is listed there")
	default:
		b.WriteString("the approval page is not running")
	}
	if m.way.Terminal != "" {
		b.WriteString(", or they can approve in a terminal with: " + m.way.Terminal)
	}
	b.WriteString(".")
	return b.String()
}

// Offer issues the confirmation of preview p and renders it with render:
// in token and elicit modes the token goes to the model; in human mode it
// stays with the broker and the preview is listed for the person, with
// display(text, why) as what they see. The rendered text becomes p's (what
// elicitation asks about).
func (m *Mode) Offer(tool string, canonical []byte, p *engine.Plan, display func(text, why string) approval.Display, render func(Confirmation) (any, string)) (any, string, *engine.Refusal) {
	why := ""
	byToken := false
	if m.Human() {
		if m.tier != nil {
			byToken, why = m.tier(p)
		}
		p.ByToken = byToken
		p.ConfirmBy = "person"
		if byToken {
			p.ConfirmBy = "token"
		}
	}
	token, expires, ref := m.engine.Issue(tool, canonical, p)
	if ref != nil {
		return nil, "", ref
	}
	var result any
	var text string
	if !m.Human() {
		result, text = render(Confirmation{Token: token, Expires: expires})
	} else if byToken {
		result, text = render(Confirmation{Token: token, Expires: expires, Why: why})
	} else {
		// The text says the page is being opened; should the opener not
		// even start, the preview is rendered again saying where it is.
		opening, way := m.way.Open != nil, pageNotOpened
		if opening {
			way = pageOpened
		}
		req := approval.Request{Tool: tool, Fingerprint: gate.Fingerprint(tool, canonical), Token: token, Expires: expires}
		id, err := m.mine.Add(req, func(id string) approval.Display {
			result, text = render(Confirmation{ApprovalID: id, Expires: expires, Why: why, Way: m.wayToPage(id, way), Service: m.service})
			return display(text, why)
		})
		if err != nil {
			m.gate.Revoke(token)
			return nil, "", approvalRefusal(err)
		}
		if opening {
			if err := m.way.Open(m.previewPage(id)); err != nil {
				m.log.Warn("the approval page could not be opened in the person's browser; the preview says where it is", "preview", id, "err", err)
				result, text = render(Confirmation{ApprovalID: id, Expires: expires, Why: why, Way: m.wayToPage(id, pageNotOpened)})
			} else {
				m.log.Info("opened the approval page of a preview in the person's browser", "preview", id)
			}
		}
	}
	p.SetText(text)
	return result, text, nil
}

// humanMode confirms with the one-time code the person was shown when they
// approved the preview — or, for a write at or below WALLETGATE_HUMAN_ABOVE,
// with the preview's token.
type humanMode struct {
	m        *Mode
	viaToken bool   // the confirm carried a token, not the person's code
	code     string // the approval's code, when the person approved in the client's page (URL elicitation)
}

// Redeem turns the code into the gate token of the preview the person
// approved, for the same fingerprint only; a token passes through to the
// gate when tiers are configured, and Ask checks its plan allowed one.
func (h *humanMode) Redeem(ctx context.Context, code, tool string, canonical []byte) (string, *Refusal) {
	if h.m.tiered() && strings.HasPrefix(code, gate.TokenPrefix) {
		h.viaToken = true
		return code, nil
	}
	if approval.IsID(code) && (h.m.canOpenURL(ctx) || answering(ctx)) {
		return h.approveInClient(ctx, code, tool, canonical)
	}
	if approval.IsID(code) {
		if ref := h.m.idWithoutURLMode(code, tool); ref != nil {
			return "", ref
		}
	}
	token, err := h.m.mine.Redeem(code, gate.Fingerprint(tool, canonical))
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

func (h *humanMode) Ask(_ context.Context, p *engine.Plan) engine.Approval {
	if h.viaToken && !p.ByToken {
		return engine.Deny(refuse(approval.CodeUnknown, "this write needs the person's approval (%s); a token cannot confirm it. Nothing was signed or sent.", policy.EnvHumanAbove))
	}
	return engine.Approve()
}

// idWithoutURLMode answers a confirm that carried the id of a preview that
// still awaits the person, from a client that cannot open pages for them:
// the person approves that preview themselves, and the assistant asks them
// for its code — no new preview. nil for an id of no such preview (the
// broker's refusal then says where it stands). Nothing is spent: the id
// approves nothing.
func (m *Mode) idWithoutURLMode(id, tool string) *Refusal {
	v, ok := m.mine.Get(id)
	if !ok || v.Tool != tool {
		return nil
	}
	const client = "; this client cannot open the approval page for the person (it did not declare MCP URL-mode elicitation), so the id alone approves nothing. Nothing was signed or sent. "
	switch v.State {
	case approval.Pending:
		return refuse(approval.CodePending, "preview %s awaits the person's approval%s%s Once they approve, they are shown a six-digit code: ask them for it and call %s again with exactly the same arguments plus \"confirm\": \"<that code>\". Do not ask for a new preview: this one stays valid until %s.",
			id, client, m.wayToPage(id, pageReminder), tool, v.Expires.UTC().Format(time.RFC3339))
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

// Refusal is the engine's refusal: a stable code and what to do.
type Refusal = engine.Refusal

func refuse(code, format string, a ...any) *Refusal { return engine.Refuse(code, format, a...) }

func inert(s string, max int) string { return engine.Inert(s, max) }
