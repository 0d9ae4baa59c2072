package tools

// The write pipeline, in its fixed order. Rules of this file:
//
// Preview (no confirm): policy → resolve → caps check → build (fees, gas) →
// simulate → issue a token bound to SHA-256(tool, canonical arguments) with
// the plan. Nothing is signed.
//
// Confirm: consume the token (on every outcome) → policy again → under the
// wallet's write lock: reserve caps atomically → re-read fees and nonce →
// simulate the stored plan again → sign → send; then wait for inclusion →
// verify status and effects → settle caps. Any refusal before the broadcast
// releases the reservation: nothing signed, nothing sent, no cap consumed. A
// broadcast whose outcome is unknown stays counted.

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
)

// Refusal codes of the write path (besides the gate's and caps' own).
const (
	CodeWritesDisabled     = "WRITES_DISABLED"
	CodeMainnetNotAllowed  = "MAINNET_NOT_ALLOWED"
	CodeRecipientNotAllowd = "RECIPIENT_NOT_ALLOWED"
	CodeSimulationReverted = "SIMULATION_REVERTED"
	CodeInsufficientFunds  = "INSUFFICIENT_FUNDS"
	CodeFeesRose           = "FEES_ROSE"
	CodeSendFailed         = "SEND_FAILED"
	CodeReverted           = "REVERTED"
	CodeEffectMismatch     = "EFFECT_MISMATCH"
	CodeChainChanged       = "CHAIN_CHANGED"
	CodeFeeTooHigh         = "FEE_TOO_HIGH"
)

// maxGasPerTx bounds a transaction's gas limit: a node that answers a huge
// estimate is refused outright, before the ETH cap would catch it.
const maxGasPerTx = 3_000_000

// Confirm result statuses.
const (
	statusConfirmed = "confirmed"
	statusRevertedW = "reverted"
	statusPendingW  = "pending"
)

// maxPending bounds outstanding confirmation tokens.
const maxPending = 64

// gasMargin is added to the node's gas estimate (in percent), except for a
// plain ETH transfer to an account without code, which costs exactly 21000.
const gasMargin = 20

// expectedEffect is what a confirmed transaction must show on chain.
type expectedEffect struct {
	asset    asset
	from, to common.Address
	amount   *big.Int
}

// leg is one transaction of a plan.
type leg struct {
	label string // "send", "approve", "reset approval", "swap"
	call  chain.Call
}

// plan is a previewed write: exactly what the confirm executes. Its legs are
// sent in order, each only after the one before it succeeded.
type plan struct {
	tool      string
	legs      []leg
	spend     caps.Spend
	recipient *common.Address // checked against the allow-list; nil: the wallet itself
	effects   []expectedEffect
	// recheck, if set, returns reads to make with the confirm's state read
	// and a check of their answers: what the plan assumed at preview (an
	// allowance, say) must still hold before anything is signed.
	recheck func() ([]*chain.View, func() *Refusal)
	// verify, if set, replaces verifyEffects for the final leg: it returns
	// the effects found and what is missing.
	verify func(ctx context.Context, info *chain.TxInfo) ([]effectJSON, []string)
	// explain turns a simulation revert into plain words for this plan.
	explain func(re *chain.RevertError) *Refusal
	// previewText is what the preview showed, for a person to approve. It is
	// set after the token is issued (the text names the token), hence atomic.
	previewText atomic.Pointer[string]
}

// maxCost is the most all legs together can cost in ETH.
func (p *plan) maxCost() *big.Int {
	total := new(big.Int)
	for _, l := range p.legs {
		total.Add(total, l.call.MaxCost())
	}
	return total
}

// effectJSON is one verified (or expected) on-chain effect.
type effectJSON struct {
	Kind   string `json:"kind"` // eth_transfer or erc20_transfer
	Asset  string `json:"asset"`
	Symbol string `json:"symbol"`
	From   string `json:"from"`
	To     string `json:"to"`
	Amount string `json:"amount"`
	Raw    string `json:"raw"`
}

