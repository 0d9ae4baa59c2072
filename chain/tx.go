package chain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// Call is a transaction as walletgate means to send it, before a nonce and a
// signature are attached. It is what is simulated, estimated and signed.
type Call struct {
	From   common.Address
	To     common.Address
	Value  *big.Int // nil: 0
	Data   []byte
	Gas    uint64   // 0: not set (estimation)
	MaxFee *big.Int // max fee per gas; nil: not set
	Tip    *big.Int // max priority fee per gas; nil: not set
	// L1Fee is the most the chain charges besides gas (an OP-stack chain's
	// L1 data fee upper bound, from its GasPriceOracle); nil: none.
	L1Fee *big.Int
}

func (c Call) toArg() map[string]any {
	arg := map[string]any{"from": c.From, "to": c.To}
	if c.Value != nil && c.Value.Sign() > 0 {
		arg["value"] = (*hexutil.Big)(c.Value)
	}
	if len(c.Data) > 0 {
		arg["input"] = hexutil.Bytes(c.Data)
	}
	if c.Gas > 0 {
		arg["gas"] = hexutil.Uint64(c.Gas)
	}
	if c.MaxFee != nil {
		arg["maxFeePerGas"] = (*hexutil.Big)(c.MaxFee)
	}
	if c.Tip != nil {
		arg["maxPriorityFeePerGas"] = (*hexutil.Big)(c.Tip)
	}
	return arg
}

// Tx builds the EIP-1559 transaction for c at nonce.
func (c Call) Tx(chainID *big.Int, nonce uint64) *types.Transaction {
	value := c.Value
	if value == nil {
		value = new(big.Int)
	}
	to := c.To
	return types.NewTx(&types.DynamicFeeTx{
		ChainID:   chainID,
		Nonce:     nonce,
		GasTipCap: c.Tip,
		GasFeeCap: c.MaxFee,
		Gas:       c.Gas,
		To:        &to,
		Value:     value,
		Data:      c.Data,
	})
}

// MaxCost is the most the transaction can cost in ETH: value + MaxFees.
func (c Call) MaxCost() *big.Int {
	cost := c.MaxFees()
	if c.Value != nil {
		cost.Add(cost, c.Value)
	}
	return cost
}

// MaxFees is the most the transaction can pay in network fees, in ETH: gas
// × max fee, plus its L1 data fee bound on an OP-stack chain (L1Fee). A
// leg's fee shown to a person is this, so that the legs add up to the
// plan's.
func (c Call) MaxFees() *big.Int {
	fees := new(big.Int).Mul(new(big.Int).SetUint64(c.Gas), c.MaxFee)
	if c.L1Fee != nil {
		fees.Add(fees, c.L1Fee)
	}
	return fees
}

// SendState is what a write needs to know about the sender, read in one
// batched round trip.
type SendState struct {
	Head    Head
	BaseFee *big.Int // of the latest block
	Tip     *big.Int // the node's suggested priority fee
	Nonce   uint64   // the next nonce: pending, or latest if a lagging pool reports less
	Mined   uint64   // the nonce at the latest block: transactions included so far
	ETH     *big.Int // latest balance
	// L1FeeBound is, on an OP-stack chain, the GasPriceOracle's upper bound
	// of the call's L1 data fee, read in the same round trip (Prepare); nil
	// elsewhere.
	L1FeeBound *big.Int
}

// MaxFee is the max fee per gas walletgate offers: twice the base fee plus
// the tip, which stays valid through six full blocks of base-fee rises.
func (s SendState) MaxFee() *big.Int {
	f := new(big.Int).Mul(s.BaseFee, big.NewInt(2))
	return f.Add(f, s.Tip)
}

// ChainChangedError is a node that now reports another chain id than the
// one walletgate started on. No write may proceed against it.
type ChainChangedError struct {
	Want, Got *big.Int
	Host      string
}

func (e *ChainChangedError) Error() string {
	return fmt.Sprintf("the node at %s now reports chain id %s, not %s", e.Host, e.Got, e.Want)
}

