package engine

// The operator's recipient allow-list (WALLETGATE_ALLOW_TO), applied to
// effects. Rules of this file: every address a plan gives value to — the
// recipient it names, ETH or a token leaving the wallet for it in the
// simulation, a spender whose allowance the plan raises — is checked, at
// preview, at confirm (on the re-simulation) and against the receipts, in
// this one place for every write kind; only the counterparties a write kind
// takes from walletgate's own table (a swap's router) are not.

import (
	"fmt"
	"sort"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/policy"
)

// given is one address a plan gives value to, and what.
type given struct {
	to   common.Address
	what string
}

// recipients are the addresses ch gives value to, each with what it gets,
// in address order.
func (e *Engine) recipients(ch *Changes) []given {
	if ch == nil {
		return nil
	}
	wallet := e.address
	byAddr := map[common.Address][]string{}
	for _, c := range ch.Calls {
		for _, t := range c.Transfers {
			if t.From != wallet || t.To == wallet {
				continue
			}
			asset := t.Token
			if asset == chain.ETHTransferLog {
				asset = policy.NativeAsset
			}
			as := e.asset(asset)
			byAddr[t.To] = append(byAddr[t.To], as.Format(t.Amount)+" "+as.Marked())
		}
	}
	for p, v := range ch.Exposure {
		as := e.asset(p.Token)
		byAddr[p.Spender] = append(byAddr[p.Spender], "an allowance of "+as.Format(v)+" "+as.Marked())
	}
	out := make([]given, 0, len(byAddr))
	for a, whats := range byAddr {
		w := whats[0]
		for _, x := range whats[1:] {
			w += ", " + x
		}
		out = append(out, given{to: a, what: w})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].to.Cmp(out[j].to) < 0 })
	return out
}

// CodePayeeNotAllowed: an x402 payee the operator's payees do not allow.
const CodePayeeNotAllowed = "X402_PAYEE_NOT_ALLOWED"

// PayeeAllowed checks an x402 payment's payee against the operator's payees
// (WALLETGATE_ALLOW_PAY_TO): at preview, for each option, and again at
// confirm for the plan's Payment.
func (e *Engine) PayeeAllowed(payTo common.Address, host string) *Refusal {
	var allowed policy.PayeesAllowed
	if e.rules != nil {
		allowed = e.rules.AllowPayTo
	}
	if allowed.Allows(payTo, host) {
		return nil
	}
	if pin, ok := allowed.Pinned(host); ok {
		return Refuse(CodePayeeNotAllowed, "the requirement pays %s, but the operator pinned %s to the payee %s (%s). The resource URL is written by the server asking to be paid, so a server that claims this host and names another payee is not paid. Nothing was signed. If %s is the resource's real payee, ask the operator to change its pin in %s.",
			payTo.Hex(), Inert(host, 100), pin.Hex(), policy.EnvAllowPayTo, payTo.Hex(), policy.EnvAllowPayTo)
	}
	return Refuse(CodePayeeNotAllowed, "the payee %s (the requirement's payTo; its resource says it is at %s) is not among the operator's allowed payees (%s). Nothing was signed. Ask the operator to add the address to %s (alone, or pinned to its host: host=%s).",
		payTo.Hex(), Inert(host, 100), allowed, policy.EnvAllowPayTo, payTo.Hex())
}

// recipientsAllowed checks the plan's named recipient and every address
// ch gives value to against the operator's allow-list, and an x402
// payment's payee against the operator's payees.
func (e *Engine) recipientsAllowed(p *Plan, ch *Changes) *Refusal {
	if ref := e.Allowed(p.Recipient); ref != nil {
		return ref
	}
	if p.Payment != nil {
		if ref := e.PayeeAllowed(p.Payment.PayTo, p.Payment.Host); ref != nil {
			return ref
		}
		if p.Sig == nil || p.Sig.Counterparty != p.Payment.PayTo {
			return Refuse(CodePayeeNotAllowed, "the payment's authorization does not pay the payee it was checked for (%s). Nothing was signed.", p.Payment.PayTo.Hex())
		}
	}
	for _, g := range e.recipients(ch) {
		if p.counterparty(g.to) {
			continue
		}
		to := g.to
		if ref := e.Allowed(&to); ref != nil {
			return Refuse(ref.Code, "simulated, this write gives %s to %s. %s", g.what, to.Hex(), ref.Message).
				Because("it gives %s to %s, which the operator's allow-list does not name", g.what, to.Hex())
		}
	}
	return nil
}

// receiptsAllowed says which addresses the receipts show the wallet giving
// value to (ETH sent, a Transfer from it, an Approval by it) that the
// allow-list does not name; empty when none.
func (e *Engine) receiptsAllowed(p *Plan, infos []*chain.TxInfo) []string {
	var bad []string
	seen := map[common.Address]bool{}
	for _, m := range MovedOf(e.address, infos, e.asset) {
		if !common.IsHexAddress(m.To) || m.From != e.address.Hex() || m.Raw == "0" {
			continue // not the wallet's, or nothing given (a revoke)
		}
		to := common.HexToAddress(m.To)
		if to == e.address || seen[to] || p.counterparty(to) {
			continue
		}
		seen[to] = true
		if e.Allowed(&to) != nil {
			bad = append(bad, fmt.Sprintf("the receipts show %s %s going to %s, which the operator's allow-list does not name", m.Amount, m.Symbol, to.Hex()))
		}
	}
	return bad
}

// counterparty reports whether a is one the write kind took from
// walletgate's own table.
func (p *Plan) counterparty(a common.Address) bool {
	for _, c := range p.Counterparties {
		if c == a {
			return true
		}
	}
	return false
}