func (e expectedEffect) json() effectJSON {
	kind := "erc20_transfer"
	if e.asset.Native {
		kind = "eth_transfer"
	}
	return effectJSON{Kind: kind, Asset: assetID(e.asset), Symbol: e.asset.Symbol, From: e.from.Hex(), To: e.to.Hex(),
		Amount: policy.FormatAmount(e.amount, e.asset.Decimals), Raw: e.amount.String()}
}

// capAfter is one cap as it would stand after the previewed spend.
type capAfter struct {
	Asset          string `json:"asset"`
	Symbol         string `json:"symbol"`
	Window         string `json:"window"`
	Limit          string `json:"limit"`
	UsedAfter      string `json:"used_after"`
	RemainingAfter string `json:"remaining_after"`
}

// writeAllowed is the policy check both calls of a write make; to is the
// recipient checked against the allow-list (nil: the wallet itself, as for a
// swap's output).
func (s *Server) writeAllowed(to *common.Address) *Refusal {
	if !s.writesEnabled() {
		return refuse(CodeWritesDisabled, "write tools are not available: %s. Nothing was signed or sent.", s.writesDisabledReason())
	}
	if s.network.ValueBearing() && !s.cfg.AllowMainnet {
		return refuse(CodeMainnetNotAllowed, "%s (chain id %d) is a value-bearing network (%s) and the operator has not allowed writes on it. Nothing was signed or sent. The operator can allow it with %s=true.",
			s.network.Name, s.chainID, s.network.Marker(), policy.EnvAllowMainnet)
	}
	if len(s.cfg.AllowTo) > 0 && to != nil {
		for _, a := range s.cfg.AllowTo {
			if a == *to {
				return nil
			}
		}
		return refuse(CodeRecipientNotAllowd, "recipient %s is not on the operator's allow-list (%s). Nothing was signed or sent. Send to an allowed address, or ask the operator to add it to %s.",
			to.Hex(), hexList(s.cfg.AllowTo), policy.EnvAllowTo)
	}
	return nil
}

func hexList(as []common.Address) string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Hex()
	}
	return strings.Join(out, ", ")
}

// build fills in fees and gas for call, simulates it, and checks the spend
// against the caps. It signs nothing. The state, the gas estimate and the code
// at codeOf come in one round trip, the simulation (which needs the gas) in a
// second.
func (s *Server) build(ctx context.Context, call chain.Call, codeOf common.Address, spendOf func(chain.Call) caps.Spend, explain func(*chain.RevertError) *Refusal) (built, *Refusal) {
	p := &plan{explain: explain}
	st, gas, code, err := s.chain.Prepare(ctx, call, codeOf)
	if err != nil {
		return built{}, s.planRevert(p, err)
	}
	if !(len(call.Data) == 0 && gas == 21000) {
		gas += gas * gasMargin / 100
	}
	if gas > maxGasPerTx {
		return built{}, feeTooHigh(gas)
	}
	call.Gas, call.MaxFee, call.Tip = gas, st.MaxFee(), st.Tip
	if st.ETH.Cmp(call.MaxCost()) < 0 {
		return built{}, refuse(CodeInsufficientFunds, "the wallet holds %s ETH but this needs up to %s ETH (value plus gas limit %d × max fee %s gwei). Nothing was signed or sent. Send less, or fund the wallet.",
			policy.FormatAmount(st.ETH, 18), policy.FormatAmount(call.MaxCost(), 18), call.Gas, policy.FormatAmount(call.MaxFee, 9))
	}
	ret, err := s.chain.Simulate(ctx, call)
	if err != nil {
		return built{}, s.planRevert(p, err)
	}
	spend := spendOf(call)
	if err := s.ledger.Check(spend); err != nil {
		return built{}, s.capsRefusal(err)
	}
	return built{call: call, state: st, ret: ret, spend: spend, code: code}, nil
}

