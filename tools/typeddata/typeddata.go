// Package typeddata reads EIP-712 typed data for a wallet on one chain:
// go-ethereum's apitypes validates and hashes it, and this package adds only
// what apitypes lacks — the chain binding, the standard domain field types,
// and the known kinds (EIP-2612 Permit, EIP-3009 authorizations; Uniswap
// Permit2 refused) decoded into typed fields.
//
// Rules of this file: the hash is apitypes', never our own encoding, and
// whatever this package decodes from a message is read from the very values
// apitypes hashes. apitypes already refuses bad type definitions, missing
// and extra message fields, values that do not fit their types and a domain
// field its type does not list; on top of that the domain must name this
// chain, its EIP712Domain type may list only the fields EIP-712 defines, with
// their standard types, and every listed field must be given (a domain field
// the type leaves out is shown but not signed — display spoofing). A primary
// type named like a known kind but with other fields is refused outright: it
// would be shown as one thing and sign another.
package typeddata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/walletgate/walletgate/policy"
)

// Refusal codes. Every refusal of this package carries one of them.
const (
	CodeInvalid     = "TYPED_DATA_INVALID"
	CodeUnknown     = "TYPED_DATA_UNKNOWN"
	CodeWrongChain  = "TYPED_DATA_WRONG_CHAIN"
	CodeUnsupported = "TYPED_DATA_UNSUPPORTED"
)

