package uniswap

// Swaps: exact-input, single-pool, through Uniswap v3's QuoterV2 and
// SwapRouter02. Rules of this file: Build quotes, fixes amountOutMinimum
// and a deadline, and lists every leg as a chain call: an exact approval when
// the router's allowance is short (reset to zero first when it is not zero,
// as USDT requires), then the swap. It also says what the confirm re-checks
// (the router's allowance, which must still be what the approvals were built
// on), what takes an approval back when the swap cannot be sent, and how a
// receipt shows what came out. Failures are typed errors with stable codes;
// the caller words them.

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/policy"
)

// Codes of swap failures.
const (
	CodeSwapsUnavailable = "SWAPS_UNAVAILABLE"
	CodeNoQuote          = "NO_QUOTE"
	CodePriceMoved       = "PRICE_MOVED"
	CodeDeadlinePassed   = "DEADLINE_PASSED"
	CodeAllowanceChanged = "ALLOWANCE_CHANGED"
)

// NoCodeError: a Uniswap contract walletgate's table names has no code on
// the node, so swaps are unavailable.
type NoCodeError struct {
	Contract common.Address
	Network  string
}

func (e *NoCodeError) Error() string {
	return fmt.Sprintf("the Uniswap contract %s expected on %s has no code", e.Contract.Hex(), e.Network)
}

// Code is CodeSwapsUnavailable.
func (e *NoCodeError) Code() string { return CodeSwapsUnavailable }

// NoQuoteError: the quoter gave no quote. Reverted is the quoter's revert
// (no such pool, or too little liquidity); nil when it quoted nothing out.
type NoQuoteError struct{ Reverted error }

func (e *NoQuoteError) Error() string {
	if e.Reverted == nil {
		return "the pool would give nothing"
	}
	return "no quote: " + e.Reverted.Error()
}

// Code is CodeNoQuote.
func (e *NoQuoteError) Code() string { return CodeNoQuote }

// AllowanceChangedError: the router's allowance is no longer what the
// approvals were built on.
type AllowanceChangedError struct{ Was, Now *big.Int }

func (e *AllowanceChangedError) Error() string {
	return fmt.Sprintf("the router's allowance changed from %s to %s", e.Was, e.Now)
}

// Code is CodeAllowanceChanged.
func (e *AllowanceChangedError) Code() string { return CodeAllowanceChanged }

// What Uniswap's revert reasons mean (Revert).
var (
	// ErrTooLittleReceived: the swap would return less than the minimum,
	// the price moved (CodePriceMoved).
	ErrTooLittleReceived = errors.New("uniswap: too little received")
	// ErrTooOld: the swap's deadline passed (CodeDeadlinePassed).
	ErrTooOld = errors.New("uniswap: transaction too old")
	// ErrSTF: the router could not take the input (the wallet's balance or
	// its allowance to the router is short).
	ErrSTF = errors.New("uniswap: STF")
)

// reasons are the revert reasons Revert knows, as the contracts word them.
var reasons = []struct {
	reason string
	err    error
}{{"Too little received", ErrTooLittleReceived}, {"Transaction too old", ErrTooOld}, {"STF", ErrSTF}}

// Revert names the Uniswap revert reason re carries, or nil for one it does
// not know.
func Revert(re *chain.RevertError) error {
	for _, r := range reasons {
		if strings.Contains(re.Reason, r.reason) {
			return r.err
		}
	}
	return nil
}

// Swap is a swap's resolved intent in the pool's terms: From pays AmountIn
// of In (or of ETH when Native) for Out in the Fee tier's pool, accepting
// Bps basis points below the quote.
type Swap struct {
	From     common.Address
	Native   bool           // ETH is paid: the router wraps it (WETH in the pool, sent as value)
	In       common.Address // the token paid; zero when Native
	Out      common.Address
	AmountIn *big.Int
	Fee      uint32
	Bps      uint32
}

// MinOut is A - (A*bps)/10000 in integers: never below what the slippage
// allows, and one base unit above flooring A*(10000-bps)/10000 when that does
// not divide evenly.
func MinOut(quoted *big.Int, bps uint32) *big.Int {
	cut := new(big.Int).Mul(quoted, big.NewInt(int64(bps)))
	cut.Quo(cut, big.NewInt(10_000))
	return cut.Sub(quoted, cut)
}

