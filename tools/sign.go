package tools

// wallet_sign_typed_data: an EIP-712 signature, two-step like every write.
// Reading the typed data (apitypes' validation and hash, the chain binding,
// the known kinds and their fields) is package typeddata's. Rules of this
// file: the known kinds (EIP-2612 Permit, EIP-3009 transfer
// and receive authorizations) are decoded and counted against the caps like
// a transaction's outflow — the owner or payer must be the wallet, the value
// is never unlimited, the deadline is ahead and within
// WALLETGATE_SIGNATURE_MAX_VALIDITY, the nonce is unused on chain; anything
// else is refused unless the operator allows unknown kinds, and then it is
// shown whole, inert, with "no cap applies". The signature itself is made by
// the engine's signature plan at confirm (journaled before it is returned).

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools/typeddata"
)

const signTypedDataTool = "wallet_sign_typed_data"

// signIntent is a typed-data signature, read and decoded.
type signIntent struct {
	from  common.Address
	doc   *typeddata.Doc
	sig   *engine.SignaturePlan // Data, kind and decoded fields
	token asset                 // known kinds
}

func (i signIntent) key() any {
	return struct {
		Digest string `json:"digest"`
	}{i.doc.Digest.Hex()}
}

// signArgs are wallet_sign_typed_data's arguments.
type signArgs struct {
	TypedData jsontext.Value `json:"typed_data" jsonschema:"the EIP-712 object as given: {types, primaryType, domain, message}; a permit or authorization {capped}"`
	confirmArg
	networkArg
}

func (s *Server) signTypedDataTool() Tool {
	return writeTool(s, signTypedDataTool, "Sign EIP-712 typed data",
		"Sign EIP-712 typed data (eth_signTypedData_v4): permits and transfer authorizations are decoded, capped and time-bounded; other kinds need the operator's opt-in. "+twoCalls,
		twoStep(s, signTypedDataTool, s.parseSign, s.previewSign, s.renderSigned))
}

// Refusal codes of typed data: typeddata's, and the signature kind's own.
const (
	CodeTypedDataInvalid     = typeddata.CodeInvalid
	CodeTypedDataUnknown     = typeddata.CodeUnknown
	CodeTypedDataWrongChain  = typeddata.CodeWrongChain
	CodeTypedDataUnsupported = typeddata.CodeUnsupported
	CodeTypedDataOwner       = "TYPED_DATA_NOT_WALLET"
	CodeTypedDataUnlimited   = "PERMIT_UNLIMITED"
	CodeTypedDataDeadline    = engine.CodeValidityTooLong
	CodeTypedDataNoContract  = engine.CodeVerifyingNoCode
)

// parseSign reads typed_data and decodes its kind.
func (s *Server) parseSign(ctx context.Context, a signArgs) (signIntent, *Refusal) {
	if len(a.TypedData) == 0 {
		return signIntent{}, refuse(CodeTypedDataInvalid, "typed_data is missing. Nothing was signed. Give the standard EIP-712 object {types, primaryType, domain, message}, as eth_signTypedData_v4 takes it.")
	}
	tree, ref := decodeObject("typed_data", json.RawMessage(a.TypedData)) // accepted by checkArgs already
	if ref != nil {
		return signIntent{}, ref
	}
	doc, tref := typeddata.Read(tree, s.typedChain())
	if tref != nil {
		return signIntent{}, adopt(tref.Code, tref.Message)
	}
	return s.decodeSignature(ctx, doc)
}

func (s *Server) typedChain() typeddata.Chain {
	return typeddata.Chain{ID: s.chainID, Name: s.network.Name}
}

// signatureKinds are the engine's names of typeddata's kinds.
var signatureKinds = map[typeddata.Kind]string{typeddata.Permit: engine.SigPermit, typeddata.TransferAuthorization: engine.SigTransferAuth,
	typeddata.ReceiveAuthorization: engine.SigReceiveAuth, typeddata.Unknown: engine.SigUnknownTyped}

// adopt is a protocol package's refusal (typeddata's, x402's) as a tool's.
func adopt(code, message string) *Refusal { return &Refusal{Code: code, Message: message} }

