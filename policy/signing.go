package policy

// What may be signed: typed data of unknown kinds (WALLETGATE_ALLOW_TYPED_DATA),
// how long a signed permit or authorization may stay valid
// (WALLETGATE_SIGNATURE_MAX_VALIDITY), and whom x402 may pay
// (WALLETGATE_ALLOW_PAY_TO).

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Bounds of WALLETGATE_SIGNATURE_MAX_VALIDITY.
const (
	DefaultSignatureMaxValidity = time.Hour
	MinSignatureMaxValidity     = 30 * time.Second
	MaxSignatureMaxValidity     = 7 * 24 * time.Hour
	// MaxAllowPayTo is the most items WALLETGATE_ALLOW_PAY_TO may list.
	MaxAllowPayTo = 256
)

// PayeesAllowed is WALLETGATE_ALLOW_PAY_TO: the x402 payees that may be
// paid, by address. The resource URL of a payment requirement is written by
// the server asking to be paid, so a host alone never allows a payee: a host
// item pins the one address a server claiming that host may be paid at
// (host=0x…). The zero value allows any payee (the caps still apply).
type PayeesAllowed struct {
	Addresses []common.Address // address items
	Pins      []HostPin        // host=address items
}

// HostPin is a host=address item: a requirement whose resource is at Host
// may pay only PayTo.
type HostPin struct {
	Host  string // lower case, no port unless the operator gave one
	PayTo common.Address
}

// Set reports whether the operator restricted payees at all.
func (p PayeesAllowed) Set() bool { return len(p.Addresses) > 0 || len(p.Pins) > 0 }

// Allows reports whether payTo may be paid for a resource the server says is
// at host ("api.example.com" or "127.0.0.1:4021"): payTo must be an address
// item or a pinned address, and when host is pinned (with or without its
// port), its pinned address.
func (p PayeesAllowed) Allows(payTo common.Address, host string) bool {
	if !p.Set() {
		return true
	}
	if pin, ok := p.Pinned(host); ok {
		return pin == payTo
	}
	if slices.Contains(p.Addresses, payTo) {
		return true
	}
	return slices.ContainsFunc(p.Pins, func(h HostPin) bool { return h.PayTo == payTo })
}

// Pinned returns the address host is pinned to, if it is: an item with a
// port matches that host and port only, one without matches every port.
func (p PayeesAllowed) Pinned(host string) (common.Address, bool) {
	host = strings.ToLower(host)
	bare := host
	if i := strings.LastIndexByte(host, ':'); i > 0 && !strings.Contains(host[i:], "]") {
		bare = host[:i]
	}
	for _, h := range p.Pins {
		if h.Host == host {
			return h.PayTo, true
		}
	}
	for _, h := range p.Pins {
		if h.Host == bare {
			return h.PayTo, true
		}
	}
	return common.Address{}, false
}

// String is the setting as the operator writes it ("" when unset).
func (p PayeesAllowed) String() string { return strings.Join(p.Items(), ",") }

// Items are the setting's items: addresses, then host=address pins.
func (p PayeesAllowed) Items() []string {
	out := []string{}
	for _, a := range p.Addresses {
		out = append(out, a.Hex())
	}
	for _, h := range p.Pins {
		out = append(out, h.Host+"="+h.PayTo.Hex())
	}
	return out
}

// parseAllowPayTo parses comma-separated payee addresses and host=address
// pins. A bare host is refused: it would let any server that claims the
// host in its requirement be paid at the address it names itself.
func parseAllowPayTo(value string) (PayeesAllowed, *ConfigError) {
	const expected = "comma-separated x402 payees: payee addresses (0x + 40 hex digits), or a resource host pinned to its payee address, host=0x… (like api.example.com=0x… or 127.0.0.1:4021=0x…)"
	items := strings.Split(value, ",")
	if len(items) > MaxAllowPayTo {
		return PayeesAllowed{}, configError(EnvAllowPayTo, value, fmt.Sprintf("%s (at most %d; got %d)", expected, MaxAllowPayTo, len(items)))
	}
	var out PayeesAllowed
	for i, raw := range items {
		item := trimSpaceTab(raw)
		if item == "" {
			return PayeesAllowed{}, configError(EnvAllowPayTo, value, fmt.Sprintf("%s (item %d is empty)", expected, i+1))
		}
		if strings.HasPrefix(item, "0x") || strings.HasPrefix(item, "0X") {
			a, err := ParseRecipient(item)
			if err != nil {
				return PayeesAllowed{}, configError(EnvAllowPayTo, value, fmt.Sprintf("%s (item %d: %s)", expected, i+1, err.Error()))
			}
			if slices.Contains(out.Addresses, a) {
				return PayeesAllowed{}, configError(EnvAllowPayTo, value, fmt.Sprintf("%s (item %d repeats %s)", expected, i+1, a.Hex()))
			}
			out.Addresses = append(out.Addresses, a)
			continue
		}
		hostPart, addrPart, pinned := strings.Cut(item, "=")
		h := strings.ToLower(trimSpaceTab(hostPart))
		if !validHost(h) {
			return PayeesAllowed{}, configError(EnvAllowPayTo, value, fmt.Sprintf("%s (item %d is neither an address nor host=address)", expected, i+1))
		}
		if !pinned {
			return PayeesAllowed{}, configError(EnvAllowPayTo, value, fmt.Sprintf("%s (item %d, %s, is a host without its payee address: the server answering 402 writes both its URL and its payTo, so a host alone would let any server claiming it be paid wherever it says; name the address it pays: %s=0x<payee address>, or give the address alone)", expected, i+1, h, h))
		}
		a, err := ParseRecipient(trimSpaceTab(addrPart))
		if err != nil {
			return PayeesAllowed{}, configError(EnvAllowPayTo, value, fmt.Sprintf("%s (item %d: %s)", expected, i+1, err.Error()))
		}
		if slices.ContainsFunc(out.Pins, func(p HostPin) bool { return p.Host == h }) {
			return PayeesAllowed{}, configError(EnvAllowPayTo, value, fmt.Sprintf("%s (item %d repeats %s)", expected, i+1, h))
		}
		out.Pins = append(out.Pins, HostPin{Host: h, PayTo: a})
	}
	return out, nil
}

// validHost accepts a DNS name or IPv4 address, optionally with :port:
// letters, digits, dots and hyphens, no scheme, path or user.
func validHost(h string) bool {
	name, port, hasPort := strings.Cut(h, ":")
	if name == "" || len(name) > 253 || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	if hasPort {
		n, ok := parseDecimalUint(port)
		return ok && n > 0 && n < 65536
	}
	return true
}
