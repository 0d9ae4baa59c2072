package tools

// wallet_pay_x402: pay for an HTTP resource under x402 v2's "exact" scheme
// on EVM, which is an EIP-3009 TransferWithAuthorization. Rules of this
// file: an option can be paid only if it is "exact" on this wallet's chain
// (network eip155:<chain id>), paid by EIP-3009 (not Permit2), in an asset
// with caps, to a payee WALLETGATE_ALLOW_PAY_TO allows — by address: the
// resource URL is the paying server's own claim, so it never allows a payee
// by itself, it can only narrow one (a host pinned to its address). Of the
// options that can be paid the cheapest that fits the caps is taken, and the
// preview lists the others with why not. The authorization (a fresh random
// nonce, validBefore at most the requirement's maxTimeoutSeconds and
// WALLETGATE_SIGNATURE_MAX_VALIDITY ahead) goes through the same typed-data
// path as wallet_sign_typed_data: the preview shows the payee address first,
// how much, and the resource as the paying server states it; the confirm
// signs exactly the previewed authorization and returns the
// PAYMENT-SIGNATURE header value.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

const payX402Tool = "wallet_pay_x402"

// Refusal codes of x402.
const (
	CodeX402Invalid    = "X402_INVALID"
	CodeX402NoOption   = "X402_NO_OPTION"
	CodeX402PayeeNotOK = "X402_PAYEE_NOT_ALLOWED"
)

// x402DefaultTimeout is the validity when a requirement gives no
// maxTimeoutSeconds.
const x402DefaultTimeout = 60 * time.Second

// payIntent is a payment requirement read and its option chosen.
type payIntent struct {
	sign     signIntent
	required map[string]any // the PAYMENT-REQUIRED object as received
	accepted map[string]any // the chosen option, as received
	resource string         // its URL, as received
	host     string
	option   int              // the chosen option's index in accepts
	others   []x402OptionJSON // the other options, by index, and why not
	digest   string           // SHA-256 of the canonical requirement: what the token binds
}

func (i payIntent) key() any {
	return struct {
		Requirement string `json:"requirement"`
	}{i.digest}
}

// payArgs are wallet_pay_x402's arguments.
type payArgs struct {
	PaymentRequired jsontext.Value `json:"payment_required" jsonschema:"the x402 v2 requirement (decoded PAYMENT-REQUIRED header or 402 body): {x402Version, resource, accepts: [{scheme, network, asset, amount, payTo, …}]}; the cheapest payable option is paid and {capped}"`
	confirmArg
}

func (s *Server) payX402Tool() Tool {
	return writeTool(s, payX402Tool, "Pay for an x402 resource",
		"Pay an x402 requirement (HTTP 402) with an EIP-3009 authorization (the \"exact\" EVM scheme). "+twoCalls+" The answer carries the PAYMENT-SIGNATURE header to retry with.",
		twoStep(s, payX402Tool, byName[payArgs](s.parsePay), s.previewPay, s.renderPaid))
}

// Why an option of a requirement was not paid (x402OptionJSON.NotTaken).
const (
	x402OtherScheme  = "other_scheme"      // not "exact"
	x402OtherNetwork = "other_network"     // not this wallet's chain
	x402Permit2      = "permit2"           // assetTransferMethod other than eip3009: not decoded
	x402Uncapped     = "uncapped_token"    // no cap for its asset
	x402Invalid      = "invalid"           // malformed (its amount, payTo, extra, timeout)
	x402PayeeNotOK   = "payee_not_allowed" // WALLETGATE_ALLOW_PAY_TO does not allow its payTo for the resource's host
	x402OverCaps     = "over_caps"         // more than the caps leave, while a cheaper option fits
	x402Dearer       = "dearer"            // payable, but the paid option costs less
)

