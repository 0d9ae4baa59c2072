package tools

// wallet_pay_x402: pay for an HTTP resource under x402 v2's "exact" scheme
// on EVM, which is an EIP-3009 TransferWithAuthorization. The protocol
// (the requirement's typed fields, the authorization, the payload and its
// header) is package x402's; this file is the tool. Rules of this file: an
// option can be paid only if it is "exact" on this wallet's chain
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
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools/typeddata"
	"github.com/walletgate/walletgate/tools/x402"
)

const payX402Tool = "wallet_pay_x402"

// Refusal codes of x402.
const (
	CodeX402Invalid    = x402.CodeInvalid
	CodeX402NoOption   = x402.CodeNoOption
	CodeX402PayeeNotOK = x402.CodePayeeNotAllowed
)

// payIntent is a payment requirement read and its option chosen.
type payIntent struct {
	sign   signIntent
	req    *x402.Requirement
	option int              // the chosen option's index in accepts
	others []x402OptionJSON // the other options, by index, and why not
	digest string           // SHA-256 of the canonical requirement: what the token binds
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
	networkArg
}

func (s *Server) payX402Tool() Tool {
	return writeTool(s, payX402Tool, "Pay for an x402 resource",
		"Pay an x402 requirement (HTTP 402) with an EIP-3009 authorization (the \"exact\" EVM scheme). "+twoCalls+" The answer carries the PAYMENT-SIGNATURE header to retry with.",
		twoStep(s, payX402Tool, s.parsePay, s.previewPay, s.renderPaid))
}

