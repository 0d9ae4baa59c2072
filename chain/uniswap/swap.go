package uniswap

// Swaps: exact-input, single-pool, through Uniswap v3's QuoterV2 and
// SwapRouter02. Rules of this file: the plan quotes, fixes amountOutMinimum
// and a deadline, and lists every leg: an exact approval when the router's
// allowance is short (reset to zero first when it is not zero, as USDT
// requires), then the swap. The confirm executes exactly those legs; a price
// that moved below the minimum fails the re-simulation (PRICE_MOVED) before
// anything is signed; an allowance that changed since the preview refuses it
// (ALLOWANCE_CHANGED); an approval left standing when the swap cannot be sent
// is taken back to what it was.

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// Refusal codes of swaps.
const (
	CodeSwapsUnavailable = "SWAPS_UNAVAILABLE"
	CodeNoQuote          = "NO_QUOTE"
	CodePriceMoved       = "PRICE_MOVED"
	CodeDeadlinePassed   = "DEADLINE_PASSED"
	CodeAllowanceChanged = "ALLOWANCE_CHANGED"
)

// Swap is a swap's validated, resolved intent: From pays AmountIn of In for
// Out in the Fee tier's pool, accepting Bps basis points below the quote.
type Swap struct {
	From     common.Address
	In, Out  engine.Asset
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
	Engine     *engine.Engine
	Deployment *policy.Uniswap // nil: no Uniswap known on this network
	WETH       common.Address  // zero: no WETH known on this network
	Network    string          // the network's name, for refusals
	// Off, when set, says why swaps are off and how to turn them on.
	Off string
	// Deadline is how long after the preview a swap may still be included
	// (the confirmation's lifetime plus a margin).
	Deadline time.Duration
	Now      func() time.Time
}

// Swapper quotes and plans swaps on one network. It is safe for concurrent
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

