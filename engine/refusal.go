package engine

import (
	"errors"
	"fmt"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/policy"
)

// Refusal is a write refused with a stable code and a message that says what
// was received, what is allowed and what to do. The tools package returns it
// as a tool result with isError set.
type Refusal struct {
	Code    string
	Message string
	// Cause, when set, is what stopped it alone, without what the message
	// says of the rest (nothing signed, what to do next): a plan whose
	// earlier legs landed reports a later leg's refusal by its Cause.
	Cause string
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// Because sets r's Cause and returns r.
func (r *Refusal) Because(format string, a ...any) *Refusal {
	r.Cause = fmt.Sprintf(format, a...)
	return r
}

// Reason is Cause when set, else the whole message.
func (r *Refusal) Reason() string {
	if r.Cause != "" {
		return r.Cause
	}
	return r.Message
}

// Refuse builds a Refusal.
func Refuse(code, format string, a ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Refusal codes of the write path (besides the gate's, caps' and approval's).
const (
	CodeWritesDisabled      = policy.CodeWritesDisabled
	CodeMainnetNotAllowed   = policy.CodeMainnetNotAllowed
	CodeRecipientNotAllowed = policy.CodeRecipientNotAllowed
	CodeApprovalTooLarge    = policy.CodeApprovalTooLarge
	CodeSimulationReverted  = "SIMULATION_REVERTED"
	CodeInsufficientFunds   = "INSUFFICIENT_FUNDS"
	CodeFeesRose            = "FEES_ROSE"
	CodeSendFailed          = "SEND_FAILED"
	CodeReverted            = "REVERTED"
	CodeEffectMismatch      = "EFFECT_MISMATCH"
	CodeChainChanged        = "CHAIN_CHANGED"
	CodeFeeTooHigh          = "FEE_TOO_HIGH"
	CodeRPC                 = "RPC_ERROR"
	// CodeTxOutstanding: an earlier transaction of the wallet has an unknown
	// outcome, and a new one would queue behind it unseen.
	CodeTxOutstanding = "TX_OUTSTANDING"
	// CodeNotSent: a transaction was signed but could not be journaled, so
	// it was not broadcast, and never will be.
	CodeNotSent = "NOT_SENT"
	// CodeIncomplete: a multi-leg plan stopped after earlier legs were
	// included; the message says what was signed, mined and left standing.
	CodeIncomplete = "INCOMPLETE"
	// CodeTooSlow: the confirm took longer than its bound before signing.
	CodeTooSlow = "CONFIRM_TOO_SLOW"
	// CodeNoSimulation: the node does not offer eth_simulateV1, which the
	// write needs (its calls simulated in sequence, effects traced).
	CodeNoSimulation = "NODE_CANNOT_SIMULATE"
)

// NeedsSimulateV1 are the writes refused on a node without eth_simulateV1.
const NeedsSimulateV1 = "wallet_call, wallet_approve, and a wallet_swap that must approve first"

// RPCRefusal refuses a write because the node failed or changed.
func RPCRefusal(err error) *Refusal {
	var cc *chain.ChainChangedError
	if errors.As(err, &cc) {
		return Refuse(CodeChainChanged, "%s. walletgate refuses every write until it is restarted against the right node (WALLETGATE_RPC, WALLETGATE_CHAIN_ID). Nothing was signed or sent.", cc.Error())
	}
	if errors.Is(err, chain.ErrNoSimulateV1) {
		return Refuse(CodeNoSimulation, "%s: walletgate simulates %s with it before anything is signed, so it refuses this write. Nothing was signed or sent. wallet_send, wallet_sign_typed_data and wallet_pay_x402 work on this node; for the others the operator must point WALLETGATE_RPC at a node that offers eth_simulateV1.", err, NeedsSimulateV1)
	}
	return Refuse(CodeRPC, "the node did not answer: %s. Nothing was changed; try again, or check WALLETGATE_RPC.", err).Because("the node did not answer: %s", err)
}

// GateRefusal turns a gate error into a refusal.
func GateRefusal(err error) *Refusal {
	var ge *gate.Error
	if errors.As(err, &ge) {
		return Refuse(ge.Code, "%s", ge.Message)
	}
	return Refuse(gate.CodeUnknown, "the confirmation could not be checked (%s). Nothing was signed or sent. Call the tool again without confirm for a new preview.", err)
}
