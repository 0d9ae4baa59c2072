package tools

// Allowances: wallet_allowance reads one; wallet_approve sets one exactly
// ("0" revokes). An approval is an effects-bound plan on the engine: the new
// allowance, read back in its simulation, is the exposure the caps count when
// it rises; a revoke or a lowering counts nothing. A token whose allowance is
// not zero goes through zero first, as USDT requires.

import (
	"context"
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
	allowanceTool = "wallet_allowance"
	approveTool   = "wallet_approve"

	CodeApprovalTooLarge  = policy.CodeApprovalTooLarge
	CodeApprovalUnchanged = "APPROVAL_UNCHANGED"
)

// allowanceResult is wallet_allowance's structured result.
type allowanceResult struct {
	Token             tokenRef `json:"token" jsonschema:"the token"`
	Owner             string   `json:"owner" pattern:"address" jsonschema:"whose tokens (default: the wallet)"`
	Spender           string   `json:"spender" pattern:"address" jsonschema:"who may move them"`
	SpenderIsContract bool     `json:"spender_is_contract" jsonschema:"whether the spender has contract code"`
	SpenderKnown      string   `json:"spender_known,omitempty" jsonschema:"what walletgate's table calls the spender, when it knows it"`
	Allowance         string   `json:"allowance" pattern:"amount" jsonschema:"the allowance, in the token's units"`
	AllowanceBase     string   `json:"allowance_base" pattern:"base" jsonschema:"the allowance in base units"`
	Unlimited         bool     `json:"unlimited" jsonschema:"the allowance is unlimited (2^255 or more): the spender can move every token the owner holds"`
	Block             uint64   `json:"block" jsonschema:"the block it was read at"`
}

// allowanceArgs are wallet_allowance's arguments.
type allowanceArgs struct {
	Token   *string `json:"token" jsonschema:"a symbol (e.g. USDT) or a token address"`
	Spender *string `json:"spender" pattern:"address" jsonschema:"who may move the tokens"`
	Owner   *string `json:"owner,omitempty" pattern:"address" jsonschema:"whose tokens (default: the wallet)"`
	networkArg
}

func (s *Server) allowanceTool() Tool {
	return readTool(s, allowanceTool, "Token allowance",
		"How much of an owner's token (default: the wallet's) a spender may move, and who the spender is.", s.allowanceHandler)
}

// parseTokenSpender resolves the token (never ETH) and the spender.
func (s *Server) parseTokenSpender(ctx context.Context, token, spender *string) (asset, common.Address, *Refusal) {
	tokRaw := deref(token)
	if strings.EqualFold(tokRaw, policy.NativeSymbol) {
		return asset{}, common.Address{}, refuse(CodeBadToken, "token ETH has no allowance: only ERC-20 tokens do. Give a known symbol (%s) or a token address.", s.knownSymbols())
	}
	tok, ref := s.resolveAsset(ctx, tokRaw)
	if ref != nil {
		return asset{}, common.Address{}, ref
	}
	spRaw := deref(spender)
	sp, err := policy.ParseRecipient(spRaw)
	if err != nil {
		return asset{}, common.Address{}, refuse(CodeBadAddress, "spender %s: %s. Give the spender as 0x followed by 40 hex digits, all lower case or with a correct EIP-55 checksum.", displayInput(spRaw), reason(err))
	}
	return tok, sp, nil
}