// Prepare reads the send state (see sendStateElems) and, in the same round
// trip, the node's gas estimate for call, the code at codeOf (whether a
// recipient is a contract) and call's simulation with eth_call (its return
// data; the gas and fees are the node's, so the caller checks the sender can
// pay them against the state read with it) and, on an OP-stack chain, the
// GasPriceOracle's L1 fee bound (SendState.L1FeeBound), and any extra views
// (their failures are left in their Err). A revert of the estimate or the
// simulation is *RevertError.
func (c *Client) Prepare(ctx context.Context, call Call, codeOf common.Address, extra ...*View) (SendState, uint64, []byte, []byte, error) {
	est := EstimateView(call)
	code := CodeView(codeOf)
	sim := call
	sim.Gas, sim.MaxFee, sim.Tip = 0, nil, nil
	var ret hexutil.Bytes
	el := rpc.BatchElem{Method: "eth_call", Args: []any{sim.toArg(), "latest"}, Result: &ret}
	l1 := c.L1FeeBounds([]Call{call})
	views := append(append([]*View{est, code}, l1...), extra...)
	st, err := c.stateBatch(ctx, call.From, &el, views)
	if err != nil {
		return SendState{}, 0, nil, nil, err
	}
	bounds, err := ReadL1FeeBounds(l1)
	if err != nil {
		return st, 0, nil, nil, err
	}
	if bounds != nil {
		st.L1FeeBound = bounds[0]
	}
	if est.Err != nil {
		return st, 0, nil, nil, est.Err
	}
	if code.Err != nil {
		return st, 0, nil, nil, code.Err
	}
	if el.Error != nil {
		return st, 0, nil, nil, asRevert(el.Error)
	}
	return st, est.Gas, code.Return, ret, nil
}

// View is a read made in the same round trip as a state read: by default a
// read-only eth_call of Data on To; with Code set, To's code (eth_getCode);
// with Estimate set, the node's gas estimate of that call (eth_estimateGas,
// into Gas). After the batch, Return (or Gas) holds its answer or Err its
// failure (a revert is *RevertError).
type View struct {
	To       common.Address
	Data     []byte
	Code     bool
	Estimate *Call
	Sim      *Call // simulate this call with its gas and fees (Simulate's eth_call)
	Return   []byte
	Gas      uint64
	Err      error

	out hexutil.Bytes
	gas hexutil.Uint64
}

// CodeView reads the code at a.
func CodeView(a common.Address) *View { return &View{To: a, Code: true} }

// SimView simulates call as Simulate does, with its gas limit and fees.
func SimView(call Call) *View { return &View{To: call.To, Sim: &call} }

// EstimateView asks the node's gas estimate of call (its gas and fees are
// left to the node).
func EstimateView(call Call) *View {
	call.Gas, call.MaxFee, call.Tip = 0, nil, nil
	return &View{To: call.To, Estimate: &call}
}

func (v *View) elem() rpc.BatchElem { return v.elemAt("latest") }

// elemAt is the view's batch element, read at block.
func (v *View) elemAt(block string) rpc.BatchElem {
	switch {
	case v.Sim != nil:
		return rpc.BatchElem{Method: "eth_call", Args: []any{v.Sim.toArg(), block}, Result: &v.out}
	case v.Estimate != nil:
		return rpc.BatchElem{Method: "eth_estimateGas", Args: []any{v.Estimate.toArg()}, Result: &v.gas}
	case v.Code:
		return rpc.BatchElem{Method: "eth_getCode", Args: []any{v.To, block}, Result: &v.out}
	}
	return rpc.BatchElem{Method: "eth_call", Args: []any{map[string]any{"to": v.To, "input": hexutil.Bytes(v.Data)}, block}, Result: &v.out}
}

