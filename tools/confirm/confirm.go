// Package confirm decides whether a write's confirm may proceed — on the
// token alone, on the person's answer through MCP elicitation, or on the
// person's approval on the page or in a terminal — and builds the approval
// broker wired to the gates of the sessions that list previews in it.
package confirm

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/policy"
)

// Deps is what a session's confirmation mode is built from.
type Deps struct {
	// Mode is the operator's WALLETGATE_CONFIRM: policy.DefaultConfirm
	// (token), policy.ConfirmElicit or policy.ConfirmHuman.
	Mode string
	// Gate holds this session's confirmation tokens; Engine issues and
	// confirms on it.
	Gate   *gate.Gate
	Engine *engine.Engine
	// Approvals is the broker the person approves in (human mode); the
	// mode joins it for as long as it lives (Close leaves). nil: no broker.
	Approvals *Approvals
	// Session names this session in the broker: its previews, codes and
	// quota are its own (approval.Session).
	Session string
	// Record, when set, writes a person's decision on one of this
	// session's previews to the audit trail.
	Record func(approval.Decision)
	// Tier is set exactly when WALLETGATE_HUMAN_ABOVE is: in human mode
	// it says whether a plan may be confirmed by a token alone, and why.
	Tier func(*engine.Plan) (byToken bool, why string)
	// PageURL is the approval page's address, secret included, for
	// URL-mode elicitation; never shown to the model. "" offers none.
	PageURL string
	// Way is how the person reaches the page (human mode).
	Way PersonWay
	// Service is set in service mode: the text names only what the person
	// does.
	Service bool
	Logger  *slog.Logger     // nil discards
	Now     func() time.Time // nil: time.Now
}

// Mode is one session's confirmation mode: what a preview offers, and how
// its confirm is allowed. It is safe for concurrent use.
type Mode struct {
	mode      string
	gate      *gate.Gate
	engine    *engine.Engine
	approvals *approval.Broker // nil without a broker
	mine      approval.Session // this session's side of approvals
	tier      func(*engine.Plan) (bool, string)
	pageURL   string
	way       PersonWay
	service   bool
	log       *slog.Logger
	now       func() time.Time
	asks      asks // questions to the person outstanding in 2026-07-28 (roundtrip.go)
	leave     func()
}

// New builds a session's confirmation mode from d and, with a broker,
// joins it: until Close, a person's rejection of one of this session's
// previews spends its token in d.Gate.
func New(d Deps) *Mode {
	m := &Mode{mode: d.Mode, gate: d.Gate, engine: d.Engine, tier: d.Tier, pageURL: d.PageURL, way: d.Way, service: d.Service, log: d.Logger, now: d.Now, leave: func() {}}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if d.Approvals != nil {
		m.approvals = d.Approvals.broker
		m.mine = m.approvals.Session(d.Session)
		m.leave = d.Approvals.join(d.Session, d.Gate, d.Record)
	}
	return m
}

// Close leaves the broker: its rejections no longer reach this session's
// gate. Safe to call more than once.
func (m *Mode) Close() { m.leave() }

// Human reports whether a person approves writes (WALLETGATE_CONFIRM=human).
func (m *Mode) Human() bool { return m.mode == policy.ConfirmHuman }

// HasBroker reports whether there is a broker the person approves in.
func (m *Mode) HasBroker() bool { return m.approvals != nil }

// tiered reports whether WALLETGATE_HUMAN_ABOVE is set: small writes are
// then confirmed by a token in human mode.
func (m *Mode) tiered() bool { return m.tier != nil }

// Way is how the person reaches the approval page.
func (m *Mode) Way() PersonWay { return m.way }

// asker is the engine's view of this mode; a fresh one per confirm (the
// human mode remembers how the confirm was redeemed).
func (m *Mode) asker() engine.Asker {
	switch {
	case m.Human():
		return &humanMode{m: m}
	case m.mode == policy.ConfirmElicit:
		return &elicitMode{m: m}
	}
	return engine.TokenMode{}
}

// Confirm runs the engine's confirm of token in this mode; code is what
// the approval page shows the outcome under (in human mode the person's
// code, also when approved in the client's page).
func (m *Mode) Confirm(ctx context.Context, token, tool string, canonical []byte) (*engine.Outcome, *engine.Refusal, string) {
	ask := m.asker()
	out, ref := m.engine.Confirm(ctx, ask, token, tool, canonical)
	code := token
	if h, ok := ask.(*humanMode); ok && h.code != "" {
		code = h.code
	}
	return out, ref, code
}

// Finish tells the broker how a human-mode confirm with code ended, in
// words for the person: the approval page then shows it where they
// approved. Tokens (token and elicit modes) have no page to tell.
func (m *Mode) Finish(code, tool string, canonical []byte, o approval.Outcome) {
	if !m.Human() || m.approvals == nil {
		return
	}
	m.mine.Finish(code, gate.Fingerprint(tool, canonical), o)
}

// Spend spends a confirm value whose call is refused before it could be
// checked — a token, or in human mode an approval code — and says so.
func (m *Mode) Spend(tool, confirm string) string {
	if m.Human() && !(m.tiered() && strings.HasPrefix(confirm, gate.TokenPrefix)) {
		if m.approvals != nil {
			m.mine.Spend(confirm)
		}
		return " If the confirm value was an approval code, it is spent; call again without confirm for a new preview."
	}
	_, _ = m.gate.Consume(confirm, tool, nil)
	return " The confirmation token is spent; call again without confirm for a new preview."
}