// RouterIn is the token the router takes for in: WETH for ETH (paid as
// msg.value).
func (s *Swapper) RouterIn(in engine.Asset) common.Address {
	if in.Native {
		return s.c.WETH
	}
	return in.Address
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

func (s *Swapper) codesOK(views []*chain.View) *engine.Refusal {
	for _, v := range views {
		if v.Err != nil {
			return engine.RPCRefusal(v.Err)
		}
		if ref := s.sawCode(v.To, v.Return); ref != nil {
			return ref
		}
	}
	return nil
}

// sawCode refuses when the Uniswap contract a has no code: the table names
// an address, the node must agree it is a contract.
func (s *Swapper) sawCode(a common.Address, code []byte) *engine.Refusal {
	if len(code) == 0 {
		return engine.Refuse(CodeSwapsUnavailable, "the Uniswap contract %s that walletgate expects on %s has no code on this node, so swaps are unavailable. Nothing was signed or sent.", a.Hex(), s.c.Network)
	}
	s.mu.Lock()
	s.code[a] = true
	s.mu.Unlock()
	return nil
}

// requireCode refuses when one of the Uniswap contracts has no code.
func (s *Swapper) requireCode(ctx context.Context, addrs ...common.Address) *engine.Refusal {
	for _, a := range addrs {
		s.mu.Lock()
		ok := s.code[a]
		s.mu.Unlock()
		if ok {
			continue
		}
		code, err := s.c.Chain.Code(ctx, a)
		if err != nil {
			return engine.RPCRefusal(err)
		}
		if ref := s.sawCode(a, code); ref != nil {
			return ref
		}
	}
	return nil
}

// Quote asks the quoter what sw would return now.
func (s *Swapper) Quote(ctx context.Context, sw Swap) (*Quote, *engine.Refusal) {
	u := s.c.Deployment
	if ref := s.requireCode(ctx, u.QuoterV2, u.SwapRouter02); ref != nil {
		return nil, ref
	}
	q, err := ReadQuote(ctx, s.c.Chain, u.QuoterV2, u.Factory, s.RouterIn(sw.In), sw.Out.Address, sw.AmountIn, sw.Fee)
	return checkQuote(sw, q, err)
}

// checkQuote turns a failed or empty quote into a refusal.
func checkQuote(sw Swap, q *Quote, err error) (*Quote, *engine.Refusal) {
	if err != nil {
		var re *chain.RevertError
		if errors.As(err, &re) {
			return nil, engine.Refuse(CodeNoQuote, "no quote for %s → %s at fee tier %d: there is no such pool, or it lacks liquidity for %s %s (%s). Try another fee tier or a smaller amount.",
				sw.In.Symbol, sw.Out.Symbol, sw.Fee, policy.FormatAmount(sw.AmountIn, sw.In.Decimals), sw.In.Symbol, err)
		}
		return nil, engine.RPCRefusal(err)
	}
	if q.AmountOut.Sign() == 0 {
		return nil, engine.Refuse(CodeNoQuote, "the pool would give nothing for %s %s. Try a larger amount or another fee tier.", policy.FormatAmount(sw.AmountIn, sw.In.Decimals), sw.In.Symbol)
	}
	return q, nil
}

// Built is a swap's plan and the facts its preview shows.
type Built struct {
	Plan      *engine.Plan
	Quote     *Quote
	MinOut    *big.Int
	Deadline  uint64   // unix seconds
	Allowance *big.Int // the router's allowance of the input before the legs (0 for ETH)
	SimOut    *big.Int // what the simulated swap returns
	Block     uint64   // the block the legs were simulated against
}

// Build checks the operator's rules, quotes sw and builds its plan on the
// engine: the legs, their
// simulation and caps check, the expected effects, the minimum output, and
// the hooks the confirm runs (the allowance re-check, the undo of an
// approval, the receipt check).
func (s *Swapper) Build(ctx context.Context, sw Swap) (*Built, *engine.Refusal) {
	// Policy first: a swap gives value to no one but the router, which is
	// walletgate's own table's, and brings its output back to the wallet.
	if ref := s.c.Engine.Allowed(nil); ref != nil {
		return nil, ref
	}
	u := s.c.Deployment
	router := u.SwapRouter02
	tokenIn := s.RouterIn(sw.In)
	// One round trip: the wallet's state, the quote, the router's allowance
	// and, once per process, whether the Uniswap contracts have code.
	codes := s.codeViews(u.QuoterV2, u.SwapRouter02)
	quoteView := QuoteView(u.QuoterV2, tokenIn, sw.Out.Address, sw.AmountIn, sw.Fee)
	slot0View := Slot0View(PoolAddress(u.Factory, tokenIn, sw.Out.Address, sw.Fee))
	views := append([]*chain.View{quoteView, slot0View}, codes...)
	var allowanceView *chain.View
	if !sw.In.Native {
		allowanceView = chain.AllowanceView(sw.In.Address, sw.From, router)
		views = append(views, allowanceView)
	}
	st, err := s.c.Chain.StateAndViews(ctx, sw.From, views...)
	if err != nil {
		return nil, engine.RPCRefusal(err)
	}
	if ref := s.codesOK(codes); ref != nil {
		return nil, ref
	}
	var q *Quote
	if quoteView.Err != nil {
		err = quoteView.Err
	} else {
		q, err = DecodeQuote(quoteView.Return, quoteView.Data, st.Head)
	}
	q, ref := checkQuote(sw, q, err)
	if ref != nil {
		return nil, ref
	}
	if slot0View.Err == nil {
		q.SqrtPriceX96, _ = DecodeSqrtPrice(slot0View.Return)
	}
	minOut := MinOut(q.AmountOut, sw.Bps)
	deadline := uint64(s.c.Now().Add(s.c.Deadline).Unix())
	if head := q.Block.Time + uint64(s.c.Deadline.Seconds()); head > deadline {
		deadline = head
	}
	swapCall := chain.Call{From: sw.From, To: router, Data: SwapData(tokenIn, sw.Out.Address, sw.Fee, sw.From, sw.AmountIn, minOut, deadline)}
	var legs []engine.Leg
	allowance := new(big.Int)
	if sw.In.Native {
		swapCall.Value = new(big.Int).Set(sw.AmountIn)
	} else {
		if allowanceView.Err != nil {
			return nil, engine.RPCRefusal(allowanceView.Err)
		}
		if allowance, err = chain.DecodeUint256(allowanceView.Return); err != nil {
			return nil, engine.RPCRefusal(fmt.Errorf("allowance of %s: %w", sw.In.Address.Hex(), err))
		}
		if allowance.Cmp(sw.AmountIn) < 0 {
			if allowance.Sign() > 0 {
				legs = append(legs, engine.Leg{Label: "reset approval", Call: chain.Call{From: sw.From, To: sw.In.Address, Data: chain.ApproveData(router, new(big.Int))}})
			}
			total := new(big.Int).Add(allowance, sw.AmountIn)
			legs = append(legs, engine.Leg{Label: "approve", Call: chain.Call{From: sw.From, To: sw.In.Address, Data: chain.ApproveData(router, total)}})
		}
	}
	legs = append(legs, engine.Leg{Label: "swap", Call: swapCall})

	p := &engine.Plan{Legs: legs, Explain: Explain}
	spendOf := func(legs []engine.Leg) caps.Spend {
		sp := caps.Spend{policy.NativeAsset: new(big.Int)}
		for _, l := range legs {
			sp[policy.NativeAsset].Add(sp[policy.NativeAsset], l.Call.MaxCost())
		}
		if !sw.In.Native {
			sp[sw.In.Address] = new(big.Int).Set(sw.AmountIn)
		}
		return sp
	}
	ret, ref := s.c.Engine.BuildLegs(ctx, p, st, spendOf)
	if ref != nil {
		return nil, ref
	}
	p.Spend = spendOf(p.Legs)
	p.Effects = []engine.Effect{{Asset: sw.In, From: sw.From, To: router, Amount: sw.AmountIn}}
	before := new(big.Int).Set(allowance)
	if !sw.In.Native {
		p.Undo = undo(sw, router, before)
		p.Recheck = recheckAllowance(sw, router, before)
	}
	p.Verify = s.verifier(sw, minOut)
	p.MinIn = caps.Spend{sw.Out.Address: new(big.Int).Set(minOut)}
	return &Built{Plan: p, Quote: q, MinOut: minOut, Deadline: deadline, Allowance: allowance, SimOut: swapOutput(ret), Block: st.Head.Number}, nil
}

// recheckAllowance is the confirm's check that the router's allowance is
// still what the previewed approvals were built on.
func recheckAllowance(sw Swap, router common.Address, before *big.Int) func() ([]*chain.View, func() *engine.Refusal) {
	return func() ([]*chain.View, func() *engine.Refusal) {
		v := chain.AllowanceView(sw.In.Address, sw.From, router)
		return []*chain.View{v}, func() *engine.Refusal {
			if v.Err != nil {
				return engine.RPCRefusal(v.Err)
			}
			now, err := chain.DecodeUint256(v.Return)
			if err != nil {
				return engine.RPCRefusal(fmt.Errorf("allowance of %s: %w", sw.In.Address.Hex(), err))
			}
			if now.Cmp(before) == 0 {
				return nil
			}
			return engine.Refuse(CodeAllowanceChanged, "the router's allowance for %s changed since the preview (was %s, now %s base units), so the previewed approvals no longer fit. Nothing was signed or sent. Call wallet_swap again without confirm for a new preview.",
				sw.In.Symbol, before, now)
		}
	}
}

// undo takes back what an included approval left standing when the swap
// itself cannot be sent: the router's allowance goes back to what it was
// (through zero, as USDT-like tokens require).
func undo(sw Swap, router common.Address, before *big.Int) func(int) []engine.Leg {
	return func(i int) []engine.Leg {
		if i == 0 {
			return nil
		}
		call := func(amount *big.Int) chain.Call {
			return chain.Call{From: sw.From, To: sw.In.Address, Data: chain.ApproveData(router, amount)}
		}
		legs := []engine.Leg{{Label: "approval back to 0 " + sw.In.Symbol, Call: call(new(big.Int))}}
		if before.Sign() > 0 {
			legs = append(legs, engine.Leg{Label: "approval back to " + policy.FormatAmount(before, sw.In.Decimals) + " " + sw.In.Symbol, Call: call(before)})
		}
		return legs
	}
}

// swapOutput decodes multicall's bytes[] result whose one element is
// exactInputSingle's amountOut.
func swapOutput(ret []byte) *big.Int {
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

// Explain turns Uniswap's terse revert reasons into plain words; nil for a
// revert it does not know.
func Explain(re *chain.RevertError) *engine.Refusal {
	switch {
	case strings.Contains(re.Reason, "Too little received"):
		return engine.Refuse(CodePriceMoved, "the price moved: the swap would now return less than the previewed minimum, so it was not sent. Nothing was signed or spent, and the caps are as before. Call wallet_swap again without confirm for a fresh quote.").Because("the price moved: the swap would now return less than the previewed minimum")
	case strings.Contains(re.Reason, "Transaction too old"):
		return engine.Refuse(CodeDeadlinePassed, "the swap's deadline has passed. Nothing was signed or sent. Call wallet_swap again without confirm for a fresh preview.").Because("the swap's deadline has passed")
	case strings.Contains(re.Reason, "STF"):
		return engine.Refuse(engine.CodeSimulationReverted, "the router could not take the input tokens (STF: the wallet's balance or its allowance to the router is short). Nothing was signed or sent. Check the balance with wallet_balance.").Because("the router could not take the input tokens (STF)")
	}
	return nil
}

// verifier checks a swap's receipt: the input left the wallet and at least
// the minimum of the output arrived, in the logs and in the balance.
func (s *Swapper) verifier(sw Swap, minOut *big.Int) func(context.Context, *chain.TxInfo, caps.Spend) ([]engine.Moved, []string) {
	tokenIn := s.RouterIn(sw.In)
	router := s.c.Deployment.SwapRouter02
	c := s.c.Chain
	return func(ctx context.Context, info *chain.TxInfo, measuredIn caps.Spend) ([]engine.Moved, []string) {
		var found []engine.Moved
		var missing []string
		var paid, got *chain.Transfer
		for i := range info.Transfers {
			t := &info.Transfers[i]
			if t.Token == tokenIn && t.Amount.Cmp(sw.AmountIn) == 0 && (t.From == sw.From || (sw.In.Native && t.From == router)) {
				paid = t
			}
			if t.Token == sw.Out.Address && t.To == sw.From && t.Amount.Cmp(minOut) >= 0 {
				got = t
			}
		}
		if paid == nil {
			missing = append(missing, fmt.Sprintf("no Transfer of exactly %s %s paid in", policy.FormatAmount(sw.AmountIn, sw.In.Decimals), sw.In.Marked()))
		} else {
			found = append(found, engine.Moved{Kind: engine.MovedSwapIn, Asset: sw.In.ID(), Symbol: sw.In.Symbol, From: sw.From.Hex(), To: paid.To.Hex(),
				Amount: policy.FormatAmount(sw.AmountIn, sw.In.Decimals), Raw: sw.AmountIn.String(), Known: sw.In.Native || sw.In.Known})
		}
		if got == nil {
			missing = append(missing, fmt.Sprintf("no Transfer of at least %s %s to the wallet", policy.FormatAmount(minOut, sw.Out.Decimals), sw.Out.Marked()))
		} else {
			// The balance must agree with the log: as the engine measured
			// it, or read here when it could not.
			delta, ok := measuredIn[sw.Out.Address]
			if !ok {
				if bals, err := c.TokenBalancesAt(ctx, sw.Out.Address, sw.From, info.Block-1, info.Block); err == nil {
					delta, ok = new(big.Int).Sub(bals[1], bals[0]), true
				}
			}
			if !ok {
				missing = append(missing, "the output balance could not be read to confirm the log")
			} else if delta.Cmp(got.Amount) < 0 {
				missing = append(missing, fmt.Sprintf("the %s balance grew by %s, less than the logged %s", sw.Out.Marked(), policy.FormatAmount(delta, sw.Out.Decimals), policy.FormatAmount(got.Amount, sw.Out.Decimals)))
			}
			found = append(found, engine.Moved{Kind: engine.MovedSwapOut, Asset: sw.Out.Address.Hex(), Symbol: sw.Out.Symbol, From: got.From.Hex(), To: sw.From.Hex(),
				Amount: policy.FormatAmount(got.Amount, sw.Out.Decimals), Raw: got.Amount.String(), Known: sw.Out.Known})
		}
		return found, missing
	}
}