// ViewsAt reads views at block, in one round trip; each view's own failure
// (a revert is *RevertError) is left in its Err.
func (c *Client) ViewsAt(ctx context.Context, block uint64, views ...*View) error {
	at := hexutil.EncodeUint64(block)
	elems := make([]rpc.BatchElem, len(views))
	for i, v := range views {
		elems[i] = v.elemAt(at)
	}
	if err := c.batch(ctx, elems); err != nil {
		return err
	}
	for i, v := range views {
		v.done(elems[i])
	}
	return nil
}

func (v *View) done(e rpc.BatchElem) {
	v.Return, v.Gas, v.Err = v.out, uint64(v.gas), nil
	if e.Error != nil {
		v.Return, v.Gas, v.Err = nil, 0, asRevert(e.Error)
	}
}

// StateAndViews reads the send state and the given views, in one round trip.
func (c *Client) StateAndViews(ctx context.Context, from common.Address, views ...*View) (SendState, error) {
	st, _, err := c.StateAndSimulate(ctx, from, nil, views...)
	return st, err
}

// StateAndSimulate reads the send state and, in the same round trip, a
// simulation of calls on the latest state — one call with eth_call (its gas
// and fees included, so the node also checks the sender can pay), several in
// sequence with eth_simulateV1 — and any views.
func (c *Client) StateAndSimulate(ctx context.Context, from common.Address, calls []Call, views ...*View) (SendState, []SimResult, error) {
	var (
		ret      hexutil.Bytes
		decodeV1 func() ([]Traced, error)
		sim      *rpc.BatchElem
	)
	switch {
	case len(calls) == 1:
		sim = &rpc.BatchElem{Method: "eth_call", Args: []any{calls[0].toArg(), "latest"}, Result: &ret}
	case len(calls) > 1:
		if err := c.simulateOffered(); err != nil {
			return SendState{}, nil, err
		}
		var el rpc.BatchElem
		el, decodeV1 = tracedElem(calls, false)
		sim = &el
	}
	st, err := c.stateBatch(ctx, from, sim, views)
	if err != nil {
		return SendState{}, nil, err
	}
	switch {
	case len(calls) == 0:
		return st, nil, nil
	case len(calls) == 1:
		if err := sim.Error; err != nil {
			re := asRevert(err)
			var rev *RevertError
			if errors.As(re, &rev) {
				return st, []SimResult{{Revert: rev}}, nil
			}
			return st, nil, re
		}
		return st, []SimResult{{Return: ret}}, nil
	}
	if err := sim.Error; err != nil {
		return st, nil, c.simulateV1Error(err)
	}
	res, err := decodeV1()
	return st, simResults(res), err
}

// stateBatch reads the send state, the element extra (when not nil) and the
// views in one round trip. It decodes the state and the views and leaves
// extra's own failure in extra.Error for the caller to judge.
func (c *Client) stateBatch(ctx context.Context, from common.Address, extra *rpc.BatchElem, views []*View) (SendState, error) {
	elems, decode := c.sendStateElems(from)
	n := len(elems)
	if extra != nil {
		elems = append(elems, *extra)
	}
	v0 := len(elems)
	for _, v := range views {
		elems = append(elems, v.elem())
	}
	if err := c.batch(ctx, elems); err != nil {
		return SendState{}, err
	}
	st, err := decode()
	if err != nil {
		return SendState{}, err
	}
	for i, v := range views {
		v.done(elems[v0+i])
	}
	if extra != nil {
		extra.Error = elems[n].Error
	}
	return st, nil
}

