package tools

// wallet_call: calls as a builder returns them ({to, data, value?}), off
// unless the operator allows their targets (WALLETGATE_ALLOW_CALLS). Rules:
// the calls are capped on their simulated effects, never on what their
// calldata claims; the preview names each call (decode.go) and says what it
// will move; the confirm refuses if the re-simulation moves more.

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

const (
	callTool = "wallet_call"

	CodeCallNotAllowed = "CALL_NOT_ALLOWED"
	CodeBadCall        = "BAD_CALL"
)

// maxCalldata bounds one call's calldata.
const maxCalldata = 6 << 10

// callItem is one validated call.
type callItem struct {
	to    common.Address
	data  []byte
	value *big.Int // base units (wei); 0 when omitted
}

// callIntent is wallet_call's validated arguments.
type callIntent struct {
	from  common.Address
	calls []callItem
}

func (i callIntent) key() any {
	type c struct {
		To    string `json:"to"`
		Data  string `json:"data"`
		Value string `json:"value"`
	}
	cs := make([]c, len(i.calls))
	for k, x := range i.calls {
		cs[k] = c{To: x.to.Hex(), Data: "0x" + hex.EncodeToString(x.data), Value: x.value.String()}
	}
	return struct {
		Calls []c `json:"calls"`
	}{cs}
}

// callArgs is one transaction request of wallet_call.
type callArgs struct {
	To    *string `json:"to" pattern:"address" jsonschema:"the contract"`
	Data  *string `json:"data,omitempty" pattern:"calldata" jsonschema:"the calldata"`
	Value *string `json:"value,omitempty" pattern:"amount" jsonschema:"ETH sent with it, e.g. \"0.01\""`
}

// callToolArgs are wallet_call's arguments.
type callToolArgs struct {
	Calls []callArgs `json:"calls" items:"1-8" jsonschema:"the builder's transaction requests in order, only to, data and value (decimal ETH, not hex wei); what they move {capped}"`
	confirmArg
	networkArg
}

func (s *Server) callTool() Tool {
	return writeTool(s, callTool, "Send contract calls",
		"Send contract calls a builder (DEX aggregator, lending protocol) returned, to contracts the operator allows; the preview decodes them and shows what they move. "+twoCalls,
		twoStep(s, callTool, s.parseCall, s.previewCall, nil))
}

func (s *Server) parseCall(_ context.Context, a callToolArgs) (callIntent, *Refusal) {
	if a.Calls == nil {
		return callIntent{}, refuse(CodeBadCall, "calls is missing. Give [{\"to\": \"0x…\", \"data\": \"0x…\", \"value\": \"0.01\"}], as the builder returned them.")
	}
	in := callIntent{from: s.address}
	for k, it := range a.Calls {
		if it.To == nil {
			return callIntent{}, refuse(CodeBadCall, "calls[%d].to is missing: give the contract to call.", k)
		}
		toRaw := *it.To
		to, err := policy.ParseRecipient(toRaw)
		if err != nil {
			return callIntent{}, refuse(CodeBadAddress, "calls[%d].to %s: %s. Give 0x followed by 40 hex digits, all lower case or with a correct EIP-55 checksum.", k, displayInput(toRaw), reason(err))
		}
		var data []byte
		if it.Data != nil {
			raw := *it.Data
			if !strings.HasPrefix(raw, "0x") || len(raw)%2 != 0 {
				return callIntent{}, refuse(CodeBadCall, "calls[%d].data %s is not 0x-hex calldata with whole bytes. Give it as the builder returned it, e.g. \"0x095ea7b3…\".", k, displayInput(raw))
			}
			if data, err = hex.DecodeString(raw[2:]); err != nil {
				return callIntent{}, refuse(CodeBadCall, "calls[%d].data %s is not hex. Give it as the builder returned it.", k, displayInput(raw))
			}
			if len(data) > maxCalldata {
				return callIntent{}, refuse(CodeBadCall, "calls[%d].data is %d bytes; at most %d are accepted.", k, len(data), maxCalldata)
			}
		}
		value := new(big.Int)
		if it.Value != nil {
			raw := *it.Value
			if value, err = policy.ParseAmount(raw, 18); err != nil {
				return callIntent{}, refuse(CodeBadAmount, "calls[%d].value %s: %s. Give ETH as a decimal string, e.g. \"0.01\" (a builder's hex wei value must be converted to ETH).", k, displayInput(raw), reason(err))
			}
		}
		if !s.cfg.AllowCalls.Allows(to, data) {
			sel := "no calldata"
			if len(data) >= 4 {
				sel = "function 0x" + hex.EncodeToString(data[:4])
			}
			return callIntent{}, refuse(CodeCallNotAllowed, "calls[%d] calls %s (%s), which the operator has not allowed (%s=%s). Nothing was signed or sent. Ask the operator to add the contract (optionally ADDR:0xSELECTOR) to %s.",
				k, to.Hex(), sel, policy.EnvAllowCalls, s.cfg.AllowCalls.String(), policy.EnvAllowCalls)
		}
		in.calls = append(in.calls, callItem{to: to, data: data, value: value})
	}
	return in, nil
}

