package tools

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/journal"
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
	// HumanAbove is WALLETGATE_HUMAN_ABOVE resolved: in human mode, a write
	// spending at most these amounts (and nothing else) confirms with a
	// token. nil: a person approves every write.
	HumanAbove map[common.Address]*big.Int
	assets     map[common.Address]asset
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

// capsRefusal renders a caps error in human units.
func (s *Server) capsRefusal(err error) *Refusal {
	var ce *caps.Error
	if !errors.As(err, &ce) {
		return refuse(caps.CodeNoLedger, "the spend ledger is unavailable (%s); no write can proceed. Nothing was signed or sent.", err)
	}
	if ce.Code == caps.CodeNoLedger {
		return s.ledgerUnavailable(ce.Cause)
	}
	as := s.assetInfo(ce.Asset)
	amt := func(v *big.Int) string { return policy.FormatAmount(v, as.Decimals) + " " + as.Symbol }
	switch ce.Code {
	case caps.CodeExceeded:
		fee := ""
		if ce.Asset == policy.NativeAsset {
			fee = " (ETH spend counts the value plus the maximum network fee: gas limit × max fee per gas)"
		}
		if ce.Window == caps.PerTx {
			return refuse(ce.Code, "this needs %s%s, but the per transaction cap for %s is %s. Nothing was signed or sent. Ask for less, or split it into smaller transactions within the session cap; the operator sets %s.",
				amt(ce.Requested), fee, as.Symbol, amt(ce.Limit), policy.EnvCapPerTx)
		}
		return refuse(ce.Code, "this needs %s%s, but the %s cap for %s is %s and %s is already used, so %s remain. Nothing was signed or sent. Ask for at most the remaining amount; the operator sets %s.",
			amt(ce.Requested), fee, ce.Window, as.Symbol, amt(ce.Limit), amt(ce.Used), amt(ce.Remaining), windowVar(ce.Window))
	case caps.CodeUncapped:
		return refuse(ce.Code, "%s (%s) has no spend cap configured, and walletgate refuses to spend an asset without a cap. Nothing was signed or sent. The operator can add one, e.g. %s=%s=<amount>, or allow uncapped tokens with %s=true.",
			as.Symbol, as.Address.Hex(), policy.EnvCapPerTx, capKey(as), policy.EnvAllowUncappedTokens)
	}
	return refuse(ce.Code, "%s. Nothing was signed or sent.", ce.Error())
}

func windowVar(w caps.Window) string {
	switch w {
	case caps.PerTx:
		return policy.EnvCapPerTx
	case caps.PerSession:
		return policy.EnvCapPerSession
	}
	return policy.EnvCapPerDay
}

func capKey(as asset) string {
	if as.Native {
		return policy.NativeSymbol
	}
	if as.Known {
		return as.Symbol
	}
	return as.Address.Hex()
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
// or written: it says what is wrong and what the operator should do.
func (s *Server) ledgerUnavailable(cause error) *Refusal {
	if cause == nil {
		cause = s.journalErr
	}
	var ue *journal.UnavailableError
	if errors.As(cause, &ue) {
		return refuse(caps.CodeNoLedger, "the spend journal cannot be used: %s. Writes are refused until the operator acts; reads keep working. Nothing was signed or sent. What to do: %s", ue.Reason, ue.Fix)
	}
	if cause != nil {
		return refuse(caps.CodeNoLedger, "the spend journal cannot be used (%s). Writes are refused until the operator acts (check WALLETGATE_STATE_DIR; run walletgate audit verify); reads keep working. Nothing was signed or sent.", cause)
	}
	return refuse(caps.CodeNoLedger, "no spend caps are in force, so walletgate refuses every write. Nothing was signed or sent. The operator sets them with WALLETGATE_CAP_PER_TX, _PER_SESSION and _PER_DAY.")
}