// sendStateElems are the batch elements of a send-state read and how to
// decode them once the batch has run.
func (c *Client) sendStateElems(from common.Address) ([]rpc.BatchElem, func() (SendState, error)) {
	var (
		block        json.RawMessage
		tip          hexutil.Big
		nonce, mined hexutil.Uint64
		bal          hexutil.Big
		id           hexutil.Big
	)
	elems := []rpc.BatchElem{
		{Method: "eth_chainId", Result: &id},
		{Method: "eth_getBlockByNumber", Args: []any{"latest", false}, Result: &block},
		{Method: "eth_maxPriorityFeePerGas", Result: &tip},
		{Method: "eth_getTransactionCount", Args: []any{from, "pending"}, Result: &nonce},
		{Method: "eth_getTransactionCount", Args: []any{from, "latest"}, Result: &mined},
		{Method: "eth_getBalance", Args: []any{from, "latest"}, Result: &bal},
	}
	decode := func() (SendState, error) {
		for _, e := range elems[:6] {
			if e.Error != nil {
				return SendState{}, e.Error
			}
		}
		if got := id.ToInt(); got.Cmp(c.chainID) != 0 {
			return SendState{}, &ChainChangedError{Want: c.ChainID(), Got: new(big.Int).Set(got), Host: c.Host()}
		}
		var h struct {
			Number  hexutil.Uint64 `json:"number"`
			Time    hexutil.Uint64 `json:"timestamp"`
			Hash    common.Hash    `json:"hash"`
			BaseFee *hexutil.Big   `json:"baseFeePerGas"`
		}
		if isNull(block) {
			return SendState{}, errors.New("eth_getBlockByNumber: node returned no latest block")
		}
		if err := json.Unmarshal(block, &h); err != nil {
			return SendState{}, fmt.Errorf("eth_getBlockByNumber: %w", err)
		}
		if h.BaseFee == nil {
			return SendState{}, errors.New("the node's latest block has no base fee: walletgate sends EIP-1559 transactions only")
		}
		c.sawHead(Head{Number: uint64(h.Number), Time: uint64(h.Time), Hash: h.Hash})
		return SendState{
			Head:    Head{Number: uint64(h.Number), Time: uint64(h.Time), Hash: h.Hash},
			BaseFee: h.BaseFee.ToInt(),
			Tip:     tip.ToInt(),
			Nonce:   max(uint64(nonce), uint64(mined)),
			Mined:   uint64(mined),
			ETH:     bal.ToInt(),
		}, nil
	}
	return elems, decode
}

// RevertError is a call the EVM reverted (or refused before executing, such
// as for insufficient funds). Reason is decoded where the contract gave one.
type RevertError struct {
	Reason string // "" when the contract gave none
	Data   []byte // raw revert data
}

func (e *RevertError) Error() string {
	if e.Reason == "" {
		return "execution reverted without a reason"
	}
	return "execution reverted: " + e.Reason
}

// asRevert turns a node's answer to eth_call or eth_estimateGas into a
// *RevertError when it is one; transport failures stay as they are.
func asRevert(err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Transport() {
		return err
	}
	msg := strings.ToLower(e.Message)
	if !strings.Contains(msg, "revert") && !strings.Contains(msg, "insufficient funds") &&
		!strings.Contains(msg, "gas required exceeds") && !strings.Contains(msg, "out of gas") && e.Code != 3 {
		return err
	}
	re := &RevertError{}
	if s, ok := e.Data.(string); ok {
		re.Data, _ = hexutil.Decode(s)
	}
	re.Reason = decodeRevert(re.Data)
	if re.Reason == "" && !strings.Contains(msg, "execution reverted") {
		re.Reason = e.Message // insufficient funds, out of gas: the node's own words
	}
	return re
}

var (
	errorSelector = []byte{0x08, 0xc3, 0x79, 0xa0} // Error(string)
	panicSelector = []byte{0x4e, 0x48, 0x7b, 0x71} // Panic(uint256)
)

// decodeRevert decodes Error(string) and Panic(uint256) revert data; other
// custom errors are named by their selector.
func decodeRevert(data []byte) string {
	if len(data) < 4 {
		return ""
	}
	switch {
	case string(data[:4]) == string(errorSelector):
		if s, err := abi.UnpackRevert(data); err == nil {
			r, _ := decodeText(append(make([]byte, 0, 64), data[4:]...))
			if r == "" {
				r = s
			}
			return r
		}
	case string(data[:4]) == string(panicSelector) && len(data) >= 36:
		return fmt.Sprintf("panic code 0x%x", new(big.Int).SetBytes(data[4:36]))
	}
	return fmt.Sprintf("custom error 0x%x", data[:4])
}

