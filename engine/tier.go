package engine

// The person's threshold (WALLETGATE_HUMAN_ABOVE) over a rolling day. Rules
// of this file: a write confirmed by a token alone is recorded so (its
// cap_reserve carries by "token"); what such writes spent in the last 24 h,
// per asset, plus the new write must stay at or below the threshold, checked
// inside the reservation's locked step so that concurrent confirms, in one
// process or several, cannot pass it together. Splitting a payment does not
// pass it; what walletgate cannot bound never goes by token (Tier decides
// that at preview). The rule is policy.Tier, at preview and here.

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/policy"
)

// ConfirmedByToken is how a reservation confirmed by a token alone is
// recorded.
const ConfirmedByToken = "token"

// CodePersonRequired: a token alone cannot confirm this write now.
const CodePersonRequired = "PERSON_REQUIRED"

// tierError is a token-confirmed reservation the rolling threshold refuses.
type tierError struct {
	asset        Asset
	spend, used  *big.Int
	limit        *big.Int
	notThreshold bool // the asset is not named by the threshold at all
}

func (e *tierError) Error() string { return "above the person's threshold" }

// tokenDaySum is what reservations confirmed by a token spent since since,
// per asset: their reservations and later corrections.
func tokenDaySum(live *records.Live, since time.Time) (caps.Spend, error) {
	ids := map[string]bool{}
	for _, c := range live.Caps {
		if c.Kind == KindCapReserve && c.By == ConfirmedByToken && !c.At.Before(since) {
			ids[c.ID] = true
		}
	}
	total := caps.Spend{}
	for _, c := range live.Caps {
		if !ids[c.ID] || c.At.Before(since) {
			continue
		}
		s, err := DecodeSpend(c.Change)
		if err != nil {
			return nil, fmt.Errorf("journal record %d: %w", c.Seq, err)
		}
		for a, v := range s {
			addTo(total, a, v)
		}
	}
	return total, nil
}

// checkTier refuses change, a reservation confirmed by a token, when with
// what token-confirmed writes spent since since it passes the threshold
// (policy.Tier, as at preview).
func (e *Engine) checkTier(live *records.Live, since time.Time, change caps.Spend) error {
	used, err := tokenDaySum(live, since)
	if err != nil {
		return err
	}
	spend := caps.Spend{}
	for a, v := range change {
		if v.Sign() != 0 {
			spend[a] = v
		}
	}
	limits := e.humanAbove
	if limits == nil { // no threshold names anything: a token confirms nothing alone
		limits = map[common.Address]*big.Int{}
	}
	d := policy.Tier(policy.TierInput{HumanAbove: limits, Spend: spend, Day: used})
	switch d.Why {
	case policy.TierNotNamed:
		return &tierError{asset: e.asset(d.Asset), spend: d.Spend, used: d.Used, notThreshold: true}
	case policy.TierAbove, policy.TierAboveDay:
		return &tierError{asset: e.asset(d.Asset), spend: d.Spend, used: d.Used, limit: d.Limit}
	}
	return nil
}

// TokenConfirmedDay is what writes confirmed by a token alone spent in the
// rolling day, per asset (for the preview's tier decision). An error says it
// could not be read: the preview then asks the person (fail closed).
func (e *Engine) TokenConfirmedDay() (caps.Spend, error) {
	var out caps.Spend
	err := e.rec.View(func(live *records.Live) error {
		var err error
		out, err = tokenDaySum(live, e.now().Add(-24*time.Hour))
		return err
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = caps.Spend{}
	}
	return out, nil
}

// tierRefusal renders a tierError.
func tierRefusal(err error) (*Refusal, bool) {
	var te *tierError
	var ce *caps.Error
	if errors.As(err, &ce) && ce.Cause != nil {
		err = ce.Cause // the ledger carries what its store refused
	}
	if !errors.As(err, &te) {
		return nil, false
	}
	as := te.asset
	amt := func(v *big.Int) string { return as.Format(v) + " " + as.Marked() }
	if te.notThreshold {
		return Refuse(CodePersonRequired, "this write spends %s, an asset %s does not name, so a token alone cannot confirm it. Nothing was signed or sent. The person approves it: call the tool again without confirm for a new preview, which goes to them.", as.Marked(), policy.EnvHumanAbove), true
	}
	return Refuse(CodePersonRequired, "this write spends up to %s, and writes confirmed without the person spent %s in the last 24 hours: together above the %s the operator lets the model confirm alone in a day (%s). Nothing was signed or sent. The person approves it: call the tool again without confirm for a new preview, which goes to them.",
		amt(te.spend), amt(te.used), amt(te.limit), policy.EnvHumanAbove), true
}

// tierFor is the rolling threshold check for a reservation confirmed by
// by: nil unless a token alone confirmed it.
func (e *Engine) tierFor(by string) func(*records.Live, time.Time, caps.Spend) error {
	if by != ConfirmedByToken {
		return nil
	}
	return e.checkTier
}

// TokenConfirmer is an Asker that can say the confirm it approved was a
// token's alone, without the person (human mode's tiers).
type TokenConfirmer interface {
	ConfirmedByToken() bool
}

// confirmedBy is how the asker approved: ConfirmedByToken, or "".
func confirmedBy(ask Asker) string {
	if tc, ok := ask.(TokenConfirmer); ok && tc.ConfirmedByToken() {
		return ConfirmedByToken
	}
	return ""
}
