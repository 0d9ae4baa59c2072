package engine

import (
	"context"
	"encoding/hex"
	"time"

	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/journal/records"
)

// Issue records the preview, then issues its token, bound to the tool and
// canonical arguments, with p as what the confirm will execute. A preview
// that cannot be recorded is refused.
func (e *Engine) Issue(tool string, canonical []byte, p *Plan) (string, time.Time, *Refusal) {
	fp := gate.Fingerprint(tool, canonical)
	p.Tool = tool
	if err := e.Record(KindPreview, PreviewRecord{V: records.Version, Tool: tool, Fingerprint: hex.EncodeToString(fp[:]), Legs: len(p.Legs), Spend: EncodeSpend(p.Spend), ConfirmBy: p.ConfirmBy}); err != nil {
		return "", time.Time{}, e.LedgerUnavailable(err)
	}
	token, expires, err := e.gate.Issue(tool, canonical, p)
	if err != nil {
		return "", time.Time{}, GateRefusal(err)
	}
	return token, expires, nil
}

// Asker is how a confirmation mode says yes, in the shape of Clef's UI API:
// a confirm proceeds only when Redeem returns no refusal and Ask returns an
// Approval that approves; anything else, the zero Approval included, denies.
type Asker interface {
	// Redeem turns what the confirm carried into the gate token of the
	// preview it confirms: in token mode the token itself, in human mode
	// the token of the preview the person approved with that code.
	Redeem(ctx context.Context, confirm, tool string, canonical []byte) (string, *Refusal)
	// Ask is called after the token is consumed and the policy passed.
	Ask(ctx context.Context, p *Plan) Approval
}

// Approval is a confirmation mode's answer to Ask. Its zero value denies:
// only Approved with no Refusal lets a confirm go on. A denial says why in
// Refusal (a generic refusal when it is nil).
type Approval struct {
	Approved bool
	Refusal  *Refusal
}

// Approve is the answer that lets a confirm go on.
func Approve() Approval { return Approval{Approved: true} }

// Deny is the answer that stops a confirm, saying why.
func Deny(why *Refusal) Approval { return Approval{Refusal: why} }

// CodeNotApproved: the confirmation mode's answer approved nothing.
const CodeNotApproved = "NOT_APPROVED"

// Denial is what stops a confirm after a, or nil when a approves.
func (a Approval) Denial() *Refusal {
	switch {
	case a.Refusal != nil:
		return a.Refusal
	case !a.Approved:
		return Refuse(CodeNotApproved, "the confirmation mode did not approve this write. Nothing was signed or sent. Call the tool again without confirm for a new preview.")
	}
	return nil
}

// TokenMode is the confirmation mode in which the token is the approval.
type TokenMode struct{}

// Redeem returns the token as it came.
func (TokenMode) Redeem(_ context.Context, confirm, _ string, _ []byte) (string, *Refusal) {
	return confirm, nil
}

// Ask approves: holding the token was the approval.
func (TokenMode) Ask(context.Context, *Plan) Approval { return Approve() }
