package engine

// The policy step of the sequence: the operator's rules (package policy
// decides them, as pure functions) applied by the engine to the plan's
// recipient, to its effects, and to the allowances it grants; and the asset
// table the engine names assets with. Rules of this file: the decisions are
// policy's; only their words are here.

import (
	"context"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/policy"
)

// maxSymbolDisplay bounds a token symbol read from a contract (untrusted).
const maxSymbolDisplay = 16

// Allowed is the policy check every write makes at preview, before
// anything is read or built, and again at confirm: writes on, the network
// allowed, the recipient to (nil: the wallet itself, as for a swap's output,
// or a revoke) on the allow-list.
func (e *Engine) Allowed(to *common.Address) *Refusal {
	if e.rules == nil {
		return nil
	}
	d := policy.WriteAllowed(*e.rules, to)
	if d == nil {
		return nil
	}
	switch d.Code {
	case policy.CodeWritesDisabled:
		return Refuse(d.Code, "write tools are not available: %s. Nothing was signed or sent.", d.Off)
	case policy.CodeMainnetNotAllowed:
		return Refuse(d.Code, "%s (chain id %d) is a value-bearing network (%s) and the operator has not allowed writes on it. Nothing was signed or sent. The operator can allow it with %s=true.",
			d.Network.Name, e.chainID.Uint64(), d.Network.Marker(), policy.EnvAllowMainnet)
	}
	return Refuse(d.Code, "recipient %s is not on the operator's allow-list (%s). Nothing was signed or sent. Send to an allowed address, or ask the operator to add it to %s.",
		d.To.Hex(), hexList(d.AllowTo), policy.EnvAllowTo)
}

func hexList(as []common.Address) string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Hex()
	}
	return strings.Join(out, ", ")
}

// PerTxCap is the token's per-transaction cap, or nil when none applies.
func (e *Engine) PerTxCap(token common.Address) *big.Int {
	for _, u := range e.ledger.Usage(token) {
		if u.Limit != nil && u.Window == caps.PerTx {
			return u.Limit
		}
	}
	return nil
}

// exposureAllowed refuses a plan whose effects leave an unlimited
// allowance, or one above the token's per-transaction cap
// (policy.CheckExposure).
func (e *Engine) exposureAllowed(ch *Changes) *Refusal {
	for _, p := range sortedPairs(ch.Exposure) {
		v := ch.Exposure[p]
		d := policy.CheckExposure(v, e.PerTxCap(p.Token))
		if d == nil {
			continue
		}
		as := e.asset(p.Token)
		if d.Unlimited {
			return Refuse(d.Code, "this would let %s move an UNLIMITED amount of %s (%s) from the wallet. walletgate approves exact amounts only. Nothing was signed or sent. Approve exactly what the next step needs (wallet_approve with an amount).",
				p.Spender.Hex(), as.Marked(), p.Token.Hex())
		}
		return Refuse(d.Code, "this would let %s move %s %s, above the per transaction cap of %s %s. Nothing was signed or sent. Approve at most %s, or ask the operator to raise %s.",
			p.Spender.Hex(), as.Format(v), as.Marked(), as.Format(d.Limit), as.Marked(), as.Format(d.Limit), policy.EnvCapPerTx)
	}
	return nil
}

// Tier is the person's threshold decision for p at preview (human mode,
// WALLETGATE_HUMAN_ABOVE): policy.Tier on what p spends, what writes
// confirmed by a token alone spent in the rolling day, and which assets no
// cap applies to. The engine checks the day again when it reserves.
func (e *Engine) Tier(p *Plan) policy.TierDecision {
	in := policy.TierInput{HumanAbove: e.humanAbove, UnknownTyped: p.Sig != nil && p.Sig.Kind == SigUnknownTyped, Spend: p.Spend}
	if in.HumanAbove == nil || in.UnknownTyped {
		return policy.Tier(in)
	}
	day, err := e.TokenConfirmedDay()
	if err != nil {
		// Unknown is never "within": the person approves.
		e.log.Warn("what writes confirmed by a token spent today could not be read; the person approves this write", "err", Inert(err.Error(), 200))
		return policy.TierDecision{Why: policy.TierDayUnknown}
	}
	in.Day = day
	in.Uncapped = map[common.Address]bool{}
	for a := range p.Spend {
		if !e.ledger.Capped(a) {
			in.Uncapped[a] = true
		}
	}
	return policy.Tier(in)
}

// Asset is the display of an asset by address: ETH, a token of walletgate's
// table, or one read from the chain (its metadata is cached; its symbol is
// untrusted and made inert).
func (e *Engine) Asset(a common.Address) Asset { return e.asset(a) }

func (e *Engine) asset(a common.Address) Asset {
	if a == policy.NativeAsset {
		return ETH
	}
	if a == policy.USDAsset {
		return USD
	}
	if t, ok := policy.TokenByAddress(e.chainID.Uint64(), a); ok {
		return KnownAsset(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	meta, err := e.chain.TokenMeta(ctx, a)
	if err != nil {
		return Asset{Address: a, Symbol: a.Hex()}
	}
	return Asset{Address: a, Symbol: Inert(meta.Symbol, maxSymbolDisplay), Decimals: meta.Decimals}
}

// sortedPairs are m's pairs by token, then spender.
func sortedPairs(m map[Pair]*big.Int) []Pair {
	out := make([]Pair, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if c := out[i].Token.Cmp(out[j].Token); c != 0 {
			return c < 0
		}
		return out[i].Spender.Cmp(out[j].Spender) < 0
	})
	return out
}
