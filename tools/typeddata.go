package tools

// Reading EIP-712 typed data, the standard {types, primaryType, domain,
// message} object. Rules of this file: the object is checked field by field
// and the hash is go-ethereum's (apitypes), never our own encoding; the
// domain must name this chain, and its EIP712Domain type must list exactly
// the domain's fields with their standard types (a domain field the type
// leaves out is shown but not signed — display spoofing); a message must
// have exactly its type's fields. A primary type named like a known kind
// but with other fields is refused outright, opt-in or not: it would be
// shown as one thing and sign another.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// Refusal codes of typed data.
const (
	CodeTypedDataInvalid     = "TYPED_DATA_INVALID"
	CodeTypedDataUnknown     = "TYPED_DATA_UNKNOWN"
	CodeTypedDataWrongChain  = "TYPED_DATA_WRONG_CHAIN"
	CodeTypedDataOwner       = "TYPED_DATA_NOT_WALLET"
	CodeTypedDataUnlimited   = "PERMIT_UNLIMITED"
	CodeTypedDataDeadline    = engine.CodeValidityTooLong
	CodeTypedDataNoContract  = engine.CodeVerifyingNoCode
	CodeTypedDataUnsupported = "TYPED_DATA_UNSUPPORTED"
)

// Bounds on typed data.
const (
	maxTypedTypes  = 16
	maxTypedFields = 32
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
	kindOf     = map[string]string{"Permit": engine.SigPermit, "TransferWithAuthorization": engine.SigTransferAuth, "ReceiveWithAuthorization": engine.SigReceiveAuth}
	// permit2Types are Uniswap Permit2's primary types: not decoded yet,
	// so refused even with the opt-in (they grant allowances on any token).
	permit2Types = []string{"PermitSingle", "PermitBatch", "PermitTransferFrom", "PermitBatchTransferFrom", "PermitWitnessTransferFrom", "PermitBatchWitnessTransferFrom"}
)

// typedDoc is typed data read and hashed.
type typedDoc struct {
	td        apitypes.TypedData
	kind      string // engine.Sig*
	chainID   *big.Int
	verifying *common.Address
	digest    common.Hash
	message   map[string]any // as received, for display
}

func typedRefusal(format string, a ...any) *Refusal {
	return refuse(CodeTypedDataInvalid, format+" Nothing was signed. Give the standard EIP-712 object {types, primaryType, domain, message}, as eth_signTypedData_v4 takes it.", a...)
}

// readTypedData checks the object and hashes it.
func (s *Server) readTypedData(tree map[string]any) (typedDoc, *Refusal) {
	var doc typedDoc
	for k := range tree {
		if !slices.Contains([]string{"types", "primaryType", "domain", "message"}, k) {
			return doc, typedRefusal("typed_data has the key %s, which EIP-712 does not define.", quote(k))
		}
	}
	types, ref := readTypes(tree["types"])
	if ref != nil {
		return doc, ref
	}
	primary, ok := tree["primaryType"].(string)
	if !ok || primary == "" || primary == "EIP712Domain" || types[primary] == nil {
		return doc, typedRefusal("primaryType must name one of the types (not EIP712Domain), got %s.", describeAny(tree["primaryType"]))
	}
	domainTree, ok := tree["domain"].(map[string]any)
	if !ok {
		return doc, typedRefusal("domain must be an object.")
	}
	domain, chainID, verifying, ref := s.readDomain(domainTree, types["EIP712Domain"])
	if ref != nil {
		return doc, ref
	}
	msgTree, ok := tree["message"].(map[string]any)
	if !ok {
		return doc, typedRefusal("message must be an object.")
	}
	msg, why := typedValue(types, primary, msgTree, "message")
	if why != "" {
		return doc, typedRefusal("%s.", why)
	}
	doc = typedDoc{td: apitypes.TypedData{Types: types, PrimaryType: primary, Domain: domain, Message: msg.(map[string]any)},
		kind: engine.SigUnknownTyped, chainID: chainID, verifying: verifying, message: msgTree}
	if slices.Contains(permit2Types, primary) {
		return doc, refuse(CodeTypedDataUnsupported, "this is a Permit2 %s, which walletgate does not decode yet: it would let a spender pull tokens through Permit2, and no cap could count it. Nothing was signed. Use wallet_approve for an exact allowance instead.", primary)
	}
	if want, named := knownTypes[primary]; named {
		if !slices.Equal(types[primary], want) || len(types) != 2 {
			return doc, refuse(CodeTypedDataUnknown, "the primary type is named %s but its fields (%s) are not the standard ones (%s), or other types come with it: it would be shown as a %s and sign something else. Nothing was signed.",
				primary, typeString(types[primary]), typeString(want), primary)
		}
		doc.kind = kindOf[primary]
	}
	digest, _, err := apitypes.TypedDataAndHash(doc.td)
	if err != nil {
		return doc, typedRefusal("it cannot be encoded under EIP-712 (%s).", inert(err.Error(), 200))
	}
	doc.digest = common.BytesToHash(digest)
	return doc, nil
}

