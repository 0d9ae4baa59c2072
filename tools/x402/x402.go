// Package x402 is x402 version 2's "exact" payment on EVM chains as typed
// values: the requirement a resource answers HTTP 402 with, decoded strictly,
// the EIP-3009 authorization that pays one of its options, and the payment
// payload the client retries with (the PAYMENT-SIGNATURE header).
//
// Rules of this file: the requirement's fields are read by their exact names
// (json v2 semantics: case-sensitive, a name twice refused); fields x402 does
// not define are kept and echoed, never interpreted; an option that does not
// decode is reported as invalid, not paid. The authorization pays exactly the
// option's amount to its payTo from the wallet, validAfter 0, validBefore at
// most the option's maxTimeoutSeconds (60 s when absent, at most a week) and
// the caller's bound ahead, with a fresh random 32-byte nonce; its EIP-712
// domain is the option's extra.name / extra.version, the asset and the chain.
package x402

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	stdjson "encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools/typeddata"
)

// Refusal codes of x402.
const (
	CodeInvalid         = "X402_INVALID"
	CodeNoOption        = "X402_NO_OPTION"
	CodePayeeNotAllowed = "X402_PAYEE_NOT_ALLOWED"
)

// Version is the x402 version paid; the HTTP headers of that version.
const (
	Version          = 2
	HeaderRequired   = "PAYMENT-REQUIRED"  // the resource's requirement, base64 JSON
	HeaderSignature  = "PAYMENT-SIGNATURE" // the client's payment payload, base64 JSON
	HeaderResponse   = "PAYMENT-RESPONSE"  // the resource's settlement, base64 JSON
	DefaultTimeout   = 60 * time.Second    // an option's validity when it gives no maxTimeoutSeconds
	maxTimeout       = 7 * 24 * time.Hour
	maxOptions       = 16
	methodEIP3009    = "eip3009"
	schemeExact      = "exact"
	networkPrefixEVM = "eip155:"
)

// Refusal is why a requirement is not paid: a stable Code and a Message
// (the same type as typeddata's, which the authorization goes through).
type Refusal = typeddata.Refusal

func refuse(code, format string, a ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Skip is why an option cannot be paid by this package's rules.
type Skip string

// The reasons (the tool's not_taken values of the same names).
const (
	OtherScheme  Skip = "other_scheme"  // not "exact"
	OtherNetwork Skip = "other_network" // not the wallet's chain
	Permit2      Skip = "permit2"       // assetTransferMethod other than eip3009: not decoded
)

// Requirement is a decoded PaymentRequired (x402 v2). Its zero value is not
// a requirement; Parse makes one.
type Requirement struct {
	X402Version int      `json:"x402Version"`
	Resource    Resource `json:"resource"`
	Accepts     []Option `json:"-"`
	Host        string   `json:"-"` // the resource URL's host, lower case

	raw map[string]any // as received, for the payload's echo
}

// Resource is the resource a requirement is for, as the paying server
// states it (nothing checks it).
type Resource struct {
	URL         string `json:"url"`
	Description string `json:"description"`
	MimeType    string `json:"mimeType"`
}

// Option is one of a requirement's accepts: its PaymentRequirements.
type Option struct {
	Index             int     `json:"-"`
	Scheme            string  `json:"scheme"`
	Network           string  `json:"network"`
	Amount            string  `json:"amount"` // base units, decimal
	Asset             string  `json:"asset"`
	PayTo             string  `json:"payTo"`
	MaxTimeoutSeconds *uint64 `json:"maxTimeoutSeconds"`
	// Extra is scheme-specific; the exact EVM scheme's is ExactExtra.
	Extra jsontext.Value `json:"extra"`
	Err   error          `json:"-"` // why it did not decode; nil when it did

	raw map[string]any
}

// ExactExtra is the exact EVM scheme's extra: the token's EIP-712 domain
// name and version, and how the asset moves (absent: EIP-3009).
type ExactExtra struct {
	Name                string  `json:"name"`
	Version             string  `json:"version"`
	AssetTransferMethod *string `json:"assetTransferMethod"`
}

// Parse decodes a requirement from the caller's strict decoding of the
// object (no key twice at any depth, numbers as json.Number).
func Parse(tree map[string]any) (*Requirement, *Refusal) {
	r := &Requirement{raw: tree}
	var head struct {
		X402Version jsontext.Value `json:"x402Version"`
		Resource    Resource       `json:"resource"`
		Accepts     []any          `json:"accepts"` // decoded one by one below
	}
	if err := reencode(tree, &head); err != nil {
		return nil, refuse(CodeInvalid, "the requirement is not an x402 v2 PaymentRequired {x402Version, resource: {url, description, mimeType}, accepts: […]} (%s). Nothing was signed. Give the requirement as the resource sent it.", shown(err.Error()))
	}
	if string(head.X402Version) != strconv.Itoa(Version) {
		return nil, refuse(CodeInvalid, "x402Version is %s; walletgate pays x402 version 2 requirements only (the %s header of @x402/core 2.x). Nothing was signed.", shownJSON(tree["x402Version"]), HeaderRequired)
	}
	r.X402Version, r.Resource = Version, head.Resource
	u := head.Resource.URL
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" || pu.User != nil {
		return nil, refuse(CodeInvalid, "resource.url %s is not an http(s) URL. Nothing was signed. Give the requirement as the resource sent it.", shown(u))
	}
	r.Host = strings.ToLower(pu.Host)
	if len(head.Accepts) == 0 || len(head.Accepts) > maxOptions {
		return nil, refuse(CodeInvalid, "accepts must list 1 to %d payment options. Nothing was signed.", maxOptions)
	}
	for i, a := range head.Accepts {
		o := Option{Index: i}
		o.raw, _ = a.(map[string]any)
		if o.raw == nil {
			o.Err = fmt.Errorf("accepts[%d] is not an object", i)
		} else if err := reencode(o.raw, &o); err != nil {
			o.Err = err
		}
		r.Accepts = append(r.Accepts, o)
	}
	return r, nil
}