// Config is what a Swapper needs.
type Config struct {
	Chain      *chain.Client
	Deployment *policy.Uniswap // nil: no Uniswap known on this network
	WETH       common.Address  // zero: no WETH known on this network
	Network    string          // the network's name
	// Off, when set, says why swaps are off and how to turn them on.
	Off string
	// Deadline is how long after the preview a swap may still be included
	// (the confirmation's lifetime plus a margin).
	Deadline time.Duration
	Now      func() time.Time
}

// Swapper quotes and builds swaps on one network. It is safe for concurrent
// use.
type Swapper struct {
	c    Config
	mu   sync.Mutex
	code map[common.Address]bool // contracts already seen to have code
}

// New builds a Swapper.
func New(c Config) *Swapper {
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Swapper{c: c, code: map[common.Address]bool{}}
}

// Deployment is the network's Uniswap deployment, or nil.
func (s *Swapper) Deployment() *policy.Uniswap { return s.c.Deployment }

// WETH is the network's WETH, or the zero address.
func (s *Swapper) WETH() common.Address { return s.c.WETH }

// Disabled says why the operator's set-up turned swaps off (and how to turn
// them on), or "".
func (s *Swapper) Disabled() string { return s.c.Off }

// Off says why swaps are not offered, or "".
func (s *Swapper) Off() string {
	if s.c.Off != "" {
		return s.c.Off
	}
	if s.c.Deployment == nil {
		return "walletgate knows no Uniswap v3 deployment on " + s.c.Network
	}
	if (s.c.WETH == common.Address{}) {
		return "walletgate knows no WETH on " + s.c.Network
	}
	return ""
}

// RouterIn is the token the router takes for an input: WETH for ETH (paid
// as value).
func (s *Swapper) RouterIn(native bool, token common.Address) common.Address {
	if native {
		return s.c.WETH
	}
	return token
}

// codeViews read the code of those of addrs not yet seen to be contracts,
// to ride in a state read; codesOK then judges them as requireCode does.
func (s *Swapper) codeViews(addrs ...common.Address) []*chain.View {
	var out []*chain.View
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range addrs {
		if !s.code[a] {
			out = append(out, chain.CodeView(a))
		}
	}
	return out
}

func (s *Swapper) codesOK(views []*chain.View) error {
	for _, v := range views {
		if v.Err != nil {
			return v.Err
		}
		if err := s.sawCode(v.To, v.Return); err != nil {
			return err
		}
	}
	return nil
}

// sawCode fails when the Uniswap contract a has no code: the table names an
// address, the node must agree it is a contract.
func (s *Swapper) sawCode(a common.Address, code []byte) error {
	if len(code) == 0 {
		return &NoCodeError{Contract: a, Network: s.c.Network}
	}
	s.mu.Lock()
	s.code[a] = true
	s.mu.Unlock()
	return nil
}

// requireCode fails when one of the Uniswap contracts has no code.
func (s *Swapper) requireCode(ctx context.Context, addrs ...common.Address) error {
	for _, a := range addrs {
		s.mu.Lock()
		ok := s.code[a]
		s.mu.Unlock()
		if ok {
			continue
		}
		code, err := s.c.Chain.Code(ctx, a)
		if err != nil {
			return err
		}
		if err := s.sawCode(a, code); err != nil {
			return err
		}
	}
	return nil
}

// Quote asks the quoter what sw would return now. Its errors: *NoCodeError,
// *NoQuoteError, or the node's.
func (s *Swapper) Quote(ctx context.Context, sw Swap) (*Quote, error) {
	u := s.c.Deployment
	if err := s.requireCode(ctx, u.QuoterV2, u.SwapRouter02); err != nil {
		return nil, err
	}
	q, err := ReadQuote(ctx, s.c.Chain, u.QuoterV2, u.Factory, s.RouterIn(sw.Native, sw.In), sw.Out, sw.AmountIn, sw.Fee)
	return checkQuote(q, err)
}