// built is what build found out.
type built struct {
	call  chain.Call
	state chain.SendState
	ret   []byte     // the simulation's return data
	spend caps.Spend // what the caps were checked against
	code  []byte     // the code at codeOf
}

func feeTooHigh(gas uint64) *Refusal {
	return refuse(CodeFeeTooHigh, "the node estimates %d gas for this transaction, more than walletgate ever allows (%d): a plain send or swap needs a small fraction of that. Nothing was signed or sent. Check the node (WALLETGATE_RPC) and the token.", gas, maxGasPerTx)
}

func (s *Server) simulationRefusal(err error) *Refusal {
	var re *chain.RevertError
	if errors.As(err, &re) {
		reason := re.Reason
		if reason == "" {
			reason = "no reason given by the contract"
		}
		return refuse(CodeSimulationReverted, "the transaction would fail: %s. Nothing was signed or sent. Check the balance, the amount and the recipient, then try again.", inert(reason, 200))
	}
	return rpcRefusal(err)
}

// capsAfter lists each capped window of each asset in spend as it would
// stand after it, and the assets no cap applies to.
func (s *Server) capsAfter(spend caps.Spend) ([]capAfter, []string) {
	var out []capAfter
	var uncapped []string
	for _, a := range sortedAssets(spend) {
		as := s.assetInfo(a)
		if !s.ledger.Capped(a) {
			uncapped = append(uncapped, as.Symbol+" ("+assetID(as)+")")
			continue
		}
		for _, u := range s.ledger.Usage(a) {
			if u.Limit == nil {
				continue
			}
			used := new(big.Int).Add(u.Used, spend[a])
			rem := new(big.Int).Sub(u.Limit, used)
			if rem.Sign() < 0 {
				rem.SetInt64(0)
			}
			out = append(out, capAfter{Asset: assetID(as), Symbol: as.Symbol, Window: u.Window.String(),
				Limit:          policy.FormatAmount(u.Limit, as.Decimals),
				UsedAfter:      policy.FormatAmount(used, as.Decimals),
				RemainingAfter: policy.FormatAmount(rem, as.Decimals)})
		}
	}
	return out, uncapped
}

// sortedAssets is ETH first, then tokens by address.
func sortedAssets(spend caps.Spend) []common.Address {
	var out []common.Address
	if _, ok := spend[policy.NativeAsset]; ok {
		out = append(out, policy.NativeAsset)
	}
	var toks []common.Address
	for a := range spend {
		if a != policy.NativeAsset {
			toks = append(toks, a)
		}
	}
	for i := 1; i < len(toks); i++ {
		for j := i; j > 0 && strings.Compare(toks[j].Hex(), toks[j-1].Hex()) < 0; j-- {
			toks[j], toks[j-1] = toks[j-1], toks[j]
		}
	}
	return append(out, toks...)
}

// gateRefusal turns a gate error into a refusal.
func gateRefusal(err error) *Refusal {
	var ge *gate.Error
	if errors.As(err, &ge) {
		return refuse(ge.Code, "%s", ge.Message)
	}
	return refuse(gate.CodeUnknown, "the confirmation could not be checked (%s). Nothing was signed or sent. Call the tool again without confirm for a new preview.", err)
}

// confirmResult is a confirm's structured result.
type confirmResult struct {
	Status        string       `json:"status"`
	TxHash        string       `json:"tx_hash"`
	Block         *uint64      `json:"block,omitempty"`
	Confirmations uint64       `json:"confirmations"`
	GasUsed       uint64       `json:"gas_used"`
	Fee           string       `json:"fee"`
	Nonce         uint64       `json:"nonce"`
	Effects       []effectJSON `json:"effects"`
	Message       string       `json:"message"`
}

