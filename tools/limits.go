package tools

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/policy"
)

// Default cap lists, used for a window whose variable is not set. They are
// deliberately small: an operator who wants more says so.
var (
	DefaultCaps = [3]string{"ETH=0.01", "ETH=0.05", "ETH=0.1"} // per tx, per session, per day
	// DevCaps apply on the embedded dev chain (--dev, demo), whose funds are
	// play money, so the demo can send its tokens.
	DevCaps = [3]string{"ETH=1,USDT=100,DAI=100,WETH=1", "ETH=5,USDT=500,DAI=500,WETH=5", "ETH=10,USDT=1000,DAI=1000,WETH=10"}
)

// Caps are the operator's spend limits resolved to assets and base units, with
// what is needed to show them in human units.
type Caps struct {
	Limits caps.Limits
	assets map[common.Address]asset
}

// ResolveCaps binds the configured cap lists (or defaults, for a window whose
// variable is unset) to this chain: symbols through the known-token table,
// other token addresses through their on-chain decimals.
func ResolveCaps(ctx context.Context, c *chain.Client, cfg policy.Config, defaults [3]string) (Caps, error) {
	chainID := c.ChainID().Uint64()
	out := Caps{assets: map[common.Address]asset{policy.NativeAsset: ethAsset}}
	lists := [3][]policy.CapEntry{cfg.CapPerTx, cfg.CapPerSession, cfg.CapPerDay}
	names := [3]string{policy.EnvCapPerTx, policy.EnvCapPerSession, policy.EnvCapPerDay}
	var resolved [3]map[common.Address]*big.Int
	for i := range lists {
		entries := lists[i]
		if entries == nil {
			var err error
			if entries, err = policy.ParseCapList(defaults[i]); err != nil {
				return Caps{}, fmt.Errorf("default %s: %w", names[i], err)
			}
		}
		m, err := policy.ResolveCapList(entries, chainID, func(a common.Address) (uint8, error) {
			meta, err := c.TokenMeta(ctx, a)
			if err != nil {
				return 0, err
			}
			out.assets[a] = asset{Address: a, Symbol: inert(meta.Symbol, maxSymbolDisplay), Decimals: meta.Decimals}
			return meta.Decimals, nil
		})
		if err != nil {
			return Caps{}, fmt.Errorf("%s: %w", names[i], err)
		}
		resolved[i] = m
		for a := range m {
			if _, ok := out.assets[a]; !ok {
				if t, ok := policy.TokenByAddress(chainID, a); ok {
					out.assets[a] = knownAsset(t)
				}
			}
		}
	}
	out.Limits = caps.Limits{PerTx: resolved[0], PerSession: resolved[1], PerDay: resolved[2]}
	return out, nil
}

// capsRefusal renders a caps error in human units.
func (s *Server) capsRefusal(err error) *Refusal { return s.engine.CapsRefusal(err) }

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

// capUsage is one asset's cap in one window, in human units.
type capUsage struct {
	Asset     string `json:"asset"`
	Symbol    string `json:"symbol"`
	Window    string `json:"window"`
	Limit     string `json:"limit"`
	Used      string `json:"used"`
	Remaining string `json:"remaining"`
}

// capUsages lists every capped window of every asset, ETH first.
func (s *Server) capUsages() []capUsage {
	out := []capUsage{}
	for _, a := range s.ledger.Assets() {
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

// assetID is "ETH" or the token address.
func assetID(as asset) string {
	if as.Native {
		return policy.NativeSymbol
	}
	return as.Address.Hex()
}

// capsHint describes, for a tool's amount argument, the caps that apply: the
// same numbers the ledger enforces, read from the same Limits.
func (s *Server) capsHint() string {
	var parts []string
	for _, a := range s.ledger.Assets() {
		as := s.assetInfo(a)
		var w []string
		for _, u := range s.ledger.Usage(a) {
			if u.Limit != nil {
				w = append(w, policy.FormatAmount(u.Limit, as.Decimals)+" "+u.Window.String())
			}
		}
		if len(w) > 0 {
			parts = append(parts, as.Symbol+": at most "+strings.Join(w, ", "))
		}
	}
	hint := "Caps: " + strings.Join(parts, "; ") + ". ETH spend counts the network fee too."
	if s.cfg.AllowUncappedTokens {
		hint += " Tokens not listed have NO cap (the operator allowed that)."
	} else {
		hint += " Tokens not listed are refused."
	}
	return hint
}

// ledgerUnavailable refuses a write because the journal cannot be trusted
// or written.
func (s *Server) ledgerUnavailable(cause error) *Refusal { return s.engine.LedgerUnavailable(cause) }