// checkQuote turns a reverted or empty quote into a *NoQuoteError.
func checkQuote(q *Quote, err error) (*Quote, error) {
	if err != nil {
		var re *chain.RevertError
		if errors.As(err, &re) {
			return nil, &NoQuoteError{Reverted: err}
		}
		return nil, err
	}
	if q.AmountOut.Sign() == 0 {
		return nil, &NoQuoteError{}
	}
	return q, nil
}

// Leg labels.
const (
	LegResetApproval = "reset approval"
	LegApprove       = "approve"
	LegSwap          = "swap"
)

// Leg is one transaction of a swap, in order.
type Leg struct {
	Label string // LegResetApproval, LegApprove or LegSwap
	Call  chain.Call
}

// Built is a swap as chain calls and the facts they were built on.
type Built struct {
	Swap      Swap
	Router    common.Address
	Legs      []Leg
	State     chain.SendState // the wallet's state the legs were built against
	Quote     *Quote
	MinOut    *big.Int
	Deadline  uint64   // unix seconds
	Allowance *big.Int // the router's allowance of the input before the legs (0 for ETH)
}

// Build quotes sw and lists its legs, in one round trip: the wallet's state,
// the quote, the pool's price, the router's allowance and, once per process,
// whether the Uniswap contracts have code. Its errors: *NoCodeError,
// *NoQuoteError, or the node's.
func (s *Swapper) Build(ctx context.Context, sw Swap) (*Built, error) {
	u := s.c.Deployment
	router := u.SwapRouter02
	tokenIn := s.RouterIn(sw.Native, sw.In)
	codes := s.codeViews(u.QuoterV2, u.SwapRouter02)
	quoteView := QuoteView(u.QuoterV2, tokenIn, sw.Out, sw.AmountIn, sw.Fee)
	slot0View := Slot0View(PoolAddress(u.Factory, tokenIn, sw.Out, sw.Fee))
	views := append([]*chain.View{quoteView, slot0View}, codes...)
	var allowanceView *chain.View
	if !sw.Native {
		allowanceView = chain.AllowanceView(sw.In, sw.From, router)
		views = append(views, allowanceView)
	}
	st, err := s.c.Chain.StateAndViews(ctx, sw.From, views...)
	if err != nil {
		return nil, err
	}
	if err := s.codesOK(codes); err != nil {
		return nil, err
	}
	var q *Quote
	if quoteView.Err != nil {
		err = quoteView.Err
	} else {
		q, err = DecodeQuote(quoteView.Return, quoteView.Data, st.Head)
	}
	if q, err = checkQuote(q, err); err != nil {
		return nil, err
	}
	if slot0View.Err == nil {
		q.SqrtPriceX96, _ = DecodeSqrtPrice(slot0View.Return)
	}
	minOut := MinOut(q.AmountOut, sw.Bps)
	deadline := uint64(s.c.Now().Add(s.c.Deadline).Unix())
	if head := q.Block.Time + uint64(s.c.Deadline.Seconds()); head > deadline {
		deadline = head
	}
	swapCall := chain.Call{From: sw.From, To: router, Data: SwapData(tokenIn, sw.Out, sw.Fee, sw.From, sw.AmountIn, minOut, deadline)}
	var legs []Leg
	allowance := new(big.Int)
	if sw.Native {
		swapCall.Value = new(big.Int).Set(sw.AmountIn)
	} else {
		if allowanceView.Err != nil {
			return nil, allowanceView.Err
		}
		if allowance, err = decodeAllowance(sw, allowanceView.Return); err != nil {
			return nil, err
		}
		if allowance.Cmp(sw.AmountIn) < 0 {
			if allowance.Sign() > 0 {
				legs = append(legs, Leg{Label: LegResetApproval, Call: approveCall(sw, router, new(big.Int))})
			}
			legs = append(legs, Leg{Label: LegApprove, Call: approveCall(sw, router, new(big.Int).Add(allowance, sw.AmountIn))})
		}
	}
	legs = append(legs, Leg{Label: LegSwap, Call: swapCall})
	return &Built{Swap: sw, Router: router, Legs: legs, State: st, Quote: q, MinOut: minOut, Deadline: deadline, Allowance: allowance}, nil
}

func approveCall(sw Swap, router common.Address, amount *big.Int) chain.Call {
	return chain.Call{From: sw.From, To: sw.In, Data: chain.ApproveData(router, amount)}
}