// issue records the preview in the journal, then issues its token. A preview
// that cannot be journaled is refused.
func (s *Server) issue(tool string, canonical []byte, p *plan) (string, time.Time, *Refusal) {
	fp := gate.Fingerprint(tool, canonical)
	if err := s.record(KindPreview, journal.Preview{V: journal.Version, Tool: tool, Fingerprint: hex.EncodeToString(fp[:]),
		Legs: len(p.legs), Spend: encodeSpend(p.spend)}); err != nil {
		return "", time.Time{}, s.ledgerUnavailable(err)
	}
	token, expires, err := s.gate.Issue(tool, canonical, p)
	if err != nil {
		return "", time.Time{}, gateRefusal(err)
	}
	return token, expires, nil
}

// twoStep is every write tool's handler: parse and resolve the arguments,
// then either preview (no confirm) or consume the token and execute the
// stored plan. A confirm whose arguments do not even parse still spends its
// token: tokens are consumed on every outcome.
func twoStep[I any](s *Server, tool string, parse func(context.Context, args) (I, *Refusal), canonical func(I) []byte,
	preview func(context.Context, I) (*mcp.CallToolResult, *Refusal)) func(context.Context, args) (*mcp.CallToolResult, *Refusal) {
	return func(ctx context.Context, a args) (*mcp.CallToolResult, *Refusal) {
		token, confirming := a.str("confirm")
		in, ref := parse(ctx, a)
		if ref != nil {
			if confirming {
				ref.Message += s.spendConfirm(tool, token)
			}
			return nil, ref
		}
		if !confirming {
			return preview(ctx, in)
		}
		if s.human() {
			if token, ref = s.redeem(token, tool, canonical(in)); ref != nil {
				return nil, ref
			}
		}
		p, err := s.gate.Consume(token, tool, canonical(in))
		if err != nil {
			return nil, gateRefusal(err)
		}
		return s.execute(ctx, p.(*plan))
	}
}

// execute runs the confirm half of the pipeline for a consumed plan.
func (s *Server) execute(ctx context.Context, p *plan) (*mcp.CallToolResult, *Refusal) {
	if ref := s.writeAllowed(p.recipient); ref != nil {
		return nil, ref
	}
	if s.cfg.Confirm == policy.ConfirmElicit {
		if ref := s.askHuman(ctx, p); ref != nil {
			return nil, ref
		}
	}
	out, ref := s.sendLegs(ctx, p)
	if ref != nil {
		return nil, ref
	}
	if out.early != nil {
		return out.early, nil
	}
	info, err := s.chain.WaitMined(ctx, out.hash, s.cfg.Confirmations, s.cfg.ReceiptTimeout)
	r := confirmResult{TxHash: out.hash.Hex(), Nonce: out.nonce, Effects: []effectJSON{}}
	if err != nil || !info.Mined {
		return s.pendingResult(r, out.hash), nil
	}
	s.recordReceipt(info)
	block := info.Block
	r.Block, r.Confirmations, r.GasUsed = &block, info.Confirmations, info.GasUsed
	fees := new(big.Int).Add(out.fees, info.Fee())
	r.Fee = policy.FormatAmount(fees, 18)
	actual := caps.Spend{policy.NativeAsset: fees}
	if info.Status != 1 {
		out.reservation.Settle(actual)
		r.Status = statusRevertedW
		r.Message = fmt.Sprintf("The transaction %s was included in block %d but REVERTED: nothing moved except network fees of %s ETH, which count against the ETH caps.%s", out.hash.Hex(), block, r.Fee, out.note)
		res := success(r, CodeReverted+": "+r.Message)
		res.IsError = true
		return res, nil
	}
	var found []effectJSON
	var missing []string
	if p.verify != nil {
		found, missing = p.verify(ctx, info)
	} else {
		missing = s.verifyEffects(p, info)
		for _, e := range p.effects {
			found = append(found, e.json())
		}
	}
	for _, e := range p.effects {
		if e.asset.Native {
			actual[policy.NativeAsset].Add(actual[policy.NativeAsset], e.amount)
		} else {
			actual[e.asset.Address] = new(big.Int).Set(e.amount)
		}
	}
	out.reservation.Settle(actual)
	r.Status = statusConfirmed
	if len(missing) > 0 {
		for _, t := range info.Transfers {
			r.Effects = append(r.Effects, s.transferEffect(ctx, t))
		}
		r.Message = fmt.Sprintf("The transaction %s succeeded in block %d, but its effects do not match the preview: %s. The intended amounts stay counted against the caps. Inspect it with wallet_verify_tx.", out.hash.Hex(), block, strings.Join(missing, "; "))
		res := success(r, CodeEffectMismatch+": "+r.Message)
		res.IsError = true
		return res, nil
	}
	r.Effects = found
	r.Message = fmt.Sprintf("Confirmed in block %d with %d confirmation(s); effects verified from the receipt.%s", block, info.Confirmations, out.note)
	text := confirmText(r)
	if out.note != "" {
		text += "\nBefore it:" + out.note
	}
	return success(r, text), nil
}