// Network is the x402 name of an EVM chain: eip155:<chain id>.
func Network(chainID uint64) string { return networkPrefixEVM + strconv.FormatUint(chainID, 10) }

// Payable says whether the option is the exact scheme on the chain paid by
// EIP-3009; "" when it is.
func (o Option) Payable(chainID uint64) (Skip, string) {
	var extra ExactExtra
	_ = json.Unmarshal(o.Extra, &extra) // an extra that does not decode fails in Authorization
	switch {
	case o.Scheme != schemeExact:
		return OtherScheme, "not the exact scheme"
	case o.Network != Network(chainID):
		return OtherNetwork, "not this wallet's network (" + Network(chainID) + ")"
	case extra.AssetTransferMethod != nil && *extra.AssetTransferMethod != methodEIP3009:
		return Permit2, "paid by Permit2, which walletgate does not decode"
	}
	return "", ""
}

// Price is a payable option's price: base units of a token of Decimals.
type Price struct {
	Amount   *big.Int
	Decimals uint8
}

// Cheapest orders prices by their value in their tokens' units (x402 prices
// in dollar stablecoins; a tie keeps the earlier) and picks the first that
// fits; when none fits, the cheapest, which the caller's caps then refuse.
// It returns the order (indexes into prices) and the position in it of the
// one picked.
func Cheapest(prices []Price, fits func(int) bool) (order []int, chosen int) {
	value := func(p Price, decimals uint8) *big.Int { // p in units of 10^-decimals
		return new(big.Int).Mul(p.Amount, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals-p.Decimals)), nil))
	}
	var most uint8
	for i, p := range prices {
		order, most = append(order, i), max(most, p.Decimals)
	}
	slices.SortStableFunc(order, func(a, b int) int { return value(prices[a], most).Cmp(value(prices[b], most)) })
	for pos, i := range order {
		if fits(i) {
			return order, pos
		}
	}
	return order, 0
}

// Authorization is the EIP-3009 TransferWithAuthorization of an exact EVM
// payload, as @x402/evm writes it (all strings).
type Authorization struct {
	From        string `json:"from" pattern:"address" jsonschema:"the payer: the wallet"`
	To          string `json:"to" pattern:"address" jsonschema:"the payee"`
	Value       string `json:"value" pattern:"base" jsonschema:"the amount in base units"`
	ValidAfter  string `json:"validAfter" pattern:"base" jsonschema:"valid after (unix seconds)"`
	ValidBefore string `json:"validBefore" pattern:"base" jsonschema:"valid before (unix seconds)"`
	Nonce       string `json:"nonce" pattern:"hash" jsonschema:"the random 32-byte nonce"`
}

