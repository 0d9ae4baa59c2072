package engine

// Effects, not intents, bound the caps. Rules of this file: a traced plan is
// simulated with eth_simulateV1 (ETH movements traced) inside one block that
// also reads, before and after the plan's calls, the allowance of every
// (token, spender) pair the plan may touch — the pairs its calldata approves
// and those its simulated Approval logs reveal. What leaves the wallet (ETH
// value, every ERC-20 Transfer from it) is an outflow; an allowance the
// wallet ends the plan with above where it started is an exposure (the
// spender can move that much without asking again). Outflows and exposures
// are what the caps reserve; the confirm re-simulates and refuses if any grew
// or a new asset appeared; the receipts are checked against them.

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/policy"
)

// CodeEffectsChanged: the confirm's simulation moves more, or more assets,
// than the preview's did.
const CodeEffectsChanged = "EFFECTS_CHANGED"

// Pair is an allowance: what Spender may move of Token's, for the wallet.
type Pair struct{ Token, Spender common.Address }

// Changes are what a plan does to the wallet's assets.
type Changes struct {
	Out      caps.Spend        // per asset (policy.NativeAsset for ETH): what leaves the wallet
	In       caps.Spend        // what arrives
	Exposure map[Pair]*big.Int // allowances the wallet ends with above where they were: the new value
	Before   map[Pair]*big.Int // those allowances before the plan
	Approved map[Pair]*big.Int // every allowance the plan leaves set, by pair (revokes and lowerings included)
	Calls    []chain.Traced    // the simulation, call by call
	Spender  map[common.Address]string
}

// Spend is what the caps reserve for these changes, besides gas: every
// outflow, and every exposure, summed per token.
func (c Changes) Spend() caps.Spend {
	s := caps.Spend{}
	for a, v := range c.Out {
		s[a] = new(big.Int).Set(v)
	}
	for p, v := range c.Exposure {
		if cur, ok := s[p.Token]; ok {
			cur.Add(cur, v)
		} else {
			s[p.Token] = new(big.Int).Set(v)
		}
	}
	return s
}

// Grew says how now exceeds the bound: an outflow or exposure larger, or an
// asset or spender that was not there. "" when it does not.
func (bound Changes) Grew(now Changes, asset func(common.Address) Asset) string {
	var why []string
	for a, v := range now.Out {
		was, ok := bound.Out[a]
		if !ok {
			why = append(why, fmt.Sprintf("it now also moves %s %s out of the wallet", asset(a).Format(v), asset(a).Marked()))
		} else if v.Cmp(was) > 0 {
			why = append(why, fmt.Sprintf("it now moves %s %s out of the wallet, not %s", asset(a).Format(v), asset(a).Marked(), asset(a).Format(was)))
		}
	}
	for p, v := range now.Exposure {
		was, ok := bound.Exposure[p]
		if !ok || v.Cmp(was) > 0 {
			why = append(why, fmt.Sprintf("it now lets %s move %s %s", p.Spender.Hex(), asset(p.Token).Format(v), asset(p.Token).Marked()))
		}
	}
	sort.Strings(why)
	return strings.Join(why, "; ")
}

// approveSelector is ERC-20 approve(address,uint256).
var approveSelector = []byte{0x09, 0x5e, 0xa7, 0xb3}

// approvedPairs are the pairs the legs' calldata approves directly.
func approvedPairs(legs []Leg) []Pair {
	var out []Pair
	for _, l := range legs {
		d := l.Call.Data
		if len(d) == 4+64 && string(d[:4]) == string(approveSelector) {
			out = append(out, Pair{Token: l.Call.To, Spender: common.BytesToAddress(d[4:36])})
		}
	}
	return out
}

// Trace simulates legs in sequence on the latest state with the probes, in
// one round trip — two when the logs reveal a token or an approval that the
// calldata did not show — and returns the state and the wallet's changes. A
// revert is a Refusal explained by explain.
func (e *Engine) Trace(ctx context.Context, legs []Leg, explain func(*chain.RevertError) *Refusal, views ...*chain.View) (chain.SendState, Changes, *Refusal) {
	pr := probes{pairs: approvedPairs(legs)}
	seen := map[common.Address]bool{}
	for _, t := range append(legCallTargets(legs), e.known...) {
		if !seen[t] {
			seen[t] = true
			pr.tokens = append(pr.tokens, t)
		}
	}
	for round := 0; ; round++ {
		st, ch, more, ref := e.traceWith(ctx, legs, pr, explain, views...)
		if ref != nil || (len(more.pairs) == 0 && len(more.tokens) == 0) {
			return st, ch, ref
		}
		if round == 1 {
			return st, ch, Refuse(CodeSimulationReverted, "the simulation keeps revealing new tokens or approvals; walletgate cannot bound what this does. Nothing was signed or sent.")
		}
		pr.pairs = append(pr.pairs, more.pairs...)
		pr.tokens = append(pr.tokens, more.tokens...)
	}
}

// legCallTargets are the contracts the legs call.
func legCallTargets(legs []Leg) []common.Address {
	out := make([]common.Address, len(legs))
	for i, l := range legs {
		out[i] = l.Call.To
	}
	return out
}