func (s *Server) allowanceHandler(ctx context.Context, a allowanceArgs) (*mcp.CallToolResult, *Refusal) {
	tok, sp, bad := s.parseTokenSpender(ctx, a.Token, a.Spender)
	if bad != nil {
		return nil, bad
	}
	owner := s.address
	if a.Owner != nil {
		raw := *a.Owner
		o, err := policy.ParseAddress(raw)
		if err != nil {
			return nil, refuse(CodeBadAddress, "owner %s: %s. Give 0x followed by 40 hex digits.", displayInput(raw), reason(err))
		}
		owner = o
	}
	v := chain.AllowanceView(tok.Address, owner, sp)
	st, err := s.chain.StateAndViews(ctx, owner, v)
	if err != nil {
		return nil, rpcRefusal(err)
	}
	if v.Err != nil {
		return nil, refuse(CodeBadToken, "%s did not answer allowance(owner, spender) (%s): it is not a working ERC-20 token.", tok.Address.Hex(), inert(v.Err.Error(), 200))
	}
	amount, err := chain.DecodeUint256(v.Return)
	if err != nil {
		return nil, rpcRefusal(fmt.Errorf("allowance of %s: %w", tok.Address.Hex(), err))
	}
	code, err := s.chain.Code(ctx, sp)
	if err != nil {
		return nil, rpcRefusal(err)
	}
	r := allowanceResult{Token: ref(tok), Owner: owner.Hex(), Spender: sp.Hex(), SpenderIsContract: len(code) > 0, SpenderKnown: s.knownContract(sp),
		Allowance: policy.FormatAmount(amount, tok.Decimals), AllowanceBase: amount.String(), Unlimited: amount.Cmp(unlimited) >= 0, Block: st.Head.Number}
	kind := "an account without code"
	if r.SpenderIsContract {
		kind = "a contract"
	}
	if r.SpenderKnown != "" {
		kind += ", " + r.SpenderKnown
	}
	amt := r.Allowance + " " + tok.Marked()
	if r.Unlimited {
		amt = "UNLIMITED " + tok.Marked() + " (it can move every token the owner holds)"
	}
	return success(r, fmt.Sprintf("Allowance at block %d: %s (%s) may move %s of %s's tokens (%s base units). The token %s is %s.",
		r.Block, r.Spender, kind, amt, r.Owner, r.AllowanceBase, tok.Address.Hex(), map[bool]string{true: "in walletgate's known-token table", false: "UNVERIFIED (not in walletgate's known-token table)"}[tok.Known])), nil
}

// approveIntent is wallet_approve's validated, resolved arguments.
type approveIntent struct {
	from    common.Address
	token   asset
	spender common.Address
	amount  *big.Int // base units, may be 0 (a revoke)
}

func (i approveIntent) key() any {
	return struct {
		Token   string `json:"token"`
		Spender string `json:"spender"`
		Amount  string `json:"amount"`
	}{i.token.Address.Hex(), i.spender.Hex(), i.amount.String()}
}

// approveArgs are wallet_approve's arguments.
type approveArgs struct {
	Token   *string `json:"token" jsonschema:"a symbol (e.g. USDT) or a token address"`
	Spender *string `json:"spender" pattern:"address" jsonschema:"who may move the tokens"`
	Amount  *string `json:"amount" pattern:"amount" jsonschema:"the exact allowance in the token's units (\"0\" revokes); a raise {capped}"`
	confirmArg
	networkArg
}

func (s *Server) approveTool() Tool {
	return writeTool(s, approveTool, "Approve or revoke a token allowance",
		"Set an exact ERC-20 allowance for a spender (\"0\" revokes); never unlimited. "+twoCalls,
		twoStep(s, approveTool, s.parseApprove, s.previewApprove, nil))
}

func (s *Server) parseApprove(ctx context.Context, a approveArgs) (approveIntent, *Refusal) {
	tok, sp, ref := s.parseTokenSpender(ctx, a.Token, a.Spender)
	if ref != nil {
		return approveIntent{}, ref
	}
	if a.Amount == nil {
		return approveIntent{}, refuse(CodeBadAmount, "amount is missing. Give the exact allowance as a decimal string, e.g. \"25\", or \"0\" to revoke.")
	}
	raw := *a.Amount
	amount, err := policy.ParseAmount(raw, tok.Decimals)
	if err != nil {
		return approveIntent{}, refuse(CodeBadAmount, "amount %s: %s. Give a decimal string with at most %d decimals for %s, e.g. \"25\", or \"0\" to revoke.", displayInput(raw), reason(err), tok.Decimals, tok.Marked())
	}
	switch d := policy.CheckExposure(amount, s.engine.PerTxCap(tok.Address)); {
	case d != nil && d.Unlimited:
		return approveIntent{}, refuse(d.Code, "amount %s is an unlimited approval: the spender could move every %s the wallet holds, now and later. walletgate approves exact amounts only. Nothing was signed or sent. Give the amount the next step needs.", displayInput(raw), tok.Marked())
	case d != nil:
		return approveIntent{}, refuse(d.Code, "an allowance of %s %s is above the per transaction cap of %s %s: the spender could move more than walletgate would send in one transaction. Nothing was signed or sent. Approve at most %s, or ask the operator to raise %s.",
			policy.FormatAmount(amount, tok.Decimals), tok.Marked(), policy.FormatAmount(d.Limit, tok.Decimals), tok.Marked(), policy.FormatAmount(d.Limit, tok.Decimals), policy.EnvCapPerTx)
	}
	return approveIntent{from: s.address, token: tok, spender: sp, amount: amount}, nil
}

