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

// PayeesAllowed is WALLETGATE_ALLOW_PAY_TO: x402 payees by address or by the
// resource's host. The zero value allows any payee (the caps still apply).
type PayeesAllowed struct {
	Addresses []common.Address
	Hosts     []string // lower case, no port unless the operator gave one
}

// Set reports whether the operator restricted payees at all.
func (p PayeesAllowed) Set() bool { return len(p.Addresses) > 0 || len(p.Hosts) > 0 }

// Allows reports whether payTo may be paid for a resource at host (host as
// in the resource URL: "api.example.com" or "127.0.0.1:4021"). An address
// item matches payTo; a host item matches host, with or without its port.
func (p PayeesAllowed) Allows(payTo common.Address, host string) bool {
	if !p.Set() {
		return true
	}
	if slices.Contains(p.Addresses, payTo) {
		return true
	}
	host = strings.ToLower(host)
	bare := host
	if i := strings.LastIndexByte(host, ':'); i > 0 && !strings.Contains(host[i:], "]") {
		bare = host[:i]
	}
	return slices.Contains(p.Hosts, host) || slices.Contains(p.Hosts, bare)
}

// String is the setting as the operator writes it ("" when unset).
func (p PayeesAllowed) String() string {
	var out []string
	for _, a := range p.Addresses {
		out = append(out, a.Hex())
	}
	return strings.Join(append(out, p.Hosts...), ",")
}

// parseAllowPayTo parses comma-separated payee addresses and hosts.
func parseAllowPayTo(value string) (PayeesAllowed, *ConfigError) {
	const expected = "comma-separated x402 payees: addresses (0x + 40 hex digits) or resource hosts (like api.example.com or 127.0.0.1:4021)"
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
		h := strings.ToLower(item)
		if !validHost(h) {
			return PayeesAllowed{}, configError(EnvAllowPayTo, value, fmt.Sprintf("%s (item %d is neither an address nor a host name)", expected, i+1))
		}
		if slices.Contains(out.Hosts, h) {
			return PayeesAllowed{}, configError(EnvAllowPayTo, value, fmt.Sprintf("%s (item %d repeats %s)", expected, i+1, h))
		}
		out.Hosts = append(out.Hosts, h)
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
