package engine

// Building a plan: fees and gas for each leg, simulation, and the caps check
// of a preview. Nothing here signs.

import (
	"context"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/policy"
)

// MaxGasPerTx bounds a transaction's gas limit: a node that answers a huge
// estimate is refused outright, before the ETH cap would catch it.
const MaxGasPerTx = 3_000_000

// gasMargin is added to the node's gas estimate (in percent), except for a
// plain ETH transfer to an account without code, which costs exactly 21000.
const gasMargin = 20

// simGasMargin is added (in percent) to the gas a leg used in a multi-leg
// simulation: measured on the dev chain, a swap's estimate is 41% above what
// its simulation reports (refunds, and no 63/64 headroom).
const simGasMargin = 60

// Built is what Build found out about one call.
type Built struct {
	Call  chain.Call
	State chain.SendState
	Ret   []byte     // the simulation's return data
	Spend caps.Spend // what the caps were checked against
	Code  []byte     // the code at codeOf
	USD   *USDValue  // Spend's USD value, when a USD window is capped
}

// Build fills in fees and gas for call, simulates it, and checks spendOf(call)
// against the caps. The state, the gas estimate, the code at codeOf and the
// simulation come in one round trip: the simulation leaves gas and fees to
// the node (it needs no estimate first), and whether the wallet can pay the
// gas limit at the max fee is checked against the balance read with it.
func (e *Engine) Build(ctx context.Context, call chain.Call, codeOf common.Address, spendOf func(chain.Call) caps.Spend, explain func(*chain.RevertError) *Refusal) (Built, *Refusal) {
	pr, prices := e.priceViews() // in the same round trip
	st, gas, code, ret, err := e.chain.Prepare(ctx, call, codeOf, prices...)
	if err != nil {
		return Built{}, e.revertRefusal(explain, err)
	}
	if !(len(call.Data) == 0 && gas == 21000) {
		gas += gas * gasMargin / 100
	}
	if gas > MaxGasPerTx {
		return Built{}, feeTooHigh(gas)
	}
	call.Gas, call.MaxFee, call.Tip = gas, st.MaxFee(), st.Tip
	call.L1Fee = st.L1FeeBound // an OP-stack chain's L1 data fee, at most
	if st.ETH.Cmp(call.MaxCost()) < 0 {
		return Built{}, Refuse(CodeInsufficientFunds, "the wallet holds %s ETH but this needs up to %s ETH (value plus gas limit %d × max fee %s gwei). Nothing was signed or sent. Send less, or fund the wallet.",
			ETH.Format(st.ETH), ETH.Format(call.MaxCost()), call.Gas, gwei(call.MaxFee))
	}
	spend, usd, ref := e.priced(spendOf(call), pr, st.Head.Time)
	if ref != nil {
		return Built{}, ref
	}
	if err := e.ledger.Check(spend); err != nil {
		return Built{}, e.capsRefusal(err, call.MaxFees()) // its L1 fee bound is fee, not value
	}
	return Built{Call: call, State: st, Ret: ret, Spend: spend, Code: code, USD: usd}, nil
}

// BuildLegs fills in fees and gas for every leg of p, simulating them in
// sequence (one leg: eth_estimateGas and eth_call; several: eth_simulateV1),
// and checks spendOf(p.Legs) against the caps. It returns the last leg's
// simulated return data.
func (e *Engine) BuildLegs(ctx context.Context, p *Plan, st chain.SendState, spendOf func([]Leg) caps.Spend) ([]byte, *Refusal) {
	if len(p.Legs) == 1 {
		// One leg needs no state carried between calls: the node's gas
		// estimate (which allows for the 63/64 rule of nested calls) and
		// eth_call with fees.
		b, ref := e.Build(ctx, p.Legs[0].Call, p.Legs[0].Call.To, func(c chain.Call) caps.Spend { return spendOf([]Leg{{Call: c}}) }, p.Explain)
		if ref != nil {
			return nil, ref
		}
		p.Legs[0].Call, p.USD = b.Call, b.USD
		return b.Ret, nil
	}
	calls := make([]chain.Call, len(p.Legs))
	for i, l := range p.Legs {
		calls[i] = l.Call
	}
	l1 := e.chain.L1FeeBounds(calls) // in the simulation's round trip
	pr, prices := e.priceViews()     // and so are the prices
	res, err := e.chain.SimulateSequence(ctx, calls, append(append([]*chain.View{}, l1...), prices...)...)
	if err != nil {
		return nil, RPCRefusal(err)
	}
	for i, r := range res {
		if r.Revert != nil {
			return nil, e.revertRefusal(p.Explain, r.Revert)
		}
		// Gas used in a simulation is not a safe gas limit: nested calls
		// need headroom (63/64 rule), which only an estimate finds, and a
		// later leg cannot be estimated before the earlier ones are mined.
		// Hence a wide margin here, and an eth_call of each later leg with
		// its gas limit just before it is signed.
		gas := r.GasUsed + r.GasUsed*simGasMargin/100
		if gas > MaxGasPerTx {
			return nil, feeTooHigh(gas)
		}
		p.Legs[i].Call.Gas, p.Legs[i].Call.MaxFee, p.Legs[i].Call.Tip = gas, st.MaxFee(), st.Tip
	}
	if ref := setL1Fees(p.Legs, l1); ref != nil {
		return nil, ref
	}
	if st.ETH.Cmp(p.MaxCost()) < 0 {
		return nil, Refuse(CodeInsufficientFunds, "the wallet holds %s ETH but these transactions need up to %s ETH (value plus fees). Nothing was signed or sent.",
			ETH.Format(st.ETH), ETH.Format(p.MaxCost()))
	}
	spend, usd, ref := e.priced(spendOf(p.Legs), pr, st.Head.Time)
	if ref != nil {
		return nil, ref
	}
	if err := e.ledger.Check(spend); err != nil {
		return nil, e.capsRefusal(err, p.Fee())
	}
	p.USD = usd
	return res[len(res)-1].Return, nil
}