// Refusal is why typed data is not signed: a stable Code and a Message for
// the model and the person (what was received, what is allowed, what to do).
type Refusal struct {
	Code    string
	Message string
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// Kind is what a signature of the typed data does. Its values are the
// engine's signature kinds.
type Kind string

// The kinds.
const (
	Permit                Kind = "permit"                 // EIP-2612: the spender may move the value
	TransferAuthorization Kind = "transfer_authorization" // EIP-3009: a payment of the value to the payee
	ReceiveAuthorization  Kind = "receive_authorization"  // EIP-3009, submitted by the payee only
	Unknown               Kind = "unknown"                // anything else: nothing walletgate can bound
)

// Chain is the chain a signature must be bound to.
type Chain struct {
	ID   uint64
	Name string // for refusals
}

// Doc is typed data read and hashed. Its zero value is not a document.
type Doc struct {
	Data      apitypes.TypedData // what is signed (message integers as *big.Int)
	Kind      Kind
	Verifying *common.Address // the domain's verifyingContract, when given
	Digest    common.Hash     // apitypes.TypedDataAndHash of Data
	Shown     map[string]any  // the message as received, for display
	Grant     *Grant          // the known kinds' decoded message; nil for Unknown
}

// Grant is what a known kind's message grants, read from the values that
// are hashed. Field names are the message's, for refusals.
type Grant struct {
	Owner        common.Address // a permit's owner, an authorization's from
	Counterparty common.Address // a permit's spender, an authorization's to
	Value        *big.Int
	Until        *big.Int // a permit's deadline, an authorization's validBefore (unix seconds)
	PermitNonce  *big.Int // Permit
	AuthNonce    [32]byte // the authorizations

	// The message's names of Owner, Counterparty and Until.
	OwnerField, CounterpartyField, UntilField string
}

// Bounds on typed data (apitypes has none).
const (
	maxTypes  = 16
	maxFields = 32
)

// domainFieldTypes are the EIP712Domain fields EIP-712 defines, with their
// types.
var domainFieldTypes = map[string]string{"name": "string", "version": "string", "chainId": "uint256", "verifyingContract": "address", "salt": "bytes32"}

// The known kinds' exact types.
var (
	permitType = []apitypes.Type{{Name: "owner", Type: "address"}, {Name: "spender", Type: "address"}, {Name: "value", Type: "uint256"},
		{Name: "nonce", Type: "uint256"}, {Name: "deadline", Type: "uint256"}}
	authType = []apitypes.Type{{Name: "from", Type: "address"}, {Name: "to", Type: "address"}, {Name: "value", Type: "uint256"},
		{Name: "validAfter", Type: "uint256"}, {Name: "validBefore", Type: "uint256"}, {Name: "nonce", Type: "bytes32"}}
	knownTypes = map[string][]apitypes.Type{"Permit": permitType, "TransferWithAuthorization": authType, "ReceiveWithAuthorization": authType}
	kindOf     = map[string]Kind{"Permit": Permit, "TransferWithAuthorization": TransferAuthorization, "ReceiveWithAuthorization": ReceiveAuthorization}
	// permit2Types are Uniswap Permit2's primary types: not decoded yet,
	// so refused even with the opt-in (they grant allowances on any token).
	permit2Types = []string{"PermitSingle", "PermitBatch", "PermitTransferFrom", "PermitBatchTransferFrom", "PermitWitnessTransferFrom", "PermitBatchWitnessTransferFrom"}
)

// AuthorizationTypes are the EIP712Domain (name, version, chainId,
// verifyingContract) and TransferWithAuthorization types, for building an
// EIP-3009 authorization.
func AuthorizationTypes() apitypes.Types {
	return apitypes.Types{
		"EIP712Domain":              {{Name: "name", Type: "string"}, {Name: "version", Type: "string"}, {Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"}},
		"TransferWithAuthorization": slices.Clone(authType),
	}
}

func invalid(format string, a ...any) *Refusal {
	return &Refusal{CodeInvalid, fmt.Sprintf(format, a...) + " Nothing was signed. Give the standard EIP-712 object {types, primaryType, domain, message}, as eth_signTypedData_v4 takes it."}
}

// Read reads the typed_data object as the caller's strict JSON decoder
// produced it (no key twice at any depth, numbers as json.Number), for a
// wallet on chain.
func Read(tree map[string]any, chain Chain) (*Doc, *Refusal) {
	for k := range tree {
		if !slices.Contains([]string{"types", "primaryType", "domain", "message"}, k) {
			return nil, invalid("typed_data has the key %s, which EIP-712 does not define.", shown(k))
		}
	}
	var td apitypes.TypedData
	if err := reencode(tree, &td); err != nil || td.Types == nil || td.Message == nil {
		return nil, invalid("it is not the standard object (%s).", shown(fmt.Sprint(err)))
	}
	msg := td.Message
	m, why := integers(msg, "message")
	if why != "" {
		return nil, invalid("%s.", why)
	}
	td.Message = m.(map[string]any)
	domain, _ := tree["domain"].(map[string]any) // its exact keys, as received
	return check(td, msg, domain, chain)
}

// Check reads typed data built by walletgate itself (an x402 payment's
// authorization) under the same rules as Read.
func Check(td apitypes.TypedData, chain Chain) (*Doc, *Refusal) {
	return check(td, td.Message, td.Domain.Map(), chain)
}

// check reads td; shownMsg is its message as received, domain its domain's
// fields as received.
func check(td apitypes.TypedData, shownMsg, domain map[string]any, chain Chain) (*Doc, *Refusal) {
	if len(td.Types) > maxTypes {
		return nil, invalid("types has %d types; at most %d are accepted.", len(td.Types), maxTypes)
	}
	for name, fields := range td.Types {
		if len(fields) > maxFields {
			return nil, invalid("types.%s has %d fields; at most %d are accepted.", shown(name), len(fields), maxFields)
		}
	}
	if td.PrimaryType == "" || td.PrimaryType == "EIP712Domain" || td.Types[td.PrimaryType] == nil {
		return nil, invalid("primaryType must name one of the types (not EIP712Domain), got %s.", shown(td.PrimaryType))
	}
	listed := map[string]bool{}
	for _, f := range td.Types["EIP712Domain"] {
		if want, ok := domainFieldTypes[f.Name]; !ok || f.Type != want {
			return nil, invalid("EIP712Domain lists %s %s; EIP-712 defines only name (string), version (string), chainId (uint256), verifyingContract (address) and salt (bytes32).", shown(f.Type), shown(f.Name))
		}
		listed[f.Name] = true
	}
	for k := range domain { // apitypes refuses it too, but only by counting
		if !listed[k] {
			return nil, invalid("the domain has %s but EIP712Domain does not list it: it would be shown and not signed.", shown(k))
		}
	}
	if td.Domain.ChainId == nil {
		return nil, &Refusal{CodeWrongChain, fmt.Sprintf("the domain has no chainId: the signature would be valid on every chain that has the same contract. Nothing was signed. Give chainId %d (%s) in the domain and in EIP712Domain.", chain.ID, chain.Name)}
	}
	if id := (*big.Int)(td.Domain.ChainId); id.Cmp(new(big.Int).SetUint64(chain.ID)) != 0 {
		return nil, &Refusal{CodeWrongChain, fmt.Sprintf("the domain is for chain %s, but this wallet is on %s (chain id %d): a signature for another chain is refused here (it would be used there). Nothing was signed. Ask for typed data with chainId %d.", id, chain.Name, chain.ID, chain.ID)}
	}
	doc := &Doc{Data: td, Kind: Unknown, Shown: shownMsg}
	if v := td.Domain.VerifyingContract; v != "" {
		a, err := policy.ParseAddress(v)
		if err != nil {
			return nil, invalid("domain.verifyingContract %s: %s.", shown(v), addressReason(err))
		}
		doc.Verifying = &a
	}
	if slices.Contains(permit2Types, td.PrimaryType) {
		return nil, &Refusal{CodeUnsupported, fmt.Sprintf("this is a Permit2 %s, which walletgate does not decode yet: it would let a spender pull tokens through Permit2, and no cap could count it. Nothing was signed. Use wallet_approve for an exact allowance instead.", td.PrimaryType)}
	}
	if want, named := knownTypes[td.PrimaryType]; named {
		if !slices.Equal(td.Types[td.PrimaryType], want) || len(td.Types) != 2 {
			return nil, &Refusal{CodeUnknown, fmt.Sprintf("the primary type is named %s but its fields (%s) are not the standard ones (%s), or other types come with it: it would be shown as a %s and sign something else. Nothing was signed.",
				td.PrimaryType, typeString(td.Types[td.PrimaryType]), typeString(want), td.PrimaryType)}
		}
		doc.Kind = kindOf[td.PrimaryType]
	}
	digest, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return nil, invalid("it cannot be encoded under EIP-712 (%s).", shown(err.Error()))
	}
	doc.Digest = common.BytesToHash(digest)
	if doc.Kind != Unknown {
		if doc.Verifying == nil {
			return nil, invalid("a %s needs the token as the domain's verifyingContract.", td.PrimaryType)
		}
		g, ref := grant(doc.Kind, td.Message)
		if ref != nil {
			return nil, ref
		}
		doc.Grant = g
	}
	return doc, nil
}

// grant decodes a known kind's message, which apitypes has just hashed: every
// field is present and of its type. Integers and addresses are read in their
// strict forms only (no sign, no leading zeros, an EIP-55 checksum when mixed
// case), so what is decoded is what was hashed.
func grant(kind Kind, m map[string]any) (*Grant, *Refusal) {
	g := &Grant{OwnerField: "from", CounterpartyField: "to", UntilField: "validBefore"}
	if kind == Permit {
		g.OwnerField, g.CounterpartyField, g.UntilField = "owner", "spender", "deadline"
	}
	var ref *Refusal
	addr := func(k string) common.Address {
		s, _ := m[k].(string)
		a, err := policy.ParseAddress(s)
		if err != nil && ref == nil {
			ref = invalid("message.%s %s: %s.", k, shown(s), addressReason(err))
		}
		return a
	}
	num := func(k string) *big.Int {
		n, ok := uintOf(m[k])
		if !ok && ref == nil {
			ref = invalid("message.%s must be a whole number of at most 256 bits (decimal, or 0x hex), got %s.", k, shownValue(m[k]))
		}
		return n
	}
	g.Owner, g.Counterparty = addr(g.OwnerField), addr(g.CounterpartyField)
	g.Value, g.Until = num("value"), num(g.UntilField)
	if kind == Permit {
		g.PermitNonce = num("nonce")
	} else {
		s, _ := m["nonce"].(string) // bytes32: apitypes took 32 bytes of 0x hex
		b, err := hexutil.Decode(s)
		if (err != nil || len(b) != 32) && ref == nil {
			ref = invalid("message.nonce must be 0x and 64 hex digits (bytes32).")
		}
		copy(g.AuthNonce[:], b)
	}
	return g, ref
}

// reencode decodes the JSON of v (a strictly decoded tree) into out, with
// apitypes' own field names and no others, numbers as json.Number.
func reencode(v any, out any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	return dec.Decode(out)
}

// integers returns the message with every json.Number as a *big.Int, the
// integer form apitypes takes (and refuses for a string, bytes, address or
// bool field). A null, which no EIP-712 type has, is refused.
func integers(v any, path string) (any, string) {
	switch t := v.(type) {
	case nil:
		return nil, path + " is null, which no EIP-712 type allows"
	case json.Number:
		n, ok := new(big.Int).SetString(t.String(), 10)
		if !ok {
			return nil, path + " is not a whole number"
		}
		return n, ""
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			y, why := integers(x, path+"."+k)
			if why != "" {
				return nil, why
			}
			out[k] = y
		}
		return out, ""
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			y, why := integers(x, path+"["+strconv.Itoa(i)+"]")
			if why != "" {
				return nil, why
			}
			out[i] = y
		}
		return out, ""
	}
	return v, ""
}

// uintOf reads a non-negative integer in its strict forms: a *big.Int, or a
// string of decimal digits without sign or leading zeros, or of 0x hex.
func uintOf(v any) (*big.Int, bool) {
	switch t := v.(type) {
	case *big.Int:
		return t, t.Sign() >= 0 && t.BitLen() <= 256
	case string:
		n, ok := math.ParseBig256(t)
		return n, ok && t != "" && !strings.ContainsAny(t, "+-") && (strings.HasPrefix(t, "0x") || n.String() == t)
	}
	return nil, false
}

func typeString(fields []apitypes.Type) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Type + " " + f.Name
	}
	return strings.Join(parts, ", ")
}

func addressReason(err error) string {
	if e, ok := err.(*policy.AddressError); ok {
		return e.Reason
	}
	return err.Error()
}

// shown makes received text safe to repeat in a refusal: bounded, quoted,
// every non-printable or non-ASCII character escaped.
func shown(s string) string {
	if len(s) > 80 {
		return strconv.QuoteToASCII(s[:80]) + "…"
	}
	return strconv.QuoteToASCII(s)
}

func shownValue(v any) string {
	b, _ := json.Marshal(v)
	return shown(string(b))
}