func decodeAllowance(sw Swap, ret []byte) (*big.Int, error) {
	v, err := chain.DecodeUint256(ret)
	if err != nil {
		return nil, fmt.Errorf("allowance of %s: %w", sw.In.Hex(), err)
	}
	return v, nil
}

// RecheckView is the read the confirm makes with its state read: the
// router's allowance of the input, which CheckAllowance then judges; nil
// when ETH is paid (no allowance).
func (b *Built) RecheckView() *chain.View {
	if b.Swap.Native {
		return nil
	}
	return chain.AllowanceView(b.Swap.In, b.Swap.From, b.Router)
}

// CheckAllowance fails with *AllowanceChangedError when the allowance v read
// is not the one the legs were built on, or with the node's error.
func (b *Built) CheckAllowance(v *chain.View) error {
	if v.Err != nil {
		return v.Err
	}
	now, err := decodeAllowance(b.Swap, v.Return)
	if err != nil {
		return err
	}
	if now.Cmp(b.Allowance) != 0 {
		return &AllowanceChangedError{Was: new(big.Int).Set(b.Allowance), Now: now}
	}
	return nil
}

// Approval is an approve call and the allowance it sets.
type Approval struct {
	Amount *big.Int
	Call   chain.Call
}

// Undo takes back what the legs before leg i left standing when leg i
// cannot be sent: the router's allowance goes back to what it was, through
// zero (as USDT-like tokens require). Nothing before the first leg.
func (b *Built) Undo(i int) []Approval {
	if i == 0 || b.Swap.Native {
		return nil
	}
	out := []Approval{{Amount: new(big.Int), Call: approveCall(b.Swap, b.Router, new(big.Int))}}
	if b.Allowance.Sign() > 0 {
		out = append(out, Approval{Amount: new(big.Int).Set(b.Allowance), Call: approveCall(b.Swap, b.Router, b.Allowance)})
	}
	return out
}

// Output decodes the swap leg's simulated return (multicall's bytes[] whose
// one element is exactInputSingle's amountOut); zero when it cannot.
func Output(ret []byte) *big.Int {
	vals, err := ABI().Methods["multicall"].Outputs.Unpack(ret)
	if err != nil || len(vals) != 1 {
		return new(big.Int)
	}
	results, ok := vals[0].([][]byte)
	if !ok || len(results) != 1 || len(results[0]) < 32 {
		return new(big.Int)
	}
	return new(big.Int).SetBytes(results[0][:32])
}

// Receipt is what a swap's receipt shows.
type Receipt struct {
	// Paid is the Transfer of exactly AmountIn of the input from the wallet
	// (of WETH from the router when ETH was paid); nil when there is none.
	Paid *chain.Transfer
	// Got is a Transfer of at least MinOut of the output to the wallet; nil
	// when there is none.
	Got *chain.Transfer
	// OutGrew is how much the wallet's output balance grew in that block:
	// as measured, or read when not measured; nil when Got is nil or the
	// balance could not be read.
	OutGrew *big.Int
}

// Read reads a swap's receipt. measured is the output's growth the caller
// measured, or nil when it did not (then it is read here).
func (s *Swapper) Read(ctx context.Context, b *Built, info *chain.TxInfo, measured *big.Int) Receipt {
	sw := b.Swap
	tokenIn := s.RouterIn(sw.Native, sw.In)
	var r Receipt
	for i := range info.Transfers {
		t := &info.Transfers[i]
		if t.Token == tokenIn && t.Amount.Cmp(sw.AmountIn) == 0 && (t.From == sw.From || (sw.Native && t.From == b.Router)) {
			r.Paid = t
		}
		if t.Token == sw.Out && t.To == sw.From && t.Amount.Cmp(b.MinOut) >= 0 {
			r.Got = t
		}
	}
	if r.Got == nil {
		return r
	}
	r.OutGrew = measured
	if r.OutGrew == nil {
		if bals, err := s.c.Chain.TokenBalancesAt(ctx, sw.Out, sw.From, info.Block-1, info.Block); err == nil {
			r.OutGrew = new(big.Int).Sub(bals[1], bals[0])
		}
	}
	return r
}