// callPreviewItem is one call in a preview.
type callPreviewItem struct {
	To           string      `json:"to" pattern:"address" jsonschema:"the contract called"`
	ToIsContract bool        `json:"to_is_contract" jsonschema:"whether it has contract code"`
	ToKnown      string      `json:"to_known,omitempty" jsonschema:"what walletgate's table calls it, when it knows it"`
	Value        string      `json:"value" pattern:"amount" jsonschema:"ETH sent with it"`
	Decoded      decodedCall `json:"decoded" jsonschema:"what its calldata asks for, in words (the effects, not this, bound the caps)"`
}

// callPreview is a wallet_call preview's facts.
type callPreview struct {
	Action  string            `json:"action" enum:"call" jsonschema:"call"`
	Summary string            `json:"summary" jsonschema:"the calls and what they move, in one line"`
	From    string            `json:"from" pattern:"address" jsonschema:"the wallet"`
	Calls   []callPreviewItem `json:"calls" jsonschema:"each call, in order"`
	Changes changesJSON       `json:"changes" jsonschema:"what the simulation of these calls moves out of and into the wallet, and the allowances it leaves set: what the caps count"`
	AnyCall bool              `json:"any_call" jsonschema:"the operator allows calls to any contract (WALLETGATE_ALLOW_CALLS=any)"`
	Legs    []legPreview      `json:"legs" jsonschema:"the transactions, in order"`
	MaxFee  string            `json:"max_fee" pattern:"amount" jsonschema:"the most all of them can cost in network fees, in ETH"`
	previewCommon
}

// callPreviewResult is its tool's preview result.
type callPreviewResult = previewOf[callPreview]

func (s *Server) previewCall(ctx context.Context, in callIntent) (*mcp.CallToolResult, *Refusal) {
	if bad := s.engine.Allowed(nil); bad != nil {
		return nil, bad
	}
	p := &engine.Plan{}
	for k, c := range in.calls {
		p.Legs = append(p.Legs, engine.Leg{Label: fmt.Sprintf("call %d", k+1), Call: chain.Call{From: in.from, To: c.to, Data: c.data, Value: c.value}})
	}
	// Whether each target has code rides in the simulation's round trip.
	codes := make([]*chain.View, len(in.calls))
	for k, c := range in.calls {
		codes[k] = chain.CodeView(c.to)
	}
	st, bad := s.engine.BuildTraced(ctx, p, codes...)
	if bad != nil {
		return nil, bad
	}
	pv := callPreview{Action: "call", From: in.from.Hex(), Changes: s.changesOf(p.Traced), AnyCall: s.cfg.AllowCalls.Any,
		Legs: legPreviews(p.Legs), MaxFee: policy.FormatAmount(maxFees(p), 18),
		previewCommon: s.newPreviewCommon(p.Spend, fmt.Sprintf("all %d call(s) succeed in sequence against block %d", len(p.Legs), st.Head.Number))}
	var names []string
	for k, c := range in.calls {
		if codes[k].Err != nil {
			return nil, rpcRefusal(codes[k].Err)
		}
		code := codes[k].Return
		item := callPreviewItem{To: c.to.Hex(), ToIsContract: len(code) > 0, ToKnown: s.knownContract(c.to), Value: policy.FormatAmount(c.value, 18), Decoded: s.decodeCall(c.to, c.data)}
		pv.Calls = append(pv.Calls, item)
		name, _, _ := strings.Cut(item.Decoded.Function, "(")
		names = append(names, name+" on "+item.To)
		if item.Decoded.Source == "fourbyte" || item.Decoded.Source == "unknown" {
			pv.Warnings = append(pv.Warnings, "call to "+item.To+": "+item.Decoded.Function+" — walletgate cannot verify what it does; only its simulated effects below are known")
		}
		if len(c.data) > 0 && !item.ToIsContract {
			pv.Warnings = append(pv.Warnings, "call to "+item.To+" carries calldata but the address has no code")
		}
	}
	if pv.AnyCall {
		pv.Warnings = append(pv.Warnings, "the operator allows calls to ANY contract (WALLETGATE_ALLOW_CALLS=any)")
	}
	for _, a := range pv.Changes.Allowances {
		if a.Exposure {
			pv.Warnings = append(pv.Warnings, "these calls leave "+a.Spender+" allowed to move "+a.After+" "+marked(a.Symbol, a.Known)+" without asking again")
		}
	}
	pv.Summary = fmt.Sprintf("%s — this will: %s, on %s (%s)", strings.Join(names, "; "), pv.Changes.Summary, pv.Network, pv.NetworkMarker)
	pv.fee = maxFees(p)
	return present(s, callTool, in, p, pv)
}

func (pv callPreview) title() string { return pv.Summary }

func (pv callPreview) body(b *strings.Builder) {
	fmt.Fprintf(b, "From:      %s (this wallet)\n", pv.From)
	for k, it := range pv.Calls {
		kind := "a contract"
		if !it.ToIsContract {
			kind = "an account WITHOUT code"
		}
		if it.ToKnown != "" {
			kind += ", " + it.ToKnown
		}
		fmt.Fprintf(b, "Call %d:    %s (%s), value %s ETH: %s\n", k+1, it.To, kind, it.Value, it.Decoded.Function)
		for _, a := range it.Decoded.Args {
			fmt.Fprintf(b, "             %s\n", a)
		}
	}
	changesText(b, pv.Changes)
	legsText(b, pv.Legs)
	maxFeesText(b, pv.MaxFee)
}

func (pv callPreview) page(d *approval.Display) {
	d.Amounts = []approval.Amount{{Label: "This will", Rounded: pv.Changes.Summary, Exact: pv.Changes.Summary}}
}