// probes are what a traced simulation reads before and after the plan:
// allowances of pairs, and the wallet's balance of tokens (a token can move
// a balance without a Transfer log: WETH9's withdraw).
type probes struct {
	pairs  []Pair
	tokens []common.Address
}

func (pr probes) calls(from common.Address) []chain.Call {
	var out []chain.Call
	for _, p := range pr.pairs {
		out = append(out, chain.Call{From: from, To: p.Token, Data: chain.AllowanceView(p.Token, from, p.Spender).Data})
	}
	for _, t := range pr.tokens {
		out = append(out, chain.Call{From: from, To: t, Data: chain.BalanceOfData(from)})
	}
	return out
}

// traceWith is one traced simulation with pr; it also returns the tokens and
// approvals the logs show that pr lacks.
func (e *Engine) traceWith(ctx context.Context, legs []Leg, pr probes, explain func(*chain.RevertError) *Refusal, views ...*chain.View) (chain.SendState, Changes, probes, *Refusal) {
	from := legs[0].Call.From
	pc := pr.calls(from)
	calls := append(append(append([]chain.Call{}, pc...), legCalls(legs)...), pc...)
	st, res, err := e.chain.StateAndTrace(ctx, from, calls, views...)
	if err != nil {
		return st, Changes{}, probes{}, RPCRefusal(err)
	}
	n, m := len(pc), len(legs)
	for _, r := range res[n : n+m] {
		if r.Revert != nil {
			return st, Changes{}, probes{}, e.revertRefusal(explain, r.Revert)
		}
	}
	before, after := res[:n], res[n+m:]
	ch := Changes{Out: caps.Spend{}, In: caps.Spend{}, Exposure: map[Pair]*big.Int{}, Before: map[Pair]*big.Int{}, Approved: map[Pair]*big.Int{},
		Calls: res[n : n+m]}
	read := func(r chain.Traced) (*big.Int, bool) {
		if r.Revert != nil || len(r.Return) != 32 {
			return nil, false
		}
		v, err := chain.DecodeUint256(r.Return)
		return v, err == nil
	}
	known := map[Pair]bool{}
	for i, p := range pr.pairs {
		known[p] = true
		b, ok1 := read(before[i])
		a, ok2 := read(after[i])
		if !ok1 || !ok2 {
			return st, Changes{}, probes{}, Refuse(CodeSimulationReverted, "the allowance of %s for %s could not be read in the simulation: %s is not a working ERC-20 token. Nothing was signed or sent.", p.Token.Hex(), p.Spender.Hex(), p.Token.Hex())
		}
		ch.Before[p], ch.Approved[p] = b, a
		if a.Cmp(b) > 0 {
			ch.Exposure[p] = a
		}
	}
	add := func(m caps.Spend, a common.Address, v *big.Int) {
		if cur, ok := m[a]; ok {
			cur.Add(cur, v)
		} else {
			m[a] = new(big.Int).Set(v)
		}
	}
	var more probes
	probed := map[common.Address]bool{}
	for _, t := range pr.tokens {
		probed[t] = true
	}
	for _, r := range ch.Calls {
		for _, t := range r.Transfers {
			asset := t.Token
			if asset == chain.ETHTransferLog {
				asset = policy.NativeAsset
			} else if !probed[asset] {
				probed[asset] = true
				more.tokens = append(more.tokens, asset)
			}
			if t.From == from && t.To != from {
				add(ch.Out, asset, t.Amount)
			}
			if t.To == from && t.From != from {
				add(ch.In, asset, t.Amount)
			}
		}
		for _, a := range r.Approvals {
			p := Pair{Token: a.Token, Spender: a.Spender}
			if a.Owner == from && !known[p] {
				known[p] = true
				more.pairs = append(more.pairs, p)
			}
		}
	}
	// A balance that fell by more than the logs show counts as what fell;
	// one that rose by more (WETH9's deposit logs no Transfer) as what rose.
	for i, t := range pr.tokens {
		b, ok1 := read(before[len(pr.pairs)+i])
		a, ok2 := read(after[len(pr.pairs)+i])
		if !ok1 || !ok2 || a.Cmp(b) == 0 {
			continue
		}
		m, d := ch.Out, new(big.Int).Sub(b, a)
		if d.Sign() < 0 {
			m, d = ch.In, d.Neg(d)
		}
		if cur, ok := m[t]; !ok || cur.Cmp(d) < 0 {
			m[t] = d
		}
	}
	return st, ch, more, nil
}

func legCalls(legs []Leg) []chain.Call {
	out := make([]chain.Call, len(legs))
	for i, l := range legs {
		out[i] = l.Call
	}
	return out
}

// receiptChanges are the outflows the receipts of a plan's legs show: ETH
// value sent, and every ERC-20 Transfer from the wallet.
func receiptChanges(wallet common.Address, infos []*chain.TxInfo) caps.Spend {
	out := caps.Spend{}
	add := func(a common.Address, v *big.Int) {
		if v.Sign() == 0 {
			return
		}
		if cur, ok := out[a]; ok {
			cur.Add(cur, v)
		} else {
			out[a] = new(big.Int).Set(v)
		}
	}
	for _, info := range infos {
		if info.Value != nil {
			add(policy.NativeAsset, info.Value)
		}
		for _, t := range info.Transfers {
			if t.From == wallet && t.To != wallet {
				add(t.Token, t.Amount)
			}
		}
	}
	return out
}