// x402OptionJSON is one of a requirement's payment options as the preview
// lists it, with why it was not the one paid.
type x402OptionJSON struct {
	Index      int    `json:"index" jsonschema:"its position in the requirement's accepts (0 first)"`
	Scheme     string `json:"scheme" jsonschema:"its scheme (untrusted text)"`
	Network    string `json:"network" jsonschema:"its network (untrusted text)"`
	Asset      string `json:"asset" jsonschema:"its asset as given (untrusted text)"`
	PayTo      string `json:"pay_to" jsonschema:"its payTo as given (untrusted text)"`
	AmountBase string `json:"amount_base" jsonschema:"its amount in base units, as given (untrusted text)"`
	Amount     string `json:"amount,omitempty" pattern:"amount" jsonschema:"its amount in the token's units, when walletgate could read it"`
	Symbol     string `json:"symbol,omitempty" jsonschema:"the token's symbol, when walletgate could read it"`
	NotTaken   string `json:"not_taken" enum:"other_scheme|other_network|permit2|uncapped_token|invalid|payee_not_allowed|over_caps|dearer" jsonschema:"why it was not paid: another scheme or network, Permit2, a token without a cap, malformed, a payee WALLETGATE_ALLOW_PAY_TO does not allow, over what the caps leave, or dearer than the option paid"`
	Why        string `json:"why" jsonschema:"the same, in words"`
}

// x402Candidate is an option walletgate can pay.
type x402Candidate struct {
	index  int
	opt    map[string]any
	sign   signIntent
	option x402OptionJSON
}

