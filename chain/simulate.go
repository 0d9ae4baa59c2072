package chain

// Whether a node offers eth_simulateV1, which the effects-bound writes
// (wallet_call, wallet_approve, a swap that approves first) need and a plain
// send does not. It is learned once per endpoint, in the identity batch read
// at start (no round trip of its own), and again from any simulation the
// node refuses as an unknown method; a write that needs it is then refused
// in words before any request.

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/rpc"
)

// ErrNoSimulateV1 is returned when the node does not offer eth_simulateV1.
var ErrNoSimulateV1 = errors.New("the node does not offer eth_simulateV1, which walletgate needs to simulate a write's calls in sequence with their effects traced")

// Simulation support as learned.
const (
	SimulateUnknown = "unknown"     // not asked yet
	SimulateOffered = "offered"     // the node answered a simulation
	SimulateMissing = "not offered" // the node said the method does not exist
)

// simulateSupport is an endpoint's answer, once learned.
type simulateSupport struct{ v atomic.Value }

func (s *simulateSupport) get() string {
	if v, ok := s.v.Load().(string); ok {
		return v
	}
	return SimulateUnknown
}

// simulateProbe is the cheapest eth_simulateV1 request: one empty block on
// the latest state.
func simulateProbe() rpc.BatchElem {
	var out []map[string]any
	return rpc.BatchElem{Method: "eth_simulateV1", Args: []any{map[string]any{"blockStateCalls": []map[string]any{{"calls": []any{}}}}, "latest"}, Result: &out}
}

// learnSimulate records the probe's answer: an unknown-method error is a
// node without eth_simulateV1; any other answer (a result, or an error
// about the request) is a node that has it.
func (ep *endpoint) learnSimulate(err error) {
	if err != nil && isNoMethod(ep.wrap("eth_simulateV1", err)) {
		ep.simulate.v.Store(SimulateMissing)
		return
	}
	ep.simulate.v.Store(SimulateOffered)
}

// isNoMethod: the node's words for a method it does not have (-32601 in
// every major client; providers' own wordings besides).
func isNoMethod(e *Error) bool {
	if e == nil || e.Transport() {
		return false
	}
	m := strings.ToLower(e.Message)
	return e.Code == -32601 || strings.Contains(m, "not found") || strings.Contains(m, "does not exist") ||
		strings.Contains(m, "not supported") || strings.Contains(m, "unsupported method") || strings.Contains(m, "not available")
}

// SimulateV1Support says whether the endpoint in use offers eth_simulateV1, as
// learned (SimulateUnknown before the first answer).
func (c *Client) SimulateV1Support() string {
	c.mu.Lock()
	ep := c.endpoints[c.current]
	c.mu.Unlock()
	return ep.simulate.get()
}

// simulateOffered refuses, without a request, a simulation the endpoint in
// use is known not to offer.
func (c *Client) simulateOffered() error {
	if c.SimulateV1Support() == SimulateMissing {
		return ErrNoSimulateV1
	}
	return nil
}

// simulateV1Error names a node without eth_simulateV1 plainly, and
// remembers it.
func (c *Client) simulateV1Error(err error) error {
	var e *Error
	if errors.As(err, &e) && isNoMethod(e) {
		c.mu.Lock()
		ep := c.endpoints[c.current]
		c.mu.Unlock()
		ep.simulate.v.Store(SimulateMissing)
		return ErrNoSimulateV1
	}
	return err
}

// SimResult is one call's outcome in a multi-call simulation.
type SimResult struct {
	GasUsed uint64 // the gas the call needs: the peak before refunds, where the node reports it
	Return  []byte
	Revert  *RevertError // nil when the call succeeded
}

// SimulateSequence executes calls one after another on top of the latest
// state (each sees the previous one's effects) with eth_simulateV1, without
// fee or nonce validation. It is how a plan with an approval followed by a
// swap is simulated before anything is signed. views are read in the same
// round trip.
func (c *Client) SimulateSequence(ctx context.Context, calls []Call, views ...*View) ([]SimResult, error) {
	if err := c.simulateOffered(); err != nil {
		return nil, err
	}
	el, decode := tracedElem(calls, false)
	elems := []rpc.BatchElem{el}
	for _, v := range views {
		elems = append(elems, v.elem())
	}
	if err := c.batch(ctx, elems); err != nil {
		return nil, err
	}
	for i, v := range views {
		v.done(elems[1+i])
	}
	if err := elems[0].Error; err != nil {
		return nil, c.simulateV1Error(err)
	}
	res, err := decode()
	return simResults(res), err
}

// simResults drops what a simulation moved, keeping each call's result.
func simResults(ts []Traced) []SimResult {
	if ts == nil {
		return nil
	}
	out := make([]SimResult, len(ts))
	for i, t := range ts {
		out[i] = t.SimResult
	}
	return out
}
