package tools

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// tier decides, in human mode, whether a write needs a person
// (WALLETGATE_HUMAN_ABOVE): a token suffices only when every asset it spends
// is named there, and what it spends (ETH counting the value plus the
// maximum fees, as the caps do) together with what writes confirmed by a
// token alone spent in the last 24 hours stays at or below that amount.
// What walletgate cannot bound — typed data of an unknown kind, a token no
// cap applies to — is above every threshold. why says which applies, in
// words for the model and the person; "" when no tier is configured (a
// person approves every write). The engine checks the day again when it
// reserves (engine/tier.go).
func (s *Server) tier(p *engine.Plan) (byToken bool, why string) {
	limits := s.caps.HumanAbove
	if limits == nil {
		return false, ""
	}
	if p.Sig != nil && p.Sig.Kind == engine.SigUnknownTyped {
		return false, "A PERSON MUST APPROVE this write: walletgate cannot tell what typed data of an unknown kind allows, so it is above every " + policy.EnvHumanAbove + " threshold."
	}
	spend := p.Spend
	day := s.engine.TokenConfirmedDay()
	var within []string
	for _, a := range sortedAssets(spend) {
		as := s.assetInfo(a)
		amt := func(v *big.Int) string { return policy.FormatAmount(v, as.Decimals) + " " + as.Symbol }
		if !s.ledger.Capped(a) {
			return false, fmt.Sprintf("A PERSON MUST APPROVE this write: no cap applies to %s (the operator allowed uncapped tokens), so walletgate cannot bound it and it is above every %s threshold.", as.Symbol, policy.EnvHumanAbove)
		}
		limit, ok := limits[a]
		if !ok {
			return false, fmt.Sprintf("A PERSON MUST APPROVE this write: it spends %s, an asset %s does not name.", as.Symbol, policy.EnvHumanAbove)
		}
		used := day[a]
		if used == nil {
			used = new(big.Int)
		}
		extra := ""
		if a == policy.NativeAsset {
			extra = " (value plus the maximum network fees)"
		}
		if spend[a].Cmp(limit) > 0 {
			return false, fmt.Sprintf("A PERSON MUST APPROVE this write: it spends up to %s%s, above the %s set by %s.", amt(spend[a]), extra, amt(limit), policy.EnvHumanAbove)
		}
		if total := new(big.Int).Add(used, spend[a]); total.Cmp(limit) > 0 {
			return false, fmt.Sprintf("A PERSON MUST APPROVE this write: it spends up to %s%s, and writes confirmed without the person spent %s in the last 24 hours; together that is above the %s a day set by %s.", amt(spend[a]), extra, amt(used), amt(limit), policy.EnvHumanAbove)
		}
		within = append(within, amt(new(big.Int).Add(used, spend[a]))+" ≤ "+amt(limit))
	}
	return true, "A TOKEN SUFFICES for this write, no person is asked: with what was confirmed without the person in the last 24 hours it spends at most " + strings.Join(within, ", ") + " (" + policy.EnvHumanAbove + ", per rolling day; ETH counts the value plus the maximum fees)."
}