// parsePay reads the requirement, chooses the option and builds the
// authorization it pays with: of the options walletgate can pay (exact, on
// this chain, EIP-3009, a capped token, a payee WALLETGATE_ALLOW_PAY_TO
// allows for the resource's host), the cheapest that fits the caps; when
// none fits, the cheapest, which the caps then refuse. Amounts in different
// tokens compare in the tokens' units (x402 prices in dollar stablecoins);
// a tie goes to the earlier option.
func (s *Server) parsePay(ctx context.Context, a args) (payIntent, *Refusal) {
	req, ok := a.object("payment_required")
	if !ok {
		return payIntent{}, refuse(CodeX402Invalid, "payment_required is missing. Give the x402 payment requirement the resource answered with.")
	}
	in := payIntent{required: req}
	if v, ok := req["x402Version"].(json.Number); !ok || v.String() != "2" {
		return in, refuse(CodeX402Invalid, "x402Version is %s; walletgate pays x402 version 2 requirements only (the PAYMENT-REQUIRED header of @x402/core 2.x). Nothing was signed.", describeAny(req["x402Version"]))
	}
	res, _ := req["resource"].(map[string]any)
	u, _ := res["url"].(string)
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" || pu.User != nil {
		return in, refuse(CodeX402Invalid, "resource.url %s is not an http(s) URL. Nothing was signed. Give the requirement as the resource sent it.", displayInput(u))
	}
	in.resource, in.host = u, strings.ToLower(pu.Host)
	accepts, _ := req["accepts"].([]any)
	if len(accepts) == 0 || len(accepts) > 16 {
		return in, refuse(CodeX402Invalid, "accepts must list 1 to 16 payment options. Nothing was signed.")
	}
	network := fmt.Sprintf("eip155:%d", s.chainID)
	var (
		seen       []string
		options    []x402OptionJSON
		candidates []x402Candidate
		invalid    *Refusal // the first payable-looking option's defect
		payee      *Refusal // the first payee refused
	)
	for i, o := range accepts {
		opt, _ := o.(map[string]any)
		scheme, _ := opt["scheme"].(string)
		netw, _ := opt["network"].(string)
		assetRaw, _ := opt["asset"].(string)
		payToRaw, _ := opt["payTo"].(string)
		amountRaw, _ := opt["amount"].(string)
		seen = append(seen, fmt.Sprintf("%s on %s in %s", inert(scheme, 32), inert(netw, 40), inert(assetRaw, 42)))
		ov := x402OptionJSON{Index: i, Scheme: inert(scheme, 32), Network: inert(netw, 40), Asset: inert(assetRaw, 42), PayTo: inert(payToRaw, 42), AmountBase: inert(amountRaw, 80)}
		skip := func(code, why string) { ov.NotTaken, ov.Why = code, why; options = append(options, ov) }
		extra, _ := opt["extra"].(map[string]any)
		tok, tokErr := policy.ParseAddress(assetRaw)
		switch m, given := extra["assetTransferMethod"]; {
		case scheme != "exact":
			skip(x402OtherScheme, "not the exact scheme")
			continue
		case netw != network:
			skip(x402OtherNetwork, "not this wallet's network ("+network+")")
			continue
		case given && m != "eip3009":
			skip(x402Permit2, "paid by Permit2, which walletgate does not decode")
			continue
		case tokErr != nil || !s.ledger.Capped(tok):
			skip(x402Uncapped, "a token without a cap")
			continue
		}
		td, ref := s.x402Authorization(opt)
		var doc typedDoc
		if ref == nil {
			doc, ref = s.readTypedData(td)
		}
		var sign signIntent
		if ref == nil {
			sign, ref = s.decodeSignature(ctx, doc)
		}
		if ref != nil {
			if invalid == nil {
				invalid = ref
			}
			skip(x402Invalid, "malformed: "+ref.Message)
			continue
		}
		ov.Amount, ov.Symbol = policy.FormatAmount(sign.sig.Amount, sign.token.Decimals), shownAsset(sign.token)
		if !s.cfg.AllowPayTo.Allows(sign.sig.Counterparty, in.host) {
			if payee == nil {
				payee = s.payeeRefusal(sign.sig.Counterparty, in.host)
			}
			skip(x402PayeeNotOK, "its payee "+sign.sig.Counterparty.Hex()+" is not allowed for "+inert(in.host, 100)+" ("+policy.EnvAllowPayTo+")")
			continue
		}
		candidates = append(candidates, x402Candidate{index: i, opt: opt, sign: sign, option: ov})
	}
	if len(candidates) == 0 {
		switch {
		case invalid != nil:
			return in, invalid
		case payee != nil:
			return in, payee
		}
		return in, refuse(CodeX402NoOption, "none of the requirement's options is one walletgate can pay: it pays the \"exact\" scheme on this wallet's network (%s, %s) with an EIP-3009 authorization, in a token that has a cap. Offered: %s. Nothing was signed. Ask the resource for an option on %s, or the operator to cap the token in every window (%s, %s and %s, each with <token address>=<amount>).",
			network, s.network.Name, strings.Join(seen, "; "), network, policy.EnvCapPerTx, policy.EnvCapPerSession, policy.EnvCapPerDay)
	}
	slices.SortStableFunc(candidates, func(a, b x402Candidate) int { return compareUnits(a.sign, b.sign) })
	chosen := 0
	for i, c := range candidates {
		if s.ledger.Check(caps.Spend{c.sign.sig.Token: c.sign.sig.Amount}) == nil {
			chosen = i
			break
		}
	}
	for i, c := range candidates {
		switch {
		case i == chosen:
			continue
		case i < chosen || s.ledger.Check(caps.Spend{c.sign.sig.Token: c.sign.sig.Amount}) != nil:
			c.option.NotTaken, c.option.Why = x402OverCaps, "more than the caps leave"
		default:
			c.option.NotTaken, c.option.Why = x402Dearer, "dearer than the option paid"
		}
		options = append(options, c.option)
	}
	slices.SortFunc(options, func(a, b x402OptionJSON) int { return a.Index - b.Index })
	c := candidates[chosen]
	in.accepted, in.sign, in.option, in.others = c.opt, c.sign, c.index, options
	canon, err := json.Marshal(struct {
		Resource string         `json:"resource"`
		Accepted map[string]any `json:"accepted"`
	}{in.resource, in.accepted}) // maps marshal with sorted keys
	if err != nil {
		return in, refuse(CodeX402Invalid, "the requirement cannot be encoded (%s). Nothing was signed.", err)
	}
	sum := sha256.Sum256(canon)
	in.digest = hex.EncodeToString(sum[:])
	return in, nil
}

// payeeRefusal says why payTo may not be paid for a resource at host.
func (s *Server) payeeRefusal(payTo common.Address, host string) *Refusal {
	if pin, ok := s.cfg.AllowPayTo.Pinned(host); ok {
		return refuse(CodeX402PayeeNotOK, "the requirement pays %s, but the operator pinned %s to the payee %s (%s). The resource URL is written by the server asking to be paid, so a server that claims this host and names another payee is not paid. Nothing was signed. If %s is the resource's real payee, ask the operator to change its pin in %s.",
			payTo.Hex(), inert(host, 100), pin.Hex(), policy.EnvAllowPayTo, payTo.Hex(), policy.EnvAllowPayTo)
	}
	return refuse(CodeX402PayeeNotOK, "the payee %s (the requirement's payTo; its resource says it is at %s) is not among the operator's allowed payees (%s). Nothing was signed. Ask the operator to add the address to %s (alone, or pinned to its host: host=%s).",
		payTo.Hex(), inert(host, 100), s.cfg.AllowPayTo, policy.EnvAllowPayTo, payTo.Hex())
}