// readTypes reads the types object.
func readTypes(v any) (apitypes.Types, *Refusal) {
	tree, ok := v.(map[string]any)
	if !ok {
		return nil, typedRefusal("types must be an object of type names to field lists.")
	}
	if len(tree) > maxTypedTypes {
		return nil, typedRefusal("types has %d types; at most %d are accepted.", len(tree), maxTypedTypes)
	}
	if _, ok := tree["EIP712Domain"]; !ok {
		return nil, typedRefusal("types has no EIP712Domain: without it the domain (chain, contract) is not part of what is signed.")
	}
	out := apitypes.Types{}
	for name, fv := range tree {
		list, ok := fv.([]any)
		if !ok || len(list) == 0 || len(list) > maxTypedFields {
			return nil, typedRefusal("types.%s must be a list of 1 to %d fields {name, type}.", name, maxTypedFields)
		}
		seen := map[string]bool{}
		for i, f := range list {
			fm, ok := f.(map[string]any)
			n, nok := fm["name"].(string)
			t, tok := fm["type"].(string)
			if !ok || len(fm) != 2 || !nok || !tok || n == "" || t == "" {
				return nil, typedRefusal("types.%s[%d] must be {\"name\": \"…\", \"type\": \"…\"} and nothing else.", name, i)
			}
			if seen[n] {
				return nil, typedRefusal("types.%s has the field %s twice.", name, quote(n))
			}
			seen[n] = true
			out[name] = append(out[name], apitypes.Type{Name: n, Type: t})
		}
	}
	return out, nil
}

// readDomain reads the domain: exactly the fields its type lists, with
// their standard types; the chain must be this one.
func (s *Server) readDomain(tree map[string]any, typ []apitypes.Type) (apitypes.TypedDataDomain, *big.Int, *common.Address, *Refusal) {
	var d apitypes.TypedDataDomain
	listed := map[string]bool{}
	for _, f := range typ {
		want, ok := domainFieldTypes[f.Name]
		if !ok || f.Type != want {
			return d, nil, nil, typedRefusal("EIP712Domain lists %s %s; EIP-712 defines only name (string), version (string), chainId (uint256), verifyingContract (address) and salt (bytes32).", f.Type, quote(f.Name))
		}
		if _, given := tree[f.Name]; !given {
			return d, nil, nil, typedRefusal("EIP712Domain lists %s but the domain has no such field.", quote(f.Name))
		}
		listed[f.Name] = true
	}
	for k := range tree {
		if !listed[k] {
			return d, nil, nil, typedRefusal("the domain has %s but EIP712Domain does not list it: it would be shown and not signed.", quote(k))
		}
	}
	var ok bool
	if v, given := tree["name"]; given {
		if d.Name, ok = v.(string); !ok || d.Name == "" {
			return d, nil, nil, typedRefusal("domain.name must be a non-empty string.")
		}
	}
	if v, given := tree["version"]; given {
		if d.Version, ok = v.(string); !ok || d.Version == "" {
			return d, nil, nil, typedRefusal("domain.version must be a non-empty string.")
		}
	}
	raw, given := tree["chainId"]
	if !given {
		return d, nil, nil, refuse(CodeTypedDataWrongChain, "the domain has no chainId: the signature would be valid on every chain that has the same contract. Nothing was signed. Give chainId %d (%s) in the domain and in EIP712Domain.", s.chainID, s.network.Name)
	}
	chainID, why := uintOf(raw)
	if why != "" {
		return d, nil, nil, typedRefusal("domain.chainId %s.", why)
	}
	if chainID.Cmp(new(big.Int).SetUint64(s.chainID)) != 0 {
		return d, nil, nil, refuse(CodeTypedDataWrongChain, "the domain is for chain %s, but this wallet is on %s (chain id %d): a signature for another chain is refused here (it would be used there). Nothing was signed. Ask for typed data with chainId %d.", chainID, s.network.Name, s.chainID, s.chainID)
	}
	d.ChainId = (*math.HexOrDecimal256)(chainID)
	var verifying *common.Address
	if v, given := tree["verifyingContract"]; given {
		str, _ := v.(string)
		a, err := policy.ParseAddress(str)
		if err != nil {
			return d, nil, nil, typedRefusal("domain.verifyingContract %s: %s.", displayInput(str), reason(err))
		}
		d.VerifyingContract, verifying = a.Hex(), &a
	}
	if v, given := tree["salt"]; given {
		str, _ := v.(string)
		b, err := hexutil.Decode(str)
		if err != nil || len(b) != 32 {
			return d, nil, nil, typedRefusal("domain.salt must be 0x and 64 hex digits.")
		}
		d.Salt = str
	}
	return d, chainID, verifying, nil
}