// decodeSignature turns read typed data into a signature plan's intent: for
// a known kind, the owner must be the wallet, the counterparty not zero, the
// value not unlimited, and the deadline ahead and within the bound.
func (s *Server) decodeSignature(ctx context.Context, doc *typeddata.Doc) (signIntent, *Refusal) {
	in := signIntent{from: s.address, doc: doc}
	sp := &engine.SignaturePlan{Kind: signatureKinds[doc.Kind], Data: doc.Data, MaxValidity: s.cfg.SignatureValidity, Owner: s.address}
	in.sig = sp
	primary := doc.Data.PrimaryType
	g := doc.Grant
	if g == nil {
		if !s.cfg.AllowTypedDataAny {
			return in, refuse(CodeTypedDataUnknown, "%s is not a kind walletgate decodes (it decodes EIP-2612 Permit and EIP-3009 TransferWithAuthorization / ReceiveWithAuthorization), so what the signature allows cannot be shown or capped. Nothing was signed. The operator can allow unknown kinds with %s=any (they are then shown whole, with no cap).",
				inert(primary, 64), policy.EnvAllowTypedData)
		}
		return in, nil
	}
	tok, ref := s.resolveAsset(ctx, doc.Verifying.Hex())
	if ref != nil {
		return in, ref
	}
	in.token, sp.Token = tok, tok.Address
	if g.Owner != s.address {
		return in, refuse(CodeTypedDataOwner, "the %s's %s is %s, not this wallet (%s): walletgate signs only for its own tokens, and a signature by this wallet for another owner would be invalid or a trick. Nothing was signed.", primary, g.OwnerField, g.Owner.Hex(), s.address.Hex())
	}
	sp.Counterparty = g.Counterparty
	if sp.Counterparty == (common.Address{}) {
		return in, refuse(CodeBadAddress, "the %s's %s is the zero address. Nothing was signed.", primary, g.CounterpartyField)
	}
	sp.Amount = g.Value
	if sp.Amount.Cmp(unlimited) >= 0 {
		return in, refuse(CodeTypedDataUnlimited, "the %s is for %s base units of %s: an unlimited amount, so the %s could move every %s the wallet holds, now and later. Nothing was signed. walletgate signs exact amounts only; ask for the amount the next step needs.",
			primary, sp.Amount, tok.Marked(), g.CounterpartyField, tok.Marked())
	}
	maxUntil := new(big.Int).SetInt64(s.now().Add(s.cfg.SignatureValidity).Unix())
	if g.Until.Cmp(maxUntil) > 0 {
		return in, refuse(CodeTypedDataDeadline, "its %s is %s, more than %s from now (at most %s, %s): a signature that stays valid that long can be used whenever its holder likes. Nothing was signed. Ask for a %s at most %s ahead; the operator sets %s.",
			g.UntilField, g.Until, s.cfg.SignatureValidity, maxUntil, time.Unix(maxUntil.Int64(), 0).UTC().Format(time.RFC3339), g.UntilField, s.cfg.SignatureValidity, policy.EnvSignatureValidity)
	}
	sp.Until = time.Unix(g.Until.Int64(), 0)
	if !sp.Until.After(s.now()) {
		return in, refuse(engine.CodeSignatureUsed, "its %s (%s) has already passed. Nothing was signed. Ask for a fresh one.", g.UntilField, sp.Until.UTC().Format(time.RFC3339))
	}
	sp.PermitNonce, sp.AuthNonce = g.PermitNonce, g.AuthNonce
	return in, nil
}

// recipient is whom the allow-list is checked against: the spender or the
// payee; nil for an unknown kind (it names nobody walletgate can check).
func (i signIntent) recipient() *common.Address {
	if i.sig.Kind == engine.SigUnknownTyped {
		return nil
	}
	c := i.sig.Counterparty
	return &c
}

// signPlan builds and checks a signature plan: policy, the chain state it
// depends on, and the caps. pay is set for an x402 payment (its payee is
// checked again at confirm).
func (s *Server) signPlan(ctx context.Context, in signIntent, pay *engine.Payment) (*engine.Plan, *Refusal) {
	if ref := s.engine.Allowed(in.recipient()); ref != nil {
		return nil, ref
	}
	p := &engine.Plan{Sig: in.sig, Recipient: in.recipient(), Spend: caps.Spend{}, Payment: pay}
	if in.sig.Kind != engine.SigUnknownTyped {
		p.Spend[in.sig.Token] = new(big.Int).Set(in.sig.Amount)
	}
	// On chain (an unknown kind without a verifying contract has nothing
	// there to check), then the caps.
	if ref := s.engine.PreviewSignature(ctx, p); ref != nil {
		return nil, ref
	}
	return p, nil
}

// typedDomainJSON is a typed-data domain for a preview.
type typedDomainJSON struct {
	Name              string `json:"name,omitempty" jsonschema:"the domain's name (untrusted text, shown inert)"`
	Version           string `json:"version,omitempty" jsonschema:"the domain's version (untrusted text)"`
	ChainID           uint64 `json:"chain_id" jsonschema:"the domain's chain id: always this wallet's chain"`
	VerifyingContract string `json:"verifying_contract,omitempty" pattern:"address" jsonschema:"the contract that verifies the signature"`
}