// compareUnits orders two payments by their amounts in their tokens' units.
func compareUnits(a, b signIntent) int {
	x, y := new(big.Int).Set(a.sig.Amount), new(big.Int).Set(b.sig.Amount)
	if da, db := a.token.Decimals, b.token.Decimals; da < db {
		x.Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(db-da)), nil))
	} else if db < da {
		y.Mul(y, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(da-db)), nil))
	}
	return x.Cmp(y)
}

// x402Authorization builds the EIP-3009 typed data paying opt: from the
// wallet to payTo, amount, validAfter 0, validBefore now + the shorter of
// maxTimeoutSeconds and the signature bound, a fresh random nonce; the
// domain from extra.name / extra.version, the asset and this chain.
func (s *Server) x402Authorization(opt map[string]any) (map[string]any, *Refusal) {
	extra, _ := opt["extra"].(map[string]any)
	name, _ := extra["name"].(string)
	version, _ := extra["version"].(string)
	if name == "" || version == "" {
		return nil, refuse(CodeX402Invalid, "the option has no extra.name and extra.version: they are the token's EIP-712 domain, needed to sign its authorization. Nothing was signed.")
	}
	payTo, _ := opt["payTo"].(string)
	amountRaw, _ := opt["amount"].(string)
	amount, why := uintOf(amountRaw)
	if why != "" || !wholeNumber(amountRaw) || amount.Sign() == 0 {
		return nil, refuse(CodeX402Invalid, "the option's amount %s is not a positive whole number of base units. Nothing was signed.", displayInput(amountRaw))
	}
	validity := x402DefaultTimeout
	if raw, given := opt["maxTimeoutSeconds"]; given {
		n, why := uintOf(raw)
		if why != "" || n.Sign() == 0 || !n.IsInt64() || n.Int64() > 7*24*3600 {
			return nil, refuse(CodeX402Invalid, "the option's maxTimeoutSeconds %s is not a whole number of seconds up to a week. Nothing was signed.", describeAny(raw))
		}
		validity = time.Duration(n.Int64()) * time.Second
	}
	validity = min(validity, s.cfg.SignatureValidity)
	var nonce [32]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, refuse(CodeX402Invalid, "no randomness for the authorization's nonce (%s). Nothing was signed.", err)
	}
	field := func(n, t string) map[string]any { return map[string]any{"name": n, "type": t} }
	return map[string]any{
		"types": map[string]any{
			"EIP712Domain": []any{field("name", "string"), field("version", "string"), field("chainId", "uint256"), field("verifyingContract", "address")},
			"TransferWithAuthorization": []any{field("from", "address"), field("to", "address"), field("value", "uint256"),
				field("validAfter", "uint256"), field("validBefore", "uint256"), field("nonce", "bytes32")},
		},
		"primaryType": "TransferWithAuthorization",
		"domain":      map[string]any{"name": name, "version": version, "chainId": json.Number(fmt.Sprint(s.chainID)), "verifyingContract": opt["asset"]},
		"message": map[string]any{"from": s.address.Hex(), "to": payTo, "value": amount.String(), "validAfter": "0",
			"validBefore": fmt.Sprint(s.now().Add(validity).Unix()), "nonce": hexutil.Encode(nonce[:])},
	}, nil
}

// payPreview is an x402 payment's preview: the signature's, plus whom it
// pays (first: the address is what binds), the resource as the paying server
// states it, and the requirement's other options.
type payPreview struct {
	PayTo        string           `json:"pay_to" pattern:"address" jsonschema:"the payee: the address the authorization pays (the option's payTo), which WALLETGATE_ALLOW_PAY_TO binds"`
	Resource     string           `json:"resource" jsonschema:"the resource URL as the paying server states it: the server answering 402 writes it, and nothing checks it (untrusted text)"`
	ResourceHost string           `json:"resource_host" jsonschema:"the host of that URL, as stated (untrusted text)"`
	Option       int              `json:"option" jsonschema:"the index in the requirement's accepts of the option paid: the cheapest walletgate can pay within the caps"`
	OtherOptions []x402OptionJSON `json:"other_options" jsonschema:"the requirement's other options, and why each was not paid"`
	signPreview
}