// BuildTraced fills in gas and fees for the legs of an effects-bound plan,
// simulates them traced (see Trace), derives its changes and what the caps
// reserve — the ETH value and fees, every token outflow and exposure — and
// checks that against the caps. It sets p.Traced and p.Spend. The views ride
// in the simulation's round trip, and so does a single leg's gas estimate:
// the whole build is one round trip (two when the logs reveal a token or an
// approval that the calldata did not show).
func (e *Engine) BuildTraced(ctx context.Context, p *Plan, views ...*chain.View) (chain.SendState, *Refusal) {
	var est *chain.View
	if len(p.Legs) == 1 {
		// One leg: the node's estimate allows for the 63/64 rule.
		est = chain.EstimateView(p.Legs[0].Call)
		views = append(views, est)
	}
	// Each leg's L1 data fee bound, from the GasPriceOracle, in the same
	// round trip.
	l1 := e.chain.L1FeeBounds(legCalls(p.Legs))
	views = append(views, l1...)
	pr, prices := e.priceViews() // and the USD prices
	views = append(views, prices...)
	st, ch, ref := e.Trace(ctx, p.Legs, p.Explain, views...)
	if ref != nil {
		return st, ref
	}
	if ref := e.recipientsAllowed(p, &ch); ref != nil {
		return st, ref
	}
	for i := range p.Legs {
		gas := ch.Calls[i].GasUsed + ch.Calls[i].GasUsed*simGasMargin/100
		if est != nil {
			if est.Err != nil {
				return st, e.revertRefusal(p.Explain, est.Err)
			}
			gas = est.Gas
			if !(len(p.Legs[0].Call.Data) == 0 && est.Gas == 21000) {
				gas += est.Gas * gasMargin / 100
			}
		}
		if gas > MaxGasPerTx {
			return st, feeTooHigh(gas)
		}
		p.Legs[i].Call.Gas, p.Legs[i].Call.MaxFee, p.Legs[i].Call.Tip = gas, st.MaxFee(), st.Tip
	}
	if ref := setL1Fees(p.Legs, l1); ref != nil {
		return st, ref
	}
	if st.ETH.Cmp(p.MaxCost()) < 0 {
		return st, Refuse(CodeInsufficientFunds, "the wallet holds %s ETH but this needs up to %s ETH (value plus fees). Nothing was signed or sent.",
			ETH.Format(st.ETH), ETH.Format(p.MaxCost()))
	}
	spend := ch.Spend()
	spend[policy.NativeAsset] = p.MaxCost()
	spend, usd, ref := e.priced(spend, pr, st.Head.Time)
	if ref != nil {
		return st, ref
	}
	if err := e.ledger.Check(spend); err != nil {
		return st, e.capsRefusal(err, p.Fee())
	}
	if ref := e.exposureAllowed(&ch); ref != nil {
		return st, ref
	}
	p.Traced, p.Spend, p.USD = &ch, spend, usd
	return st, nil
}

// setL1Fees gives each leg the L1 data fee bound read with it
// (chain.L1FeeBounds, nil on a chain without one), so that its MaxCost, the
// preview and the caps count it.
func setL1Fees(legs []Leg, l1 []*chain.View) *Refusal {
	bounds, err := chain.ReadL1FeeBounds(l1)
	if err != nil {
		return RPCRefusal(err)
	}
	for i, b := range bounds {
		legs[i].Call.L1Fee = b
	}
	return nil
}

func feeTooHigh(gas uint64) *Refusal {
	return Refuse(CodeFeeTooHigh, "the node estimates %d gas for this transaction, more than walletgate ever allows (%d): a plain send or swap needs a small fraction of that. Nothing was signed or sent. Check the node (WALLETGATE_RPC) and the token.", gas, MaxGasPerTx)
}

// revertRefusal explains a simulation failure, in the plan's words when it
// has them.
func (e *Engine) revertRefusal(explain func(*chain.RevertError) *Refusal, err error) *Refusal {
	var re *chain.RevertError
	if !errors.As(err, &re) {
		return RPCRefusal(err)
	}
	if explain != nil {
		if r := explain(re); r != nil {
			return r
		}
	}
	reason := re.Reason
	if reason == "" {
		reason = "no reason given by the contract"
	}
	return Refuse(CodeSimulationReverted, "the transaction would fail: %s. Nothing was signed or sent. Check the balance, the amount and the recipient, then try again.", Inert(reason, 200)).
		Because("its simulation on the current state fails: %s", Inert(reason, 200))
}

func gwei(v *big.Int) string { return Asset{Decimals: 9}.Format(v) }
