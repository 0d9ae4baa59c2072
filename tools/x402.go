package tools

// wallet_pay_x402: pay for an HTTP resource under x402 v2's "exact" scheme
// on EVM, which is an EIP-3009 TransferWithAuthorization. Rules of this
// file: of the requirement's options only an "exact" one on this wallet's
// chain (network eip155:<chain id>), paid by EIP-3009 (not Permit2), in an
// asset with caps, is taken; its payee must be allowed by
// WALLETGATE_ALLOW_PAY_TO (by address or by the resource's host) and the
// caps apply. The authorization (a fresh random nonce, validBefore at most
// the requirement's maxTimeoutSeconds and WALLETGATE_SIGNATURE_MAX_VALIDITY
// ahead) goes through the same typed-data path as wallet_sign_typed_data:
// the preview shows who is paid how much for which resource, and the
// confirm signs exactly the previewed authorization and returns the
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
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/approval"
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
	digest   string // SHA-256 of the canonical requirement: what the token binds
}

func (i payIntent) canonical(chainID uint64, from common.Address) []byte {
	b, err := json.Marshal(struct {
		V           int    `json:"v"`
		ChainID     uint64 `json:"chain_id"`
		From        string `json:"from"`
		Requirement string `json:"requirement"`
	}{1, chainID, from.Hex(), i.digest})
	if err != nil {
		panic(err)
	}
	return b
}

func (s *Server) payX402Tool() Tool {
	spec := argSpec{"payment_required": argObject, "confirm": argString}
	in := object(map[string]any{
		"payment_required": map[string]any{"type": "object", "description": "the x402 v2 payment requirement exactly as the resource answered it (the decoded PAYMENT-REQUIRED header, or the body of its 402 answer, or what an x402-aware tool returned): {x402Version: 2, resource: {url, …}, accepts: [{scheme, network, asset, amount, payTo, maxTimeoutSeconds, extra}]}. The exact option on this chain in a capped token is paid; the caps apply: " + s.capsHint() + " The first call only previews."},
		"confirm":          str(s.confirmDescription()),
	}, "payment_required")
	return s.writeTool(payX402Tool, "Pay for an x402 resource",
		"Pay an x402 payment requirement (HTTP 402) with an EIP-3009 transfer authorization (the x402 \"exact\" scheme on EVM). Two calls: the first returns a preview of who is paid how much for which resource and a confirm_token; nothing is signed. Only with the user's agreement call again with the same arguments plus confirm; the answer carries the PAYMENT-SIGNATURE header value to retry the request with.",
		in, spec,
		twoStepSign(s, payX402Tool, s.parsePay, func(i payIntent) []byte { return i.canonical(s.chainID, s.address) }, s.previewPay, s.renderPaid))
}

// parsePay reads the requirement, chooses the option and builds the
// authorization it pays with.
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
	var seen []string
	for _, o := range accepts {
		opt, _ := o.(map[string]any)
		scheme, _ := opt["scheme"].(string)
		netw, _ := opt["network"].(string)
		assetRaw, _ := opt["asset"].(string)
		seen = append(seen, fmt.Sprintf("%s on %s in %s", inert(scheme, 32), inert(netw, 40), inert(assetRaw, 42)))
		if scheme != "exact" || netw != network {
			continue
		}
		extra, _ := opt["extra"].(map[string]any)
		if m, ok := extra["assetTransferMethod"]; ok && m != "eip3009" {
			continue // Permit2: not decoded
		}
		tok, err := policy.ParseAddress(assetRaw)
		if err != nil || !s.ledger.Capped(tok) {
			continue
		}
		in.accepted = opt
		break
	}
	if in.accepted == nil {
		return in, refuse(CodeX402NoOption, "none of the requirement's options is one walletgate can pay: it pays the \"exact\" scheme on this wallet's network (%s, %s) with an EIP-3009 authorization, in a token that has a cap. Offered: %s. Nothing was signed. Ask the resource for an option on %s, or the operator to cap the token (%s=<token address>=<amount>).",
			network, s.network.Name, strings.Join(seen, "; "), network, policy.EnvCapPerTx)
	}
	td, ref := s.x402Authorization(in.accepted)
	if ref != nil {
		return in, ref
	}
	doc, ref := s.readTypedData(td)
	if ref != nil {
		return in, ref
	}
	in.sign, ref = s.decodeSignature(ctx, doc)
	if ref != nil {
		return in, ref
	}
	if !s.cfg.AllowPayTo.Allows(in.sign.sig.Counterparty, in.host) {
		return in, refuse(CodeX402PayeeNotOK, "the payee %s (for %s) is not among the operator's allowed payees (%s). Nothing was signed. Ask the operator to add the host or the address to %s.",
			in.sign.sig.Counterparty.Hex(), in.host, s.cfg.AllowPayTo, policy.EnvAllowPayTo)
	}
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

func (s *Server) previewPay(ctx context.Context, in payIntent) (*mcp.CallToolResult, *Refusal) {
	p, ref := s.signPlan(ctx, in.sign)
	if ref != nil {
		return nil, ref
	}
	pv := s.signPreviewOf(in.sign, p)
	pv.Summary = fmt.Sprintf("Pay %s %s to %s for %s (host %s), authorization valid until %s, on %s (%s)",
		pv.Amount, shownAsset(in.sign.token), pv.Counterparty, inert(in.resource, 300), inert(in.host, 100), pv.ValidUntil, pv.Network, pv.NetworkMarker)
	if desc, _ := in.required["resource"].(map[string]any)["description"].(string); desc != "" {
		pv.Warnings = append(pv.Warnings, "the resource describes itself as: "+inert(desc, 200)+" (untrusted text)")
	}
	display := func() approval.Display {
		d := s.display(pv.Summary, pv.previewCommon)
		txt := pv.Amount + " " + shownAsset(in.sign.token) + " to " + pv.Counterparty + " for " + inert(in.resource, 200)
		d.Amounts = []approval.Amount{{Label: "Pay", Rounded: txt, Exact: txt}}
		return d
	}
	return s.offer(payX402Tool, in.canonical(s.chainID, s.address), p, display, func(c confirmation) (any, string) {
		r := previewFor(pv, c, payX402Tool)
		var b strings.Builder
		b.WriteString("PREVIEW — nothing has been signed or paid.\n")
		pv.networkLine(&b)
		fmt.Fprintf(&b, "Resource:  %s (host %s)\n", inert(in.resource, 300), inert(in.host, 100))
		signPreviewText(&b, pv)
		s.previewTail(&b, pv.previewCommon, r.ExpiresAt, payX402Tool, c)
		return r, b.String()
	})
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