// payPreviewResult is wallet_pay_x402's preview result.
type payPreviewResult = previewOf[payPreview]

func (s *Server) previewPay(ctx context.Context, in payIntent) (*mcp.CallToolResult, *Refusal) {
	p, ref := s.signPlan(ctx, in.sign)
	if ref != nil {
		return nil, ref
	}
	pv := payPreview{PayTo: in.sign.sig.Counterparty.Hex(), Resource: inert(in.resource, 300), ResourceHost: inert(in.host, 100), Option: in.option,
		OtherOptions: in.others, signPreview: s.signPreviewOf(in.sign, p)}
	if pv.OtherOptions == nil {
		pv.OtherOptions = []x402OptionJSON{}
	}
	pv.Summary = fmt.Sprintf("Pay %s %s to %s, for %s (as the paying server states it), authorization valid until %s, on %s (%s)",
		pv.Amount, shownAsset(in.sign.token), pv.PayTo, pv.Resource, pv.ValidUntil, pv.Network, pv.NetworkMarker)
	if desc, _ := in.required["resource"].(map[string]any)["description"].(string); desc != "" {
		pv.Warnings = append(pv.Warnings, "the resource describes itself as: "+inert(desc, 200)+" (untrusted text)")
	}
	display := func() approval.Display {
		d := s.display(pv.Summary, pv.previewCommon)
		txt := pv.Amount + " " + shownAsset(in.sign.token) + " to " + pv.PayTo + ", for " + inert(in.resource, 200) + " (as the paying server states it)"
		d.Amounts = []approval.Amount{{Label: "Pay", Rounded: txt, Exact: txt}}
		return d
	}
	return s.offer(payX402Tool, s.canonical(in), p, display, func(c confirmation) (any, string) {
		r := previewFor(pv, c, payX402Tool)
		var b strings.Builder
		b.WriteString("PREVIEW — nothing has been signed or paid.\n")
		pv.networkLine(&b)
		fmt.Fprintf(&b, "Pay to:    %s (the payee address, the option's payTo: the authorization pays this address)\n", pv.PayTo)
		fmt.Fprintf(&b, "Resource:  %s (as the paying server states it; host %s)\n", pv.Resource, pv.ResourceHost)
		x402OptionsText(&b, in, pv)
		signPreviewText(&b, pv.signPreview)
		s.previewTail(&b, pv.previewCommon, r.ExpiresAt, payX402Tool, c)
		return r, b.String()
	})
}

// x402OptionsText lists the option paid and the others.
func x402OptionsText(b *strings.Builder, in payIntent, pv payPreview) {
	n := len(pv.OtherOptions) + 1
	if n == 1 {
		return
	}
	fmt.Fprintf(b, "Options:   paying option %d of %d (%s %s), the cheapest walletgate can pay within the caps; the others:\n", pv.Option+1, n, pv.Amount, shownAsset(in.sign.token))
	for _, o := range pv.OtherOptions {
		price := o.AmountBase + " base units of " + o.Asset
		if o.Amount != "" {
			price = o.Amount + " " + o.Symbol
		}
		fmt.Fprintf(b, "  %d. %s to %s (%s on %s): not paid, %s\n", o.Index+1, price, o.PayTo, o.Scheme, o.Network, o.Why)
	}
}

// x402Authorization is the authorization of an exact EVM payload, as
// @x402/evm writes it (all strings).
type x402AuthorizationJSON struct {
	From        string `json:"from" pattern:"address" jsonschema:"the payer: the wallet"`
	To          string `json:"to" pattern:"address" jsonschema:"the payee"`
	Value       string `json:"value" pattern:"base" jsonschema:"the amount in base units"`
	ValidAfter  string `json:"validAfter" pattern:"base" jsonschema:"valid after (unix seconds)"`
	ValidBefore string `json:"validBefore" pattern:"base" jsonschema:"valid before (unix seconds)"`
	Nonce       string `json:"nonce" pattern:"hash" jsonschema:"the random 32-byte nonce"`
}