// broadcastRecord says how a broadcast went: accepted, refused by the node,
// or unknown (a transport failure: the node may have it).
func broadcastRecord(hash common.Hash, err error) journal.Broadcast {
	rec := journal.Broadcast{V: journal.Version, Tx: hash.Hex(), Outcome: journal.BroadcastAccepted}
	if err != nil {
		var ce *chain.Error
		if errors.As(err, &ce) && !ce.Transport() {
			rec.Outcome, rec.Error = journal.BroadcastRefused, inert(ce.Message, 200)
		} else {
			rec.Outcome, rec.Error = journal.BroadcastUnknown, inert(err.Error(), 200)
		}
	}
	return rec
}

// recordReceipt journals a mined transaction's outcome.
func (s *Server) recordReceipt(info *chain.TxInfo) {
	_ = s.record(KindReceipt, journal.Receipt{V: journal.Version, Tx: info.Hash.Hex(), Status: info.Status, Block: info.Block,
		GasUsed: info.GasUsed, Fee: info.Fee().String()})
}

// pendingResult reports a transaction whose inclusion was not seen in time.
// Its reservation stays counted.
func (s *Server) pendingResult(r confirmResult, hash common.Hash) *mcp.CallToolResult {
	r.Status = statusPendingW
	r.Message = fmt.Sprintf("The transaction was sent but not seen included within %s. It is counted against the caps until its outcome is known. Check it with wallet_verify_tx {\"tx\": \"%s\"}; do not send it again.", s.cfg.ReceiptTimeout, hash.Hex())
	return success(r, "PENDING: "+r.Message)
}

// sentLegs is what sendLegs did.
type sentLegs struct {
	hash        common.Hash // the final leg's transaction
	nonce       uint64      // its nonce
	fees        *big.Int    // fees paid by the legs before it
	reservation *caps.Reservation
	note        string              // what the earlier legs did, for messages
	early       *mcp.CallToolResult // an outcome reached before the final leg
}