// signPreview is a typed-data signature's preview.
type signPreview struct {
	Kind         string          `json:"kind" enum:"permit|transfer_authorization|receive_authorization|unknown" jsonschema:"permit (EIP-2612: the spender may move the amount), transfer_authorization / receive_authorization (EIP-3009: a payment of the amount to the payee), or unknown (the operator allows unknown kinds; no cap applies)"`
	Summary      string          `json:"summary" jsonschema:"what the signature allows, in one line"`
	Signer       string          `json:"signer" pattern:"address" jsonschema:"the wallet"`
	PrimaryType  string          `json:"primary_type" jsonschema:"the typed data's primary type (untrusted text)"`
	Domain       typedDomainJSON `json:"domain" jsonschema:"the typed data's domain"`
	Digest       string          `json:"digest" pattern:"hash" jsonschema:"the EIP-712 digest that will be signed"`
	Token        *tokenRef       `json:"token,omitempty" jsonschema:"the token a permit or authorization is for"`
	Counterparty string          `json:"counterparty,omitempty" pattern:"address" jsonschema:"the permit's spender, or the authorization's payee"`
	Amount       string          `json:"amount,omitempty" pattern:"amount" jsonschema:"the amount, in the token's units"`
	AmountBase   string          `json:"amount_base,omitempty" pattern:"base" jsonschema:"the amount in base units"`
	ValidUntil   string          `json:"valid_until,omitempty" jsonschema:"until when it can be used (RFC 3339, UTC): a permit's deadline, an authorization's validBefore"`
	NoCapApplies bool            `json:"no_cap_applies" jsonschema:"true for an unknown kind: walletgate cannot tell what it allows, and no cap counts it"`
	Message      string          `json:"message" jsonschema:"the whole message, keys sorted, strings made inert (untrusted text)"`
	previewCommon

	token asset // a known kind's token
}

// signPreviewResult is its tool's preview result.
type signPreviewResult = previewOf[signPreview]

// signedResult is a confirmed signature.
type signedResult struct {
	Status     string `json:"status" enum:"signed" jsonschema:"signed: the signature was made and journaled; nothing was sent"`
	Kind       string `json:"kind" enum:"permit|transfer_authorization|receive_authorization|unknown" jsonschema:"the kind that was signed"`
	Signer     string `json:"signer" pattern:"address" jsonschema:"the wallet"`
	Digest     string `json:"digest" pattern:"hash" jsonschema:"the EIP-712 digest signed"`
	Signature  string `json:"signature" jsonschema:"the 65-byte signature r‖s‖v, 0x hex (v is 27 or 28)"`
	V          uint8  `json:"v" jsonschema:"v (27 or 28)"`
	R          string `json:"r" pattern:"hash" jsonschema:"r"`
	S          string `json:"s" pattern:"hash" jsonschema:"s"`
	ValidUntil string `json:"valid_until,omitempty" jsonschema:"until when it can be used (RFC 3339, UTC)"`
	Message    string `json:"message" jsonschema:"what was signed and what stays counted, in words"`
}

// signPreviewOf renders what a signature plan allows.
func (s *Server) signPreviewOf(in signIntent, p *engine.Plan) signPreview {
	d := in.doc.Data.Domain
	pv := signPreview{Kind: in.sig.Kind, Signer: in.from.Hex(), PrimaryType: inert(in.doc.Data.PrimaryType, 64), Digest: in.doc.Digest.Hex(),
		Domain:       typedDomainJSON{Name: inert(d.Name, 64), Version: inert(d.Version, 32), ChainID: s.chainID, VerifyingContract: d.VerifyingContract},
		Message:      inertJSON(in.doc.Shown, 4000),
		NoCapApplies: in.sig.Kind == engine.SigUnknownTyped,
		previewCommon: s.newPreviewCommon(p.Spend, "no transaction, so nothing is simulated; checked on chain: the verifying contract has code"+
			map[bool]string{true: "", false: ", the nonce is unused and the deadline is ahead"}[in.sig.Kind == engine.SigUnknownTyped]),
	}
	where := fmt.Sprintf("on %s (%s)", pv.Network, pv.NetworkMarker)
	if in.sig.Kind == engine.SigUnknownTyped {
		pv.Summary = fmt.Sprintf("Sign a %s message of an UNKNOWN kind for domain %q %s: walletgate cannot tell what it allows, and NO CAP APPLIES", pv.PrimaryType, pv.Domain.Name, where)
		pv.Warnings = append(pv.Warnings, "UNKNOWN typed data: read the whole message; a signature can grant or move funds without any transaction, and no cap counts it")
		return pv
	}
	pv.token = in.token
	tr := ref(in.token)
	pv.Token, pv.Counterparty = &tr, in.sig.Counterparty.Hex()
	pv.Amount, pv.AmountBase = policy.FormatAmount(in.sig.Amount, in.token.Decimals), in.sig.Amount.String()
	pv.ValidUntil = in.sig.Until.UTC().Format(time.RFC3339)
	switch in.sig.Kind {
	case engine.SigPermit:
		pv.Summary = fmt.Sprintf("Permit %s to move up to %s %s of this wallet's, until %s, %s (no transaction: whoever holds the signature submits it)", pv.Counterparty, pv.Amount, shownAsset(in.token), pv.ValidUntil, where)
	default:
		pv.Summary = fmt.Sprintf("Authorize a payment of %s %s to %s, valid until %s, %s (no transaction: whoever holds the signature submits it)", pv.Amount, shownAsset(in.token), pv.Counterparty, pv.ValidUntil, where)
	}
	if !in.token.Known {
		pv.Warnings = append(pv.Warnings, unverifiedWarning)
	}
	return pv
}