type x402ExactPayload struct {
	Signature     string                `json:"signature" jsonschema:"the EIP-712 signature, 0x hex"`
	Authorization x402AuthorizationJSON `json:"authorization" jsonschema:"the EIP-3009 authorization signed"`
}

// x402Payload is the PaymentPayload of x402 v2: what PAYMENT-SIGNATURE
// carries, base64-encoded JSON.
type x402Payload struct {
	X402Version int              `json:"x402Version" jsonschema:"2"`
	Resource    map[string]any   `json:"resource" jsonschema:"the resource, as the requirement gave it"`
	Accepted    map[string]any   `json:"accepted" jsonschema:"the payment option paid, as the requirement gave it"`
	Payload     x402ExactPayload `json:"payload" jsonschema:"the exact scheme's payload"`
	Extensions  map[string]any   `json:"extensions,omitempty" jsonschema:"the requirement's extensions, echoed"`
}

// x402Result is a paid requirement.
type x402Result struct {
	Status           string      `json:"status" enum:"signed" jsonschema:"signed: the authorization was made and journaled; nothing was sent — the resource's facilitator settles it when the request is retried with the header"`
	Header           string      `json:"header" enum:"PAYMENT-SIGNATURE" jsonschema:"the HTTP header to retry the request with"`
	PaymentSignature string      `json:"payment_signature" jsonschema:"the header's value: base64 of payment_payload's JSON"`
	PaymentPayload   x402Payload `json:"payment_payload" jsonschema:"the x402 v2 payment payload"`
	Resource         string      `json:"resource" jsonschema:"the resource URL paid for"`
	PayTo            string      `json:"pay_to" pattern:"address" jsonschema:"the payee"`
	Token            tokenRef    `json:"token" jsonschema:"the token paid in"`
	Amount           string      `json:"amount" pattern:"amount" jsonschema:"the amount, in the token's units"`
	Digest           string      `json:"digest" pattern:"hash" jsonschema:"the EIP-712 digest signed"`
	ValidUntil       string      `json:"valid_until" jsonschema:"the authorization's validBefore (RFC 3339, UTC)"`
	Message          string      `json:"message" jsonschema:"what happened and what to do next, in words"`
}

func (s *Server) renderPaid(in payIntent, out *engine.Outcome) *mcp.CallToolResult {
	sg := out.Signed
	m := sg.Data.Message // the previewed, signed authorization
	str := func(k string) string { v, _ := m[k].(string); return v }
	payload := x402Payload{X402Version: 2, Accepted: in.accepted,
		Payload: x402ExactPayload{Signature: hexutil.Encode(sg.Signature), Authorization: x402AuthorizationJSON{
			From: str("from"), To: str("to"), Value: str("value"), ValidAfter: str("validAfter"), ValidBefore: str("validBefore"), Nonce: str("nonce")}}}
	payload.Resource, _ = in.required["resource"].(map[string]any)
	if ext, ok := in.required["extensions"].(map[string]any); ok {
		payload.Extensions = ext
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return refusalResult(refuse(CodeX402Invalid, "the payment payload cannot be encoded (%s); the authorization was signed and journaled but not returned.", err))
	}
	amount := new(big.Int)
	amount.SetString(payload.Payload.Authorization.Value, 10)
	r := x402Result{Status: string(engine.StatusSigned), Header: "PAYMENT-SIGNATURE", PaymentSignature: base64.StdEncoding.EncodeToString(raw), PaymentPayload: payload,
		Resource: in.resource, PayTo: payload.Payload.Authorization.To, Token: ref(in.sign.token), Amount: policy.FormatAmount(amount, in.sign.token.Decimals),
		Digest: sg.Digest.Hex(), ValidUntil: sg.Until.UTC().Format(time.RFC3339)}
	r.Message = fmt.Sprintf("Signed and journaled; nothing was sent. Retry the request to %s with the header PAYMENT-SIGNATURE: <payment_signature>; the resource's facilitator moves %s %s to %s. It stays counted against the caps until it is seen used on chain or %s passes unused.",
		inert(in.resource, 300), r.Amount, in.sign.token.Marked(), r.PayTo, r.ValidUntil)
	return success(r, "SIGNED x402 payment: "+r.Message+"\nPAYMENT-SIGNATURE: "+r.PaymentSignature)
}
