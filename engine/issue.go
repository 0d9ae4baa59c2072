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
// a confirm proceeds only when both calls return nil; anything else denies.
type Asker interface {
	// Redeem turns what the confirm carried into the gate token of the
	// preview it confirms: in token mode the token itself, in human mode
	// the token of the preview the person approved with that code.
	Redeem(ctx context.Context, confirm, tool string, canonical []byte) (string, *Refusal)
	// Ask is called after the token is consumed and the policy passed.
	Ask(ctx context.Context, p *Plan) *Refusal
}

// TokenMode is the confirmation mode in which the token is the approval.
type TokenMode struct{}

// Redeem returns the token as it came.
func (TokenMode) Redeem(_ context.Context, confirm, _ string, _ []byte) (string, *Refusal) {
	return confirm, nil
}

// Ask approves: holding the token was the approval.
func (TokenMode) Ask(context.Context, *Plan) *Refusal { return nil }