// Why an option of a requirement was not paid (x402OptionJSON.NotTaken).
const (
	x402Uncapped   = "uncapped_token"    // no cap for its asset
	x402Invalid    = "invalid"           // malformed (its amount, payTo, extra, timeout)
	x402PayeeNotOK = "payee_not_allowed" // WALLETGATE_ALLOW_PAY_TO does not allow its payTo for the resource's host
	x402OverCaps   = "over_caps"         // more than the caps leave, while a cheaper option fits
	x402Dearer     = "dearer"            // payable, but the paid option costs less
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
func (s *Server) parsePay(ctx context.Context, a payArgs) (payIntent, *Refusal) {
	if len(a.PaymentRequired) == 0 {
		return payIntent{}, refuse(CodeX402Invalid, "payment_required is missing. Give the x402 payment requirement the resource answered with.")
	}
	tree, ref := decodeObject("payment_required", json.RawMessage(a.PaymentRequired)) // accepted by checkArgs already
	if ref != nil {
		return payIntent{}, ref
	}
	req, xref := x402.Parse(tree)
	if xref != nil {
		return payIntent{}, adopt(xref.Code, xref.Message)
	}
	in := payIntent{req: req}
	network := x402.Network(s.chainID)
	var (
		seen       []string
		options    []x402OptionJSON
		candidates []x402Candidate
		invalid    *Refusal // the first payable-looking option's defect
		payee      *Refusal // the first payee refused
	)
	for _, o := range req.Accepts {
		seen = append(seen, fmt.Sprintf("%s on %s in %s", inert(o.Scheme, 32), inert(o.Network, 40), inert(o.Asset, 42)))
		ov := x402OptionJSON{Index: o.Index, Scheme: inert(o.Scheme, 32), Network: inert(o.Network, 40), Asset: inert(o.Asset, 42), PayTo: inert(o.PayTo, 42), AmountBase: inert(o.Amount, 80)}
		skip := func(code, why string) { ov.NotTaken, ov.Why = code, why; options = append(options, ov) }
		if o.Err == nil {
			if code, why := o.Payable(s.chainID); code != "" {
				skip(string(code), why)
				continue
			}
			if tok, err := policy.ParseAddress(o.Asset); err != nil || !s.ledger.Capped(tok) {
				skip(x402Uncapped, "a token without a cap")
				continue
			}
		}
		sign, ref := s.x402Authorization(ctx, o)
		if ref != nil {
			if invalid == nil {
				invalid = ref
			}
			skip(x402Invalid, "malformed: "+ref.Message)
			continue
		}
		ov.Amount, ov.Symbol = policy.FormatAmount(sign.sig.Amount, sign.token.Decimals), shownAsset(sign.token)
		if ref := s.engine.PayeeAllowed(sign.sig.Counterparty, req.Host); ref != nil {
			if payee == nil {
				payee = ref
			}
			skip(x402PayeeNotOK, "its payee "+sign.sig.Counterparty.Hex()+" is not allowed for "+inert(req.Host, 100)+" ("+policy.EnvAllowPayTo+")")
			continue
		}
		candidates = append(candidates, x402Candidate{index: o.Index, sign: sign, option: ov})
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
	prices := make([]x402.Price, len(candidates))
	for i, c := range candidates {
		prices[i] = x402.Price{Amount: c.sign.sig.Amount, Decimals: c.sign.token.Decimals}
	}
	fits := func(i int) bool {
		return s.ledger.Check(caps.Spend{candidates[i].sign.sig.Token: candidates[i].sign.sig.Amount}) == nil
	}
	order, chosen := x402.Cheapest(prices, fits)
	for pos, i := range order {
		c := candidates[i]
		switch {
		case pos == chosen:
			continue
		case pos < chosen || !fits(i):
			c.option.NotTaken, c.option.Why = x402OverCaps, "more than the caps leave"
		default:
			c.option.NotTaken, c.option.Why = x402Dearer, "dearer than the option paid"
		}
		options = append(options, c.option)
	}
	slices.SortFunc(options, func(a, b x402OptionJSON) int { return a.Index - b.Index })
	c := candidates[order[chosen]]
	in.sign, in.option, in.others = c.sign, c.index, options
	digest, err := req.Digest(c.index)
	if err != nil {
		return in, refuse(CodeX402Invalid, "the requirement cannot be encoded (%s). Nothing was signed.", err)
	}
	in.digest = digest
	return in, nil
}

// x402Authorization builds and reads the authorization paying o through the
// same typed-data path as wallet_sign_typed_data.
func (s *Server) x402Authorization(ctx context.Context, o x402.Option) (signIntent, *Refusal) {
	td, xref := o.Authorize(s.address, s.chainID, s.now(), s.cfg.SignatureValidity, nil)
	if xref != nil {
		return signIntent{}, adopt(xref.Code, xref.Message)
	}
	doc, tref := typeddata.Check(td, s.typedChain())
	if tref != nil {
		return signIntent{}, adopt(tref.Code, tref.Message)
	}
	return s.decodeSignature(ctx, doc)
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

	url string // the resource URL as given
}

// payPreviewResult is wallet_pay_x402's preview result.
type payPreviewResult = previewOf[payPreview]

func (s *Server) previewPay(ctx context.Context, in payIntent) (*mcp.CallToolResult, *Refusal) {
	p, ref := s.signPlan(ctx, in.sign, &engine.Payment{PayTo: in.sign.sig.Counterparty, Host: in.req.Host})
	if ref != nil {
		return nil, ref
	}
	pv := payPreview{PayTo: in.sign.sig.Counterparty.Hex(), Resource: inert(in.req.Resource.URL, 300), ResourceHost: inert(in.req.Host, 100), Option: in.option,
		OtherOptions: in.others, signPreview: s.signPreviewOf(in.sign, p), url: in.req.Resource.URL}
	if pv.OtherOptions == nil {
		pv.OtherOptions = []x402OptionJSON{}
	}
	pv.Summary = fmt.Sprintf("Pay %s %s to %s, for %s (as the paying server states it), authorization valid until %s, on %s (%s)",
		pv.Amount, shownAsset(in.sign.token), pv.PayTo, pv.Resource, pv.ValidUntil, pv.Network, pv.NetworkMarker)
	if desc := in.req.Resource.Description; desc != "" {
		pv.Warnings = append(pv.Warnings, "the resource describes itself as: "+inert(desc, 200)+" (untrusted text)")
	}
	return present(s, payX402Tool, in, p, pv)
}

func (pv payPreview) headline() string { return "PREVIEW — nothing has been signed or paid.\n" }

func (pv payPreview) body(b *strings.Builder) {
	fmt.Fprintf(b, "Pay to:    %s (the payee address, the option's payTo: the authorization pays this address)\n", pv.PayTo)
	fmt.Fprintf(b, "Resource:  %s (as the paying server states it; host %s)\n", pv.Resource, pv.ResourceHost)
	pv.optionsText(b)
	pv.signPreview.body(b)
}

func (pv payPreview) page(d *approval.Display) {
	txt := pv.Amount + " " + shownAsset(pv.token) + " to " + pv.PayTo + ", for " + inert(pv.url, 200) + " (as the paying server states it)"
	d.Amounts = []approval.Amount{{Label: "Pay", Rounded: txt, Exact: txt}}
}

// optionsText lists the option paid and the others.
func (pv payPreview) optionsText(b *strings.Builder) {
	n := len(pv.OtherOptions) + 1
	if n == 1 {
		return
	}
	fmt.Fprintf(b, "Options:   paying option %d of %d (%s %s), the cheapest walletgate can pay within the caps; the others:\n", pv.Option+1, n, pv.Amount, shownAsset(pv.token))
	for _, o := range pv.OtherOptions {
		price := o.AmountBase + " base units of " + o.Asset
		if o.Amount != "" {
			price = o.Amount + " " + o.Symbol
		}
		fmt.Fprintf(b, "  %d. %s to %s (%s on %s): not paid, %s\n", o.Index+1, price, o.PayTo, o.Scheme, o.Network, o.Why)
	}
}

// x402Result is a paid requirement.
type x402Result struct {
	Status           string       `json:"status" enum:"signed" jsonschema:"signed: the authorization was made and journaled; nothing was sent — the resource's facilitator settles it when the request is retried with the header"`
	Header           string       `json:"header" enum:"PAYMENT-SIGNATURE" jsonschema:"the HTTP header to retry the request with"`
	PaymentSignature string       `json:"payment_signature" jsonschema:"the header's value: base64 of payment_payload's JSON"`
	PaymentPayload   x402.Payload `json:"payment_payload" jsonschema:"the x402 v2 payment payload"`
	Resource         string       `json:"resource" jsonschema:"the resource URL paid for"`
	PayTo            string       `json:"pay_to" pattern:"address" jsonschema:"the payee"`
	Token            tokenRef     `json:"token" jsonschema:"the token paid in"`
	Amount           string       `json:"amount" pattern:"amount" jsonschema:"the amount, in the token's units"`
	Digest           string       `json:"digest" pattern:"hash" jsonschema:"the EIP-712 digest signed"`
	ValidUntil       string       `json:"valid_until" jsonschema:"the authorization's validBefore (RFC 3339, UTC)"`
	Message          string       `json:"message" jsonschema:"what happened and what to do next, in words"`
}

func (s *Server) renderPaid(in payIntent, out *engine.Outcome) *mcp.CallToolResult {
	sg := out.Signed
	auth := x402.AuthorizationOf(sg.Data) // the previewed, signed authorization
	payload := in.req.Pay(in.option, sg.Signature, auth)
	header, err := payload.Header()
	if err != nil {
		return refusalResult(refuse(CodeX402Invalid, "the payment payload cannot be encoded (%s); the authorization was signed and journaled but not returned.", err))
	}
	amount, _ := new(big.Int).SetString(auth.Value, 10)
	r := x402Result{Status: string(engine.StatusSigned), Header: x402.HeaderSignature, PaymentSignature: header, PaymentPayload: payload,
		Resource: in.req.Resource.URL, PayTo: auth.To, Token: ref(in.sign.token), Amount: policy.FormatAmount(amount, in.sign.token.Decimals),
		Digest: sg.Digest.Hex(), ValidUntil: sg.Until.UTC().Format(time.RFC3339)}
	r.Message = fmt.Sprintf("Signed and journaled; nothing was sent. Retry the request to %s with the header PAYMENT-SIGNATURE: <payment_signature>; the resource's facilitator moves %s %s to %s. It stays counted against the caps until it is seen used on chain or %s passes unused.",
		inert(in.req.Resource.URL, 300), r.Amount, in.sign.token.Marked(), r.PayTo, r.ValidUntil)
	return success(r, "SIGNED x402 payment: "+r.Message+"\nPAYMENT-SIGNATURE: "+r.PaymentSignature)
}