// approvePreview is an approval preview's facts.
type approvePreview struct {
	Action            string       `json:"action" enum:"approve|revoke" jsonschema:"approve (set an allowance) or revoke (set it to zero)"`
	Summary           string       `json:"summary" jsonschema:"the approval in one line"`
	Token             tokenRef     `json:"token" jsonschema:"the token"`
	From              string       `json:"from" pattern:"address" jsonschema:"the wallet"`
	Spender           string       `json:"spender" pattern:"address" jsonschema:"who may move the tokens"`
	SpenderIsContract bool         `json:"spender_is_contract" jsonschema:"whether the spender has contract code"`
	SpenderKnown      string       `json:"spender_known,omitempty" jsonschema:"what walletgate's table calls the spender, when it knows it"`
	AllowanceBefore   string       `json:"allowance_before" pattern:"amount" jsonschema:"the allowance now"`
	AllowanceAfter    string       `json:"allowance_after" pattern:"amount" jsonschema:"the allowance after"`
	AmountBase        string       `json:"amount_base" pattern:"base" jsonschema:"the allowance after, in base units"`
	Exposure          bool         `json:"exposure" jsonschema:"the allowance rises: it counts against the token's caps"`
	Legs              []legPreview `json:"legs" jsonschema:"the transactions, in order (a reset to zero first when the allowance is not zero, as USDT requires)"`
	MaxFee            string       `json:"max_fee" pattern:"amount" jsonschema:"the most all legs can cost in network fees, in ETH"`
	Changes           changesJSON  `json:"changes" jsonschema:"what the simulation shows this does"`
	previewCommon

	token asset
}

// approvePreviewResult is its tool's preview result.
type approvePreviewResult = previewOf[approvePreview]

