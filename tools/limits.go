package tools

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// Default cap lists, used for a window whose variable is not set: the one
// table in policy, which --help and the README state too.
var (
	DefaultCaps = policy.DefaultCaps // per tx, per session, per day
	DevCaps     = policy.DevCaps     // on the embedded dev chain (--dev, demo)
)

// Caps are the operator's spend limits resolved to assets and base units, with
// what is needed to show them in human units.
type Caps struct {
	Limits caps.Limits
	// HumanAbove is WALLETGATE_HUMAN_ABOVE resolved: in human mode, a write
	// spending at most these amounts (and nothing else) confirms with a
	// token. nil: a person approves every write.
	HumanAbove map[common.Address]*big.Int
	// Prices price assets in USD when a window caps USD (engine.Pricing).
	Prices *engine.Pricing
	assets map[common.Address]asset
}

// ResolveCaps binds the configured cap lists (or defaults, for a window whose
// variable is unset) to this chain: symbols through the known-token table,
// other token addresses through their on-chain decimals. Every capped asset
// has every window (policy.ResolveCapWindows), or it refuses.
func ResolveCaps(ctx context.Context, c *chain.Client, cfg policy.Config, defaults [3]string) (Caps, error) {
	chainID := c.ChainID().Uint64()
	out := Caps{assets: map[common.Address]asset{policy.NativeAsset: ethAsset, policy.USDAsset: engine.USD}}
	lists := [3][]policy.CapEntry{cfg.CapPerTx, cfg.CapPerSession, cfg.CapPerDay}
	resolved, err := policy.ResolveCapWindows(lists, defaults, chainID, func(a common.Address) (uint8, error) {
		meta, err := c.TokenMeta(ctx, a)
		if err != nil {
			return 0, err
		}
		out.assets[a] = asset{Address: a, Symbol: inert(meta.Symbol, maxSymbolDisplay), Decimals: meta.Decimals}
		return meta.Decimals, nil
	})
	if err != nil {
		return Caps{}, err
	}
	for _, m := range resolved {
		for a := range m {
			if _, ok := out.assets[a]; !ok {
				if t, ok := policy.TokenByAddress(chainID, a); ok {
					out.assets[a] = knownAsset(t)
				}
			}
		}
	}
	out.Limits = caps.Limits{PerTx: resolved[0], PerSession: resolved[1], PerDay: resolved[2]}
	if usdCapped(resolved) {
		if out.Prices, err = engine.PricingFor(chainID, cfg); err != nil {
			return Caps{}, err
		}
	}
	if cfg.HumanAbove != nil {
		m, err := policy.ResolveCapList(cfg.HumanAbove, chainID, func(a common.Address) (uint8, error) {
			meta, err := c.TokenMeta(ctx, a)
			if err != nil {
				return 0, err
			}
			out.assets[a] = asset{Address: a, Symbol: inert(meta.Symbol, maxSymbolDisplay), Decimals: meta.Decimals}
			return meta.Decimals, nil
		})
		if err != nil {
			return Caps{}, fmt.Errorf("%s: %w", policy.EnvHumanAbove, err)
		}
		for a := range m {
			if _, ok := out.assets[a]; !ok {
				if t, ok := policy.TokenByAddress(chainID, a); ok {
					out.assets[a] = knownAsset(t)
				}
			}
		}
		out.HumanAbove = m
	}
	return out, nil
}

// Canonical is the canonical form of these caps with allowUncapped
// (caps.Canonical): what hosts sharing one wallet compare.
func (c Caps) Canonical(allowUncapped bool) string {
	return caps.Canonical(c.Limits, allowUncapped, func(a common.Address) uint8 {
		if as, ok := c.assets[a]; ok {
			return as.Decimals
		}
		if a == policy.NativeAsset {
			return ethAsset.Decimals
		}
		return 0
	})
}

