package policy

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// CallRule allows wallet_call to call Contract, with any function when
// Selector is nil, or only the function with that 4-byte selector.
type CallRule struct {
	Contract common.Address
	Selector []byte // nil: any function
}

// String is the rule as the operator writes it.
func (r CallRule) String() string {
	if r.Selector == nil {
		return r.Contract.Hex()
	}
	return r.Contract.Hex() + ":0x" + hex.EncodeToString(r.Selector)
}

// CallsAllowed is WALLETGATE_ALLOW_CALLS: nothing (the zero value: wallet_call
// is off), Any, or a list of rules.
type CallsAllowed struct {
	Any   bool
	Rules []CallRule
}

// On reports whether wallet_call may call anything at all.
func (c CallsAllowed) On() bool { return c.Any || len(c.Rules) > 0 }

// Allows reports whether a call to contract with data is allowed.
func (c CallsAllowed) Allows(contract common.Address, data []byte) bool {
	if c.Any {
		return true
	}
	for _, r := range c.Rules {
		if r.Contract != contract {
			continue
		}
		if r.Selector == nil || (len(data) >= 4 && string(data[:4]) == string(r.Selector)) {
			return true
		}
	}
	return false
}

// String is the setting as the operator writes it ("" when off).
func (c CallsAllowed) String() string {
	if c.Any {
		return "any"
	}
	out := make([]string, len(c.Rules))
	for i, r := range c.Rules {
		out[i] = r.String()
	}
	return strings.Join(out, ",")
}

// MaxAllowCalls is the most rules WALLETGATE_ALLOW_CALLS may list.
const MaxAllowCalls = 256

// parseAllowCalls parses WALLETGATE_ALLOW_CALLS: "any", or comma-separated
// contract addresses, each optionally with ":0x" and an 8-hex-digit function
// selector; no empty items, no repeats.
func parseAllowCalls(value string) (CallsAllowed, *ConfigError) {
	const expected = `"any", or comma-separated contract addresses (0x + 40 hex digits), each optionally followed by :0x and a 4-byte function selector (8 hex digits), like 0xA0b8…eB48:0x095ea7b3`
	if trimSpaceTab(value) == "any" {
		return CallsAllowed{Any: true}, nil
	}
	items := strings.Split(value, ",")
	if len(items) > MaxAllowCalls {
		return CallsAllowed{}, configError(EnvAllowCalls, value, fmt.Sprintf("%s (at most %d; got %d)", expected, MaxAllowCalls, len(items)))
	}
	var out CallsAllowed
	for i, raw := range items {
		item := trimSpaceTab(raw)
		if item == "" {
			return CallsAllowed{}, configError(EnvAllowCalls, value, fmt.Sprintf("%s (item %d is empty)", expected, i+1))
		}
		addr, sel, hasSel := strings.Cut(item, ":")
		a, err := ParseAddress(addr)
		if err != nil || a == (common.Address{}) {
			why := "the zero address"
			if err != nil {
				why = err.Error()
			}
			return CallsAllowed{}, configError(EnvAllowCalls, value, fmt.Sprintf("%s (item %d: %s)", expected, i+1, why))
		}
		r := CallRule{Contract: a}
		if hasSel {
			b, err := hex.DecodeString(strings.TrimPrefix(sel, "0x"))
			if !strings.HasPrefix(sel, "0x") || err != nil || len(b) != 4 {
				return CallsAllowed{}, configError(EnvAllowCalls, value, fmt.Sprintf("%s (item %d: the selector must be 0x and 8 hex digits)", expected, i+1))
			}
			r.Selector = b
		}
		if slices.ContainsFunc(out.Rules, func(o CallRule) bool { return o.String() == r.String() }) {
			return CallsAllowed{}, configError(EnvAllowCalls, value, fmt.Sprintf("%s (item %d repeats %s)", expected, i+1, r))
		}
		out.Rules = append(out.Rules, r)
	}
	return out, nil
}