// sendLegs reserves, re-checks, re-simulates, signs and broadcasts the plan's
// legs under the write lock, so nonces never collide; an earlier leg must be
// included and succeed before the next is sent. On any refusal before the
// first broadcast the reservation is released.
func (s *Server) sendLegs(ctx context.Context, p *plan) (sentLegs, *Refusal) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	reservation, err := s.ledger.Reserve(p.spend)
	if err != nil {
		return sentLegs{}, s.capsRefusal(err)
	}
	fail := func(r *Refusal) (sentLegs, *Refusal) {
		reservation.Release()
		return sentLegs{}, r
	}
	// The state and the stored plan's simulation, in one round trip.
	calls := make([]chain.Call, len(p.legs))
	for i, l := range p.legs {
		calls[i] = l.call
	}
	var views []*chain.View
	check := func() *Refusal { return nil }
	if p.recheck != nil {
		views, check = p.recheck()
	}
	st, sims, err := s.chain.StateAndSimulate(ctx, p.legs[0].call.From, calls, views...)
	if err != nil {
		return fail(rpcRefusal(err))
	}
	for _, l := range p.legs {
		if st.BaseFee.Cmp(l.call.MaxFee) > 0 {
			return fail(refuse(CodeFeesRose, "the network's base fee (%s gwei) has risen above the previewed max fee per gas (%s gwei). Nothing was signed or sent. Call the tool again without confirm for a new preview.",
				policy.FormatAmount(st.BaseFee, 9), policy.FormatAmount(l.call.MaxFee, 9)))
		}
	}
	if st.ETH.Cmp(p.maxCost()) < 0 {
		return fail(refuse(CodeInsufficientFunds, "the wallet now holds %s ETH but this needs up to %s ETH. Nothing was signed or sent.",
			policy.FormatAmount(st.ETH, 18), policy.FormatAmount(p.maxCost(), 18)))
	}
	if ref := check(); ref != nil {
		return fail(ref)
	}
	for _, r := range sims {
		if r.Revert != nil {
			return fail(s.planRevert(p, r.Revert))
		}
	}
	out := sentLegs{reservation: reservation, fees: new(big.Int)}
	base := max(st.Nonce, s.nextNonce)
	for i, l := range p.legs {
		nonce := base + uint64(i)
		if i > 0 {
			// Now that the earlier legs are in, this one can be checked on
			// the real state with its own gas limit and fees.
			if _, err := s.chain.Simulate(ctx, l.call); err != nil {
				reservation.Settle(caps.Spend{policy.NativeAsset: new(big.Int).Set(out.fees)})
				ref := s.planRevert(p, err)
				ref.Message = fmt.Sprintf("after the earlier legs were included (%s), leg %q would fail and was not sent: %s Only their fees were spent.", strings.TrimSpace(out.note), l.label, ref.Message)
				return out, ref
			}
		}
		tx, err := s.signer.SignTx(l.call.Tx(s.chainIDBig(), nonce), s.chainIDBig())
		if err != nil {
			if i == 0 {
				return fail(refuse(CodeSendFailed, "the transaction could not be signed (%s). Nothing was sent.", err))
			}
			return out, refuse(CodeSendFailed, "leg %q could not be signed (%s) after earlier legs were sent:%s", l.label, err, out.note)
		}
		raw, _ := tx.MarshalBinary()
		if err := s.record(KindSigned, journal.Signed{V: journal.Version, Tool: p.tool, Leg: l.label, Reservation: reservation.ID(),
			Tx: tx.Hash().Hex(), Nonce: nonce, From: l.call.From.Hex(), Raw: hexutil.Encode(raw)}); err != nil {
			// Not journaled, so not sent: nothing must leave unrecorded.
			if i == 0 {
				return fail(s.ledgerUnavailable(err))
			}
			reservation.Settle(caps.Spend{policy.NativeAsset: new(big.Int).Set(out.fees)})
			ref := s.ledgerUnavailable(err)
			ref.Message = fmt.Sprintf("after the earlier legs were included (%s), leg %q could not be journaled and was not sent: %s", strings.TrimSpace(out.note), l.label, ref.Message)
			return out, ref
		}
		s.log.Info("broadcasting", "tool", p.tool, "leg", l.label, "tx", tx.Hash().Hex(), "nonce", nonce)
		sendErr := s.chain.SendRaw(ctx, tx)
		_ = s.record(KindBroadcast, broadcastRecord(tx.Hash(), sendErr))
		if err := sendErr; err != nil {
			var ce *chain.Error
			if errors.As(err, &ce) && !ce.Transport() {
				if i == 0 {
					return fail(refuse(CodeSendFailed, "the node refused the transaction (%s). Nothing was sent; the caps are as before. Call the tool again without confirm for a new preview.", inert(ce.Message, 200)))
				}
				settled := caps.Spend{policy.NativeAsset: new(big.Int).Set(out.fees)}
				reservation.Settle(settled)
				return out, refuse(CodeSendFailed, "the node refused leg %q (%s) after earlier legs were included:%s Only their fees were spent.", l.label, inert(ce.Message, 200), out.note)
			}
			s.log.Warn("broadcast outcome unknown", "tx", tx.Hash().Hex(), "err", err)
			s.settleUnknownBroadcast(ctx, tx)
		}
		out.hash, out.nonce = tx.Hash(), nonce
		s.nextNonce = nonce + 1 // accepted, or outcome unknown: either way the nonce is taken
		if i == len(p.legs)-1 {
			break
		}
		// An earlier leg must be included and succeed before the next goes.
		info, err := s.chain.WaitMined(ctx, tx.Hash(), s.cfg.Confirmations, s.cfg.ReceiptTimeout)
		r := confirmResult{TxHash: tx.Hash().Hex(), Nonce: nonce, Effects: []effectJSON{}}
		if err != nil || !info.Mined {
			out.early = s.pendingResult(r, tx.Hash())
			return out, nil
		}
		s.recordReceipt(info)
		out.fees.Add(out.fees, info.Fee())
		if info.Status != 1 {
			reservation.Settle(caps.Spend{policy.NativeAsset: new(big.Int).Set(out.fees)})
			block := info.Block
			r.Block, r.Confirmations, r.GasUsed, r.Status = &block, info.Confirmations, info.GasUsed, statusRevertedW
			r.Fee = policy.FormatAmount(out.fees, 18)
			r.Message = fmt.Sprintf("Leg %q (%s) REVERTED in block %d; the later legs were not sent. Only fees of %s ETH were spent.", l.label, tx.Hash().Hex(), block, r.Fee)
			res := success(r, CodeReverted+": "+r.Message)
			res.IsError = true
			out.early = res
			return out, nil
		}
		out.note += fmt.Sprintf(" %s %s succeeded in block %d.", l.label, tx.Hash().Hex(), info.Block)
	}
	return out, nil
}