// assetInfo is the display info of an asset by address.
func (s *Server) assetInfo(a common.Address) asset {
	if as, ok := s.caps.assets[a]; ok {
		return as
	}
	if a == policy.NativeAsset {
		return ethAsset
	}
	if t, ok := policy.TokenByAddress(s.chainID, a); ok {
		return knownAsset(t)
	}
	return asset{Address: a, Symbol: a.Hex(), Decimals: 0}
}

// displayAsset is the engine's asset table: a token outside walletgate's
// table read from the chain (its metadata is cached).
func (s *Server) displayAsset(a common.Address) asset { return s.engine.Asset(a) }

// capUsage is one asset's cap in one window, in human units.
type capUsage struct {
	Asset     string `json:"asset" jsonschema:"ETH or the token address"`
	Symbol    string `json:"symbol" jsonschema:"the asset's symbol"`
	Window    string `json:"window" enum:"per transaction|per session|per day" jsonschema:"the window"`
	Limit     string `json:"limit" pattern:"amount" jsonschema:"the cap, a decimal string"`
	Used      string `json:"used" pattern:"amount" jsonschema:"settled plus reserved spend in this window (always 0 per transaction)"`
	Remaining string `json:"remaining" pattern:"amount" jsonschema:"what may still be spent in this window"`
}

// capUsages lists every capped window of every asset, ETH first.
func (s *Server) capUsages() []capUsage { return s.capUsagesOf(s.ledger.Assets()) }

// capUsagesOf lists every capped window of each of assets, in their order.
func (s *Server) capUsagesOf(assets []common.Address) []capUsage {
	out := []capUsage{}
	for _, a := range assets {
		as := s.assetInfo(a)
		for _, u := range s.ledger.Usage(a) {
			if u.Limit == nil {
				continue
			}
			out = append(out, capUsage{
				Asset: assetID(as), Symbol: as.Symbol, Window: u.Window.String(),
				Limit:     policy.FormatAmount(u.Limit, as.Decimals),
				Used:      policy.FormatAmount(u.Used, as.Decimals),
				Remaining: policy.FormatAmount(u.Remaining, as.Decimals),
			})
		}
	}
	return out
}

// assetID is "ETH", "USD" or the token address.
func assetID(as asset) string { return as.ID() }

// usdCapped says whether any window caps USD.
func usdCapped(windows [3]map[common.Address]*big.Int) bool {
	for _, m := range windows {
		if _, ok := m[policy.USDAsset]; ok {
			return true
		}
	}
	return false
}

// capped is what a write tool's argument says of the caps. The caps
// themselves are said once, in the server's instructions (capsHint), and
// wallet_policy answers each with what is used and what remains; not in
// every tool: six copies were 2.6 KB of every tools/list.
const capped = "counts against the caps (see wallet_policy)."

// twoCalls is how every write tool is called.
const twoCalls = "Previews first (nothing signed); only if the user agrees, repeat the call with confirm."

// capsInstructions is the caps sentence for the server's instructions, when
// there are writes it bounds.
func (s *Server) capsInstructions() string {
	if !s.writesEnabled() {
		return ""
	}
	return " " + s.capsHint()
}

// capsHint states the caps: the same numbers the ledger enforces, read from
// the same Limits.
func (s *Server) capsHint() string {
	var parts, names []string
	for _, w := range caps.Windows() {
		names = append(names, w.String())
	}
	for _, a := range s.ledger.Assets() {
		as := s.assetInfo(a)
		var w []string
		set := false
		// limits only: the tools' descriptions are built at start-up, which
		// must not wait on the journal for what was spent
		for _, lim := range s.ledger.Limits(a) {
			if lim == nil {
				w = append(w, "none")
				continue
			}
			w, set = append(w, policy.FormatAmount(lim, as.Decimals)), true
		}
		if set {
			parts = append(parts, as.Symbol+" "+strings.Join(w, " / "))
		}
	}
	hint := "Caps (" + strings.Join(names, " / ") + "): " + strings.Join(parts, "; ") + ". ETH spend counts the network fee too."
	if s.cfg.AllowUncappedTokens {
		hint += " Tokens not listed have NO cap (the operator allowed that)."
	} else {
		hint += " Tokens not listed are refused."
	}
	return hint
}