// Authorize builds the typed data paying o from the wallet on chainID,
// valid from now for the shorter of the option's timeout and maxValidity.
// The nonce is read from random (crypto/rand when nil).
func (o Option) Authorize(from common.Address, chainID uint64, now time.Time, maxValidity time.Duration, random io.Reader) (apitypes.TypedData, *Refusal) {
	bad := func(format string, a ...any) (apitypes.TypedData, *Refusal) {
		return apitypes.TypedData{}, refuse(CodeInvalid, format+" Nothing was signed.", a...)
	}
	if o.Err != nil {
		return bad("the option is not an x402 PaymentRequirements {scheme, network, amount, asset, payTo, maxTimeoutSeconds, extra} (%s).", shown(o.Err.Error()))
	}
	var extra ExactExtra
	if err := json.Unmarshal(o.Extra, &extra); err != nil || extra.Name == "" || extra.Version == "" {
		return bad("the option has no extra.name and extra.version: they are the token's EIP-712 domain, needed to sign its authorization.")
	}
	asset, err := policy.ParseAddress(o.Asset)
	if err != nil {
		return bad("the option's asset %s is not a token address.", shown(o.Asset))
	}
	payTo, err := policy.ParseAddress(o.PayTo)
	if err != nil {
		return bad("the option's payTo %s is not an address.", shown(o.PayTo))
	}
	amount, ok := math.ParseBig256(o.Amount)
	if !ok || amount.String() != o.Amount || amount.Sign() == 0 { // decimal digits only, no sign or leading zeros
		return bad("the option's amount %s is not a positive whole number of base units.", shown(o.Amount))
	}
	validity := DefaultTimeout
	if t := o.MaxTimeoutSeconds; t != nil {
		if *t == 0 || *t > uint64(maxTimeout/time.Second) {
			return bad("the option's maxTimeoutSeconds %d is not a whole number of seconds up to a week.", *t)
		}
		validity = time.Duration(*t) * time.Second
	}
	validity = min(validity, maxValidity)
	if random == nil {
		random = rand.Reader
	}
	var nonce [32]byte
	if _, err := io.ReadFull(random, nonce[:]); err != nil {
		return bad("no randomness for the authorization's nonce (%s).", err)
	}
	a := Authorization{From: from.Hex(), To: payTo.Hex(), Value: amount.String(), ValidAfter: "0",
		ValidBefore: strconv.FormatInt(now.Add(validity).Unix(), 10), Nonce: hexutil.Encode(nonce[:])}
	return apitypes.TypedData{
		Types:       typeddata.AuthorizationTypes(),
		PrimaryType: "TransferWithAuthorization",
		Domain: apitypes.TypedDataDomain{Name: extra.Name, Version: extra.Version,
			ChainId: math.NewHexOrDecimal256(int64(chainID)), VerifyingContract: asset.Hex()},
		Message: map[string]any{"from": a.From, "to": a.To, "value": a.Value, "validAfter": a.ValidAfter, "validBefore": a.ValidBefore, "nonce": a.Nonce},
	}, nil
}

// AuthorizationOf reads back the authorization of typed data Authorize
// built (and the engine signed).
func AuthorizationOf(td apitypes.TypedData) Authorization {
	s := func(k string) string { v, _ := td.Message[k].(string); return v }
	return Authorization{From: s("from"), To: s("to"), Value: s("value"), ValidAfter: s("validAfter"), ValidBefore: s("validBefore"), Nonce: s("nonce")}
}

// Digest is what a confirmation binds to: the SHA-256 of the resource URL
// and the chosen option as received (keys sorted), hex.
func (r *Requirement) Digest(option int) (string, error) {
	canon, err := stdjson.Marshal(struct {
		Resource string         `json:"resource"`
		Accepted map[string]any `json:"accepted"`
	}{r.Resource.URL, r.Accepts[option].raw}) // maps marshal with sorted keys
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// ExactPayload is the exact scheme's payload.
type ExactPayload struct {
	Signature     string        `json:"signature" jsonschema:"the EIP-712 signature, 0x hex"`
	Authorization Authorization `json:"authorization" jsonschema:"the EIP-3009 authorization signed"`
}

// Payload is the PaymentPayload of x402 v2: what PAYMENT-SIGNATURE carries,
// base64-encoded JSON.
type Payload struct {
	X402Version int            `json:"x402Version" jsonschema:"2"`
	Resource    map[string]any `json:"resource" jsonschema:"the resource, as the requirement gave it"`
	Accepted    map[string]any `json:"accepted" jsonschema:"the payment option paid, as the requirement gave it"`
	Payload     ExactPayload   `json:"payload" jsonschema:"the exact scheme's payload"`
	Extensions  map[string]any `json:"extensions,omitempty" jsonschema:"the requirement's extensions, echoed"`
}

// Pay is the payload paying option with the signed authorization: the
// resource, the option and the extensions echoed as received.
func (r *Requirement) Pay(option int, signature []byte, a Authorization) Payload {
	p := Payload{X402Version: Version, Accepted: r.Accepts[option].raw,
		Payload: ExactPayload{Signature: hexutil.Encode(signature), Authorization: a}}
	p.Resource, _ = r.raw["resource"].(map[string]any)
	p.Extensions, _ = r.raw["extensions"].(map[string]any)
	return p
}

// Header is the PAYMENT-SIGNATURE header's value: base64 of p's JSON.
func (p Payload) Header() (string, error) {
	raw, err := stdjson.Marshal(p)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// reencode decodes the JSON of v (a strictly decoded tree) into out by
// exact field names; names out does not have are ignored.
func reencode(v any, out any) error {
	raw, err := stdjson.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// shown makes received text safe to repeat: bounded, quoted, non-ASCII and
// non-printable characters escaped.
func shown(s string) string {
	if len(s) > 200 {
		return strconv.QuoteToASCII(s[:200]) + "…"
	}
	return strconv.QuoteToASCII(s)
}

func shownJSON(v any) string {
	if v == nil {
		return "absent"
	}
	b, _ := stdjson.Marshal(v)
	return shown(string(b))
}