// Simulate executes c with eth_call on the latest state, gas limit and fees
// included (so the node also checks the sender can pay for them), and returns
// its return data. A revert is *RevertError.
func (c *Client) Simulate(ctx context.Context, call Call) ([]byte, error) {
	var out hexutil.Bytes
	if err := c.call(ctx, &out, "eth_call", call.toArg(), "latest"); err != nil {
		return nil, asRevert(err)
	}
	return out, nil
}

// SendRaw broadcasts a signed transaction. An error from a node (a JSON-RPC
// answer) means it was refused, except "already known", which is success; a
// transport error means the outcome is unknown (see Error.Transport).
func (c *Client) SendRaw(ctx context.Context, tx *types.Transaction) error {
	raw, err := tx.MarshalBinary()
	if err != nil {
		return fmt.Errorf("encode transaction: %w", err)
	}
	var hash common.Hash
	err = c.call(ctx, &hash, "eth_sendRawTransaction", hexutil.Bytes(raw))
	var ce *Error
	if errors.As(err, &ce) && !ce.Transport() {
		// The node says it has it, in any client's words: accepted.
		if fam := ClassifySend(ce.Message); fam != nil && fam.Family == SendAlreadyKnown {
			return nil
		}
	}
	return err
}

// WaitOwn polls OwnTransaction for hash, sent by from, until accept says the
// answer is final or timeout passes; it then returns what it last saw. The
// first look comes after a short pause (a just-sent transaction is never
// already mined, and a dev chain seals it within a few milliseconds); polling
// then backs off to a tenth of the chain's block time (between 25 ms and 1 s),
// so inclusion is reported within about a tenth of a block of the receipt.
func (c *Client) WaitOwn(ctx context.Context, hash common.Hash, from common.Address, timeout time.Duration, accept func(*TxInfo) bool) *TxInfo {
	return c.WaitOwnWatching(ctx, hash, from, nil, timeout, accept)
}

// WaitOwnWatching is WaitOwn whose every look also reads from's snapshot at
// the head with its balance of each of tokens (OwnTransactionWatching).
func (c *Client) WaitOwnWatching(ctx context.Context, hash common.Hash, from common.Address, tokens []common.Address, timeout time.Duration, accept func(*TxInfo) bool) *TxInfo {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ceiling := min(max(c.BlockTime(ctx)/10, 25*time.Millisecond), time.Second)
	delay := 8 * time.Millisecond
	last := &TxInfo{Hash: hash}
	for {
		select {
		case <-ctx.Done():
			return last
		case <-time.After(delay):
		}
		delay = min(delay*2, max(ceiling, delay))
		if info, err := c.transaction(ctx, hash, &from, tokens); err == nil {
			last = info
			if accept(info) {
				return info
			}
		}
	}
}

// BlockTime estimates the chain's block interval from the heads this client
// has already read (state reads, balance reads): the time between the first
// and the latest over the blocks between them. It asks the node nothing, so
// the first confirm of a process costs what a later one does; until two
// heads apart have been seen it is 12 s (Ethereum's).
func (c *Client) BlockTime(context.Context) time.Duration {
	c.headsMu.Lock()
	defer c.headsMu.Unlock()
	first, last := c.firstHead, c.lastHead
	if last.Number <= first.Number || last.Time < first.Time {
		return 12 * time.Second
	}
	return time.Duration(last.Time-first.Time) * time.Second / time.Duration(last.Number-first.Number)
}

// sawHead notes a head read from the node, for BlockTime.
func (c *Client) sawHead(h Head) {
	c.headsMu.Lock()
	defer c.headsMu.Unlock()
	if c.firstHead.Number == 0 && c.firstHead.Time == 0 {
		c.firstHead = h
	}
	if h.Number > c.lastHead.Number {
		c.lastHead = h
	}
}
