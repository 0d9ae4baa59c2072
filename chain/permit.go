package chain

// Reads of the state a signed permit or transfer authorization consumes:
// EIP-2612's nonces(owner) and EIP-3009's authorizationState(authorizer,
// nonce). A signature is used on chain exactly when these change.

import (
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// Permits is the ABI of the permit and authorization reads and calls,
// parsed on first use.
var Permits = sync.OnceValue(func() abi.ABI { return mustABI(permitsABI) })

const permitsABI = `[
 {"type":"function","name":"nonces","stateMutability":"view","inputs":[{"name":"owner","type":"address"}],"outputs":[{"type":"uint256"}]},
 {"type":"function","name":"authorizationState","stateMutability":"view","inputs":[{"name":"authorizer","type":"address"},{"name":"nonce","type":"bytes32"}],"outputs":[{"type":"bool"}]},
 {"type":"function","name":"DOMAIN_SEPARATOR","stateMutability":"view","inputs":[],"outputs":[{"type":"bytes32"}]}
]`

func packPermits(method string, args ...any) []byte {
	data, err := Permits().Pack(method, args...)
	if err != nil {
		panic("pack " + method + ": " + err.Error()) // static ABI, static argument types
	}
	return data
}

// NoncesView reads EIP-2612's nonces(owner) of token.
func NoncesView(token, owner common.Address) *View {
	return &View{To: token, Data: packPermits("nonces", owner)}
}

// AuthorizationStateView reads EIP-3009's authorizationState(authorizer,
// nonce) of token: true once an authorization with that nonce was used (or
// cancelled).
func AuthorizationStateView(token, authorizer common.Address, nonce [32]byte) *View {
	return &View{To: token, Data: packPermits("authorizationState", authorizer, nonce)}
}

// DecodeBool decodes a view's bool answer.
func DecodeBool(ret []byte) (bool, error) {
	out, err := abi.Arguments{{Type: boolType}}.Unpack(ret)
	if err != nil {
		return false, err
	}
	return out[0].(bool), nil
}

var boolType, _ = abi.NewType("bool", "", nil)
