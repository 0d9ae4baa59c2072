package policy

// Look-alike addresses and EIP-7702 delegations: pure decisions the write
// path can apply to a recipient or spender (not wired in yet: see issue 42).
//
// Rules of this file:
//   - Two addresses look alike when they differ but share their first 4 and
//     last 4 hex digits, case-insensitively: what a person compares, and
//     what address poisoning forges.
//   - An EIP-7702 delegation designator is exactly 0xef0100 followed by the
//     20-byte address delegated to (23 bytes of code); anything else is not.

import (
	"bytes"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// LookAlike says whether a and b are different addresses that share their
// first 4 and last 4 hex digits (case-insensitive).
func LookAlike(a, b common.Address) bool {
	if a == b {
		return false
	}
	x, y := strings.ToLower(a.Hex()[2:]), strings.ToLower(b.Hex()[2:])
	return x[:4] == y[:4] && x[36:] == y[36:]
}

// LookAlikeOf returns the first of known that a looks like (LookAlike), and
// false when none does. An address equal to one of known is not a look-alike.
func LookAlikeOf(a common.Address, known []common.Address) (common.Address, bool) {
	for _, k := range known {
		if k == a {
			return common.Address{}, false
		}
	}
	for _, k := range known {
		if LookAlike(a, k) {
			return k, true
		}
	}
	return common.Address{}, false
}

// delegationPrefix starts an EIP-7702 delegation designator.
var delegationPrefix = []byte{0xef, 0x01, 0x00}

// DelegatedTo returns the address an account's code delegates to when the
// code is an EIP-7702 delegation designator (0xef0100 ‖ address), and false
// for any other code.
func DelegatedTo(code []byte) (common.Address, bool) {
	if len(code) != len(delegationPrefix)+common.AddressLength || !bytes.HasPrefix(code, delegationPrefix) {
		return common.Address{}, false
	}
	return common.BytesToAddress(code[len(delegationPrefix):]), true
}