// planRevert explains a simulation failure of a plan.
func (s *Server) planRevert(p *plan, err error) *Refusal {
	var re *chain.RevertError
	if p.explain != nil && errors.As(err, &re) {
		if r := p.explain(re); r != nil {
			return r
		}
	}
	return s.simulationRefusal(err)
}

// verifyEffects checks the receipt for each expected effect and returns what
// is missing.
func (s *Server) verifyEffects(p *plan, info *chain.TxInfo) []string {
	var missing []string
	for _, e := range p.effects {
		if e.asset.Native {
			if info.To == nil || *info.To != e.to || info.Value.Cmp(e.amount) != 0 || info.From != e.from {
				missing = append(missing, fmt.Sprintf("expected %s ETH from %s to %s", policy.FormatAmount(e.amount, 18), e.from.Hex(), e.to.Hex()))
			}
			continue
		}
		found := false
		for _, t := range info.Transfers {
			if t.Token == e.asset.Address && t.From == e.from && t.To == e.to && t.Amount.Cmp(e.amount) == 0 {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, fmt.Sprintf("no Transfer of exactly %s %s from %s to %s in the receipt's logs",
				policy.FormatAmount(e.amount, e.asset.Decimals), e.asset.Symbol, e.from.Hex(), e.to.Hex()))
		}
	}
	return missing
}

func (s *Server) transferEffect(ctx context.Context, t chain.Transfer) effectJSON {
	j := s.transferJSON(ctx, t)
	return effectJSON{Kind: "erc20_transfer", Asset: j.Token, Symbol: j.Symbol, From: j.From, To: j.To, Amount: j.Amount, Raw: j.Raw}
}