func (s *Server) previewSign(ctx context.Context, in signIntent) (*mcp.CallToolResult, *Refusal) {
	p, ref := s.signPlan(ctx, in, nil)
	if ref != nil {
		return nil, ref
	}
	return present(s, signTypedDataTool, in, p, s.signPreviewOf(in, p))
}

func (pv signPreview) headline() string { return "PREVIEW — nothing has been signed.\n" }

func (pv signPreview) title() string { return pv.Summary }

func (pv signPreview) body(b *strings.Builder) {
	fmt.Fprintf(b, "Action:    %s\n", pv.Summary)
	fmt.Fprintf(b, "Typed data: %s, domain %q version %q, chain id %d", pv.PrimaryType, pv.Domain.Name, pv.Domain.Version, pv.Domain.ChainID)
	if pv.Domain.VerifyingContract != "" {
		fmt.Fprintf(b, ", verifying contract %s", pv.Domain.VerifyingContract)
	}
	fmt.Fprintf(b, "\nDigest:    %s\n", pv.Digest)
	if pv.Token != nil {
		fmt.Fprintf(b, "Token:     %s, contract %s\n", pv.Token.marked(), pv.Token.Address)
		fmt.Fprintf(b, "Amount:    %s %s (%s base units), counted against the token's caps until it is used or expires\n", pv.Amount, pv.Token.marked(), pv.AmountBase)
		fmt.Fprintf(b, "Valid until: %s\n", pv.ValidUntil)
	} else {
		b.WriteString("Caps:      NO CAP APPLIES to this signature (unknown kind)\n")
	}
	fmt.Fprintf(b, "Message:   %s\n", pv.Message)
}

func (pv signPreview) page(d *approval.Display) {
	txt := "NO CAP APPLIES: unknown typed data"
	label := "Signs"
	if pv.Amount != "" {
		txt, label = pv.Amount+" "+shownAsset(pv.token)+" to "+pv.Counterparty+" until "+pv.ValidUntil, "Signs away"
	}
	d.Amounts = []approval.Amount{{Label: label, Rounded: txt, Exact: txt}}
}

// signedOf renders a signature.
func signedOf(from common.Address, sg *engine.Signed) signedResult {
	r := signedResult{Status: string(engine.StatusSigned), Kind: sg.Kind, Signer: from.Hex(), Digest: sg.Digest.Hex(), Signature: hexutil.Encode(sg.Signature),
		V: sg.Signature[64], R: hexutil.Encode(sg.Signature[:32]), S: hexutil.Encode(sg.Signature[32:64])}
	if sg.Kind != engine.SigUnknownTyped {
		r.ValidUntil = sg.Until.UTC().Format(time.RFC3339)
	}
	return r
}

func (s *Server) renderSigned(in signIntent, out *engine.Outcome) *mcp.CallToolResult {
	r := signedOf(s.address, out.Signed)
	if in.sig.Kind == engine.SigUnknownTyped {
		r.Message = "Signed and journaled; nothing was sent. No cap counts this signature (unknown kind)."
	} else {
		r.Message = fmt.Sprintf("Signed and journaled; nothing was sent. Its %s %s stay counted against the caps until it is seen used on chain (then for good) or %s passes unused.",
			policy.FormatAmount(in.sig.Amount, in.token.Decimals), in.token.Marked(), r.ValidUntil)
	}
	return success(r, fmt.Sprintf("SIGNED %s (digest %s): %s\nSignature: %s (v %d, r %s, s %s)", r.Kind, r.Digest, r.Message, r.Signature, r.V, r.R, r.S))
}

// inertJSON renders a message for people: keys sorted, every string made
// inert, bounded.
func inertJSON(v any, max int) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := slices.Sorted(maps.Keys(t))
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
			q, _ := json.Marshal(inert(t, 200))
			b.Write(q)
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
