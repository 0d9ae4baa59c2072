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
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/gate"
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
)

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

// plan is a previewed write: exactly what the confirm executes.
type plan struct {
	tool    string
	call    chain.Call
	spend   caps.Spend
	effects []expectedEffect
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

// writeAllowed is the policy check both calls of a write make.
func (s *Server) writeAllowed(to common.Address) *Refusal {
	if !s.writesEnabled() {
		return refuse(CodeWritesDisabled, "write tools are not available: %s. Nothing was signed or sent.", s.writesDisabledReason())
	}
	if s.network.ValueBearing() && !s.cfg.AllowMainnet {
		return refuse(CodeMainnetNotAllowed, "%s (chain id %d) is a value-bearing network (%s) and the operator has not allowed writes on it. Nothing was signed or sent. The operator can allow it with %s=true.",
			s.network.Name, s.chainID, s.network.Marker(), policy.EnvAllowMainnet)
	}
	if len(s.cfg.AllowTo) > 0 {
		for _, a := range s.cfg.AllowTo {
			if a == to {
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
// against the caps. It signs nothing.
func (s *Server) build(ctx context.Context, call chain.Call, spendOf func(chain.Call) caps.Spend) (chain.Call, chain.SendState, []byte, caps.Spend, *Refusal) {
	st, err := s.chain.ReadSendState(ctx, call.From)
	if err != nil {
		return call, st, nil, nil, rpcRefusal(err)
	}
	gas, err := s.chain.EstimateGas(ctx, call)
	if err != nil {
		return call, st, nil, nil, s.simulationRefusal(err)
	}
	if !(len(call.Data) == 0 && gas == 21000) {
		gas += gas * gasMargin / 100
	}
	call.Gas, call.MaxFee, call.Tip = gas, st.MaxFee(), st.Tip
	if st.ETH.Cmp(call.MaxCost()) < 0 {
		return call, st, nil, nil, refuse(CodeInsufficientFunds, "the wallet holds %s ETH but this needs up to %s ETH (value plus gas limit %d × max fee %s gwei). Nothing was signed or sent. Send less, or fund the wallet.",
			policy.FormatAmount(st.ETH, 18), policy.FormatAmount(call.MaxCost(), 18), call.Gas, policy.FormatAmount(call.MaxFee, 9))
	}
	ret, err := s.chain.Simulate(ctx, call)
	if err != nil {
		return call, st, nil, nil, s.simulationRefusal(err)
	}
	spend := spendOf(call)
	if err := s.ledger.Check(spend); err != nil {
		return call, st, nil, nil, s.capsRefusal(err)
	}
	return call, st, ret, spend, nil
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

// execute runs the confirm half of the pipeline for a consumed plan.
func (s *Server) execute(ctx context.Context, p *plan) (*mcp.CallToolResult, *Refusal) {
	if ref := s.writeAllowed(p.effects[0].to); ref != nil {
		return nil, ref
	}
	hash, nonce, reservation, ref := s.send(ctx, p)
	if ref != nil {
		return nil, ref
	}
	info, err := s.chain.WaitMined(ctx, hash, s.cfg.Confirmations, s.cfg.ReceiptTimeout)
	r := confirmResult{TxHash: hash.Hex(), Nonce: nonce, Effects: []effectJSON{}}
	if err != nil || !info.Mined {
		// Unknown outcome: the reservation stays counted.
		r.Status = statusPendingW
		r.Message = fmt.Sprintf("The transaction was sent but not seen included within %s. It is counted against the caps until its outcome is known. Check it with wallet_verify_tx {\"tx\": \"%s\"}; do not send it again.", s.cfg.ReceiptTimeout, hash.Hex())
		return success(r, "PENDING: "+r.Message), nil
	}
	block := info.Block
	r.Block, r.Confirmations, r.GasUsed = &block, info.Confirmations, info.GasUsed
	r.Fee = policy.FormatAmount(info.Fee(), 18)
	actual := caps.Spend{policy.NativeAsset: new(big.Int).Set(info.Fee())}
	if info.Status != 1 {
		reservation.Settle(actual)
		r.Status = statusRevertedW
		r.Message = fmt.Sprintf("The transaction %s was included in block %d but REVERTED: nothing moved except the network fee of %s ETH, which counts against the ETH caps.", hash.Hex(), block, r.Fee)
		res := success(r, CodeReverted+": "+r.Message)
		res.IsError = true
		return res, nil
	}
	missing := s.verifyEffects(p, info)
	for _, e := range p.effects {
		if e.asset.Native {
			actual[policy.NativeAsset].Add(actual[policy.NativeAsset], e.amount)
		} else {
			actual[e.asset.Address] = new(big.Int).Set(e.amount)
		}
	}
	reservation.Settle(actual)
	if len(missing) > 0 {
		r.Status = statusConfirmed
		for _, t := range info.Transfers {
			r.Effects = append(r.Effects, s.transferEffect(ctx, t))
		}
		r.Message = fmt.Sprintf("The transaction %s succeeded in block %d, but its effects do not match the preview: %s. The intended amount stays counted against the caps. Inspect it with wallet_verify_tx.", hash.Hex(), block, strings.Join(missing, "; "))
		res := success(r, CodeEffectMismatch+": "+r.Message)
		res.IsError = true
		return res, nil
	}
	r.Status = statusConfirmed
	for _, e := range p.effects {
		r.Effects = append(r.Effects, e.json())
	}
	r.Message = fmt.Sprintf("Confirmed in block %d with %d confirmation(s); effects verified from the receipt.", block, info.Confirmations)
	return success(r, confirmText(r)), nil
}

// send reserves, re-simulates, signs and broadcasts under the write lock, so
// nonces never collide. On any refusal the reservation is released.
func (s *Server) send(ctx context.Context, p *plan) (common.Hash, uint64, *caps.Reservation, *Refusal) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	reservation, err := s.ledger.Reserve(p.spend)
	if err != nil {
		return common.Hash{}, 0, nil, s.capsRefusal(err)
	}
	fail := func(r *Refusal) (common.Hash, uint64, *caps.Reservation, *Refusal) {
		reservation.Release()
		return common.Hash{}, 0, nil, r
	}
	st, err := s.chain.ReadSendState(ctx, p.call.From)
	if err != nil {
		return fail(rpcRefusal(err))
	}
	if st.BaseFee.Cmp(p.call.MaxFee) > 0 {
		return fail(refuse(CodeFeesRose, "the network's base fee (%s gwei) has risen above the previewed max fee per gas (%s gwei). Nothing was signed or sent. Call the tool again without confirm for a new preview.",
			policy.FormatAmount(st.BaseFee, 9), policy.FormatAmount(p.call.MaxFee, 9)))
	}
	if st.ETH.Cmp(p.call.MaxCost()) < 0 {
		return fail(refuse(CodeInsufficientFunds, "the wallet now holds %s ETH but this needs up to %s ETH. Nothing was signed or sent.",
			policy.FormatAmount(st.ETH, 18), policy.FormatAmount(p.call.MaxCost(), 18)))
	}
	if _, err := s.chain.Simulate(ctx, p.call); err != nil {
		return fail(s.simulationRefusal(err))
	}
	tx, err := s.signer.SignTx(p.call.Tx(s.chainIDBig(), st.Nonce), s.chainIDBig())
	if err != nil {
		return fail(refuse(CodeSendFailed, "the transaction could not be signed (%s). Nothing was sent.", err))
	}
	s.log.Info("broadcasting", "tool", p.tool, "tx", tx.Hash().Hex(), "nonce", st.Nonce)
	if err := s.chain.SendRaw(ctx, tx); err != nil {
		var ce *chain.Error
		if errors.As(err, &ce) && !ce.Transport() {
			return fail(refuse(CodeSendFailed, "the node refused the transaction (%s). Nothing was sent; the caps are as before. Call the tool again without confirm for a new preview.", inert(ce.Message, 200)))
		}
		// Transport failure: the node may have it. Counted until known.
		s.log.Warn("broadcast outcome unknown", "tx", tx.Hash().Hex(), "err", err)
	}
	return tx.Hash(), st.Nonce, reservation, nil
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

// expiresIn renders a TTL for people.
func expiresIn(d time.Duration) string {
	return d.Round(time.Second).String()
}