func confirmText(r confirmResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CONFIRMED: transaction %s included in block %d (%d confirmation(s)), nonce %d.\n", r.TxHash, *r.Block, r.Confirmations, r.Nonce)
	for _, e := range r.Effects {
		fmt.Fprintf(&b, "Verified on chain: %s %s (%s) from %s to %s.\n", e.Amount, e.Symbol, e.Asset, e.From, e.To)
	}
	fmt.Fprintf(&b, "Gas used: %d. Fee paid: %s ETH.", r.GasUsed, r.Fee)
	return b.String()
}

// previewCommon are the facts every write preview shows: the network, how
// the caps would stand after it, the simulation's outcome and any warnings.
type previewCommon struct {
	Network       string     `json:"network"`
	ChainID       uint64     `json:"chain_id"`
	NetworkKind   string     `json:"network_kind"`
	NetworkMarker string     `json:"network_marker"`
	Caps          []capAfter `json:"caps_after"`
	NoCap         []string   `json:"no_cap"`
	Simulation    string     `json:"simulation"`
	Warnings      []string   `json:"warnings"`
}

func (s *Server) newPreviewCommon(spend caps.Spend, simulation string) previewCommon {
	after, noCap := s.capsAfter(spend)
	if after == nil {
		after = []capAfter{}
	}
	if noCap == nil {
		noCap = []string{}
	}
	return previewCommon{Network: s.network.Name, ChainID: s.chainID, NetworkKind: string(s.network.Kind), NetworkMarker: s.network.Marker(),
		Caps: after, NoCap: noCap, Simulation: simulation, Warnings: []string{}}
}

// networkLine opens a preview text: the network, with its marker prominent.
func (c previewCommon) networkLine(b *strings.Builder) {
	fmt.Fprintf(b, "Network:   %s, chain id %d — %s\n", c.Network, c.ChainID, strings.ToUpper(c.NetworkMarker[:1])+c.NetworkMarker[1:])
}

// previewTail ends every preview text the same way: the caps as they would
// stand, the simulation, warnings, the expiry and how to confirm.
func (s *Server) previewTail(b *strings.Builder, c previewCommon, expiresAt, tool string, conf confirmation) {
	b.WriteString("Caps after this (ETH counts value plus max fees):\n")
	for _, c := range c.Caps {
		fmt.Fprintf(b, "  %s %s: %s of %s used, %s left\n", c.Symbol, c.Window, c.UsedAfter, c.Limit, c.RemainingAfter)
	}
	for _, n := range c.NoCap {
		fmt.Fprintf(b, "  %s: NO CAP APPLIES (the operator allowed uncapped tokens)\n", n)
	}
	fmt.Fprintf(b, "Simulation: %s.\n", c.Simulation)
	for _, w := range c.Warnings {
		fmt.Fprintf(b, "WARNING:   %s\n", w)
	}
	fmt.Fprintf(b, "Expires:   %s (in %s)\n", expiresAt, expiresIn(conf.Expires.Sub(s.now())))
	confirmLine(b, tool, conf)
}

// display is what the person sees of a preview besides its text (human
// mode): the title, the network with its marker, and the warnings.
func (s *Server) display(title string, c previewCommon) approval.Display {
	warnings := append([]string{}, c.Warnings...)
	for _, n := range c.NoCap {
		warnings = append(warnings, "NO CAP APPLIES to "+n+" (the operator allowed uncapped tokens)")
	}
	return approval.Display{Title: title, Network: fmt.Sprintf("%s, chain id %d", c.Network, c.ChainID), Marker: c.NetworkMarker,
		Mainnet: s.network.ValueBearing(), Warnings: warnings}
}

// shownAsset names an asset for the person: an unknown token carries its
// address and UNVERIFIED right where its amount is.
func shownAsset(a asset) string {
	if a.Native || a.Known {
		return a.Symbol
	}
	return a.Symbol + " (UNVERIFIED token " + a.Address.Hex() + ")"
}

// expiresIn renders a TTL for people.
func expiresIn(d time.Duration) string {
	return d.Round(time.Second).String()
}
