package tools

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// tier says, in human mode, whether a write needs a person
// (WALLETGATE_HUMAN_ABOVE) — the decision is policy.Tier's, made by the
// engine on the plan's spend and the day's token-confirmed totals — and why,
// in words for the model and the person; "" when no tier is configured (a
// person approves every write). The engine checks the day again when it
// reserves (engine/tier.go).
func (s *Server) tier(p *engine.Plan) (byToken bool, why string) {
	d := s.engine.Tier(p)
	as := s.assetInfo(d.Asset)
	amt := func(v *big.Int) string { return policy.FormatAmount(v, as.Decimals) + " " + as.Symbol }
	extra := ""
	if d.Asset == policy.NativeAsset {
		extra = " (value plus the maximum network fees)"
	}
	switch d.Why {
	case policy.TierNone:
		return false, ""
	case policy.TierUnknownTyped:
		return false, "A PERSON MUST APPROVE this write: walletgate cannot tell what typed data of an unknown kind allows, so it is above every " + policy.EnvHumanAbove + " threshold."
	case policy.TierUncapped:
		return false, fmt.Sprintf("A PERSON MUST APPROVE this write: no cap applies to %s (the operator allowed uncapped tokens), so walletgate cannot bound it and it is above every %s threshold.", as.Symbol, policy.EnvHumanAbove)
	case policy.TierNotNamed:
		return false, fmt.Sprintf("A PERSON MUST APPROVE this write: it spends %s, an asset %s does not name.", as.Symbol, policy.EnvHumanAbove)
	case policy.TierAbove:
		return false, fmt.Sprintf("A PERSON MUST APPROVE this write: it spends up to %s%s, above the %s set by %s.", amt(d.Spend), extra, amt(d.Limit), policy.EnvHumanAbove)
	case policy.TierAboveDay:
		return false, fmt.Sprintf("A PERSON MUST APPROVE this write: it spends up to %s%s, and writes confirmed without the person spent %s in the last 24 hours; together that is above the %s a day set by %s.", amt(d.Spend), extra, amt(d.Used), amt(d.Limit), policy.EnvHumanAbove)
	case policy.TierWithin:
	default: // a decision this code does not know is never "a token suffices"
		return false, "A PERSON MUST APPROVE this write: walletgate could not read what writes confirmed without the person spent in the last 24 hours (the journal), so it cannot show that a token suffices (" + policy.EnvHumanAbove + ")."
	}
	within := make([]string, 0, len(d.Within))
	for _, w := range d.Within {
		as := s.assetInfo(w.Asset)
		amt := func(v *big.Int) string { return policy.FormatAmount(v, as.Decimals) + " " + as.Symbol }
		within = append(within, amt(w.Total)+" ≤ "+amt(w.Limit))
	}
	return true, "A TOKEN SUFFICES for this write, no person is asked: with what was confirmed without the person in the last 24 hours it spends at most " + strings.Join(within, ", ") + " (" + policy.EnvHumanAbove + ", per rolling day; ETH counts the value plus the maximum fees)."
}