// typedValue checks value against type typ and returns it as apitypes
// encodes it: integers as decimal strings.
func typedValue(types apitypes.Types, typ string, value any, path string) (any, string) {
	if i := strings.LastIndexByte(typ, '['); i > 0 && strings.HasSuffix(typ, "]") {
		list, ok := value.([]any)
		if !ok {
			return nil, path + " must be a list (" + typ + ")"
		}
		out := make([]any, len(list))
		for j, item := range list {
			v, why := typedValue(types, typ[:i], item, fmt.Sprintf("%s[%d]", path, j))
			if why != "" {
				return nil, why
			}
			out[j] = v
		}
		return out, ""
	}
	if fields, ok := types[typ]; ok {
		obj, ok := value.(map[string]any)
		if !ok {
			return nil, path + " must be an object (" + typ + ")"
		}
		out := map[string]any{}
		for _, f := range fields {
			fv, given := obj[f.Name]
			if !given {
				return nil, path + " has no field " + quote(f.Name) + " (" + typ + " lists it)"
			}
			v, why := typedValue(types, f.Type, fv, path+"."+f.Name)
			if why != "" {
				return nil, why
			}
			out[f.Name] = v
		}
		if len(obj) != len(fields) {
			for k := range obj {
				if _, listed := out[k]; !listed {
					return nil, path + " has " + quote(k) + ", which " + typ + " does not list: it would be shown and not signed"
				}
			}
		}
		return out, ""
	}
	if strings.HasPrefix(typ, "uint") || strings.HasPrefix(typ, "int") {
		if n, ok := value.(json.Number); ok {
			return n.String(), ""
		}
		if s, ok := value.(string); ok {
			if _, why := uintOf(s); why != "" && !strings.HasPrefix(typ, "int") {
				return nil, path + " " + why
			}
			return s, ""
		}
		return nil, path + " must be an integer (" + typ + ")"
	}
	if typ == "address" {
		s, _ := value.(string)
		a, err := policy.ParseAddress(s)
		if err != nil {
			return nil, path + " " + displayInput(s) + ": " + reason(err)
		}
		return a.Hex(), ""
	}
	// strings, bools, bytes: as given; apitypes checks their form.
	if _, isNum := value.(json.Number); isNum {
		return nil, path + " is a number, but its type is " + typ
	}
	return value, ""
}

// uintOf reads a non-negative integer: a JSON number, or a decimal or 0x
// hex string of one.
func uintOf(v any) (*big.Int, string) {
	var s string
	switch t := v.(type) {
	case json.Number:
		s = t.String()
	case string:
		s = t
	default:
		return nil, "must be an integer, got " + describeAny(v)
	}
	var n *big.Int
	ok := false
	switch {
	case strings.HasPrefix(s, "0x") && len(s) > 2 && len(s) <= 66:
		n, ok = new(big.Int).SetString(s[2:], 16)
		ok = ok && !strings.ContainsAny(s[2:], "+-_")
	case wholeNumber(s):
		n, ok = new(big.Int).SetString(s, 10)
	}
	if !ok || n.Sign() < 0 || n.BitLen() > 256 {
		return nil, "must be a whole number of at most 256 bits (decimal, or 0x hex), got " + displayInput(s)
	}
	return n, ""
}

func describeAny(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return describeJSON(b)
}

func typeString(fields []apitypes.Type) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Type + " " + f.Name
	}
	return strings.Join(parts, ", ")
}

// inertJSON renders a message for people: keys sorted, every string made
// inert, bounded.
func inertJSON(v any, max int) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteString("{")
			for i, k := range keys {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(inert(k, 64) + ": ")
				walk(t[k])
			}
			b.WriteString("}")
		case []any:
			b.WriteString("[")
			for i, x := range t {
				if i > 0 {
					b.WriteString(", ")
				}
				walk(x)
			}
			b.WriteString("]")
		case string:
			b.WriteString(strconvQuote(inert(t, 200)))
		default:
			fmt.Fprint(&b, t)
		}
	}
	walk(v)
	out := b.String()
	if len(out) > max {
		for max > 0 && !utf8.ValidString(out[:max]) {
			max--
		}
		out = out[:max] + "…"
	}
	return out
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