func (s *Server) previewApprove(ctx context.Context, in approveIntent) (*mcp.CallToolResult, *Refusal) {
	// A revoke gives the spender nothing: the allow-list does not bind it,
	// so an operator who narrows the list can still take an allowance back.
	var given *common.Address
	if in.amount.Sign() > 0 {
		sp := in.spender
		given = &sp
	}
	if ref := s.engine.Allowed(given); ref != nil {
		return nil, ref
	}
	// The allowance decides the legs (a reset first?); the spender's code
	// rides along. Then the legs' traced simulation: two round trips.
	v := chain.AllowanceView(in.token.Address, in.from, in.spender)
	spCode := chain.CodeView(in.spender)
	if _, err := s.chain.StateAndViews(ctx, in.from, v, spCode); err != nil {
		return nil, rpcRefusal(err)
	}
	if spCode.Err != nil {
		return nil, rpcRefusal(spCode.Err)
	}
	if v.Err != nil {
		return nil, refuse(CodeBadToken, "%s did not answer allowance(owner, spender): it is not a working ERC-20 token. Nothing was signed or sent.", in.token.Address.Hex())
	}
	before, err := chain.DecodeUint256(v.Return)
	if err != nil {
		return nil, rpcRefusal(err)
	}
	if before.Cmp(in.amount) == 0 {
		return nil, refuse(CodeApprovalUnchanged, "the allowance of %s for %s is already %s %s. Nothing was signed or sent; there is nothing to do.",
			in.token.Marked(), in.spender.Hex(), policy.FormatAmount(before, in.token.Decimals), in.token.Marked())
	}
	approveCall := func(v *big.Int) chain.Call {
		return chain.Call{From: in.from, To: in.token.Address, Data: chain.ApproveData(in.spender, v)}
	}
	var legs []engine.Leg
	if before.Sign() > 0 && in.amount.Sign() > 0 {
		legs = append(legs, engine.Leg{Label: "reset approval", Call: approveCall(new(big.Int))})
	}
	label := "approve"
	if in.amount.Sign() == 0 {
		label = "revoke"
	}
	legs = append(legs, engine.Leg{Label: label, Call: approveCall(in.amount)})
	p := &engine.Plan{Legs: legs, Recipient: given}
	st, bad := s.engine.BuildTraced(ctx, p)
	if bad != nil {
		return nil, bad
	}
	code := spCode.Return
	pair := engine.Pair{Token: in.token.Address, Spender: in.spender}
	after := p.Traced.Approved[pair]
	if after == nil || after.Cmp(in.amount) != 0 {
		return nil, refuse(CodeSimulationReverted, "the simulated approval did not leave the allowance at %s %s (it reads %v): the token does not behave as an ERC-20. Nothing was signed or sent.",
			policy.FormatAmount(in.amount, in.token.Decimals), in.token.Marked(), after)
	}
	pv := approvePreview{Action: label, Token: ref(in.token), From: in.from.Hex(), Spender: in.spender.Hex(), SpenderIsContract: len(code) > 0,
		SpenderKnown: s.knownContract(in.spender), AllowanceBefore: policy.FormatAmount(before, in.token.Decimals),
		AllowanceAfter: policy.FormatAmount(in.amount, in.token.Decimals), AmountBase: in.amount.String(), Exposure: in.amount.Cmp(before) > 0,
		MaxFee:  policy.FormatAmount(maxFees(p), 18),
		Changes: s.changesOf(p.Traced), token: in.token,
		previewCommon: s.newPreviewCommon(p.Spend, fmt.Sprintf("all %d transaction(s) succeed in sequence against block %d", len(p.Legs), st.Head.Number)),
	}
	pv.Legs, pv.fee = legPreviews(p.Legs), maxFees(p)
	if in.amount.Sign() == 0 {
		pv.Summary = fmt.Sprintf("Revoke %s's %s allowance (now %s) on %s (%s)", pv.Spender, in.token.Marked(), pv.AllowanceBefore, pv.Network, pv.NetworkMarker)
	} else {
		pv.Summary = fmt.Sprintf("Let %s move up to %s %s of this wallet's (now %s) on %s (%s)", pv.Spender, pv.AllowanceAfter, in.token.Marked(), pv.AllowanceBefore, pv.Network, pv.NetworkMarker)
	}
	if !pv.SpenderIsContract {
		pv.Warnings = append(pv.Warnings, "the spender is an account without code: a person or bot holding its key could move the tokens at any time")
	}
	if !in.token.Known {
		pv.Warnings = append(pv.Warnings, unverifiedWarning)
	}
	return present(s, approveTool, in, p, pv)
}

func (pv approvePreview) title() string { return pv.Summary }

func (pv approvePreview) body(b *strings.Builder) {
	fmt.Fprintf(b, "Action:    %s\n", pv.Summary)
	kind := "an account without code"
	if pv.SpenderIsContract {
		kind = "a contract"
	}
	if pv.SpenderKnown != "" {
		kind += ", " + pv.SpenderKnown
	}
	fmt.Fprintf(b, "Spender:   %s (%s)\n", pv.Spender, kind)
	fmt.Fprintf(b, "Token:     %s, contract %s\n", pv.Token.marked(), pv.Token.Address)
	fmt.Fprintf(b, "Allowance: %s → %s %s (exact, never unlimited)\n", pv.AllowanceBefore, pv.AllowanceAfter, pv.Token.marked())
	legsText(b, pv.Legs)
	changesText(b, pv.Changes)
	maxFeesText(b, pv.MaxFee)
}

func (pv approvePreview) page(d *approval.Display) {
	change := pv.AllowanceBefore + " → " + pv.AllowanceAfter + " " + shownAsset(pv.token)
	d.Amounts = []approval.Amount{{Label: "Allowance for " + pv.Spender, Rounded: change, Exact: change + " (" + pv.AmountBase + " base units)"}}
}
