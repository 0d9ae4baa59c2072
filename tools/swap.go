package tools

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/shopspring/decimal"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/uniswap"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// Swaps: exact-input, single-pool, through Uniswap v3's QuoterV2 and
// SwapRouter02. The preview quotes, fixes amountOutMinimum and a deadline,
// and lists every leg: an exact approval when the router's allowance is short
// (reset to zero first when it is not zero, as USDT requires), then the swap.
// The confirm executes exactly those legs; a price that moved below the
// minimum fails the re-simulation (PRICE_MOVED) before anything is signed.

const (
	quoteTool = "wallet_swap_quote"
	swapTool  = "wallet_swap"

	defaultFee      = 500 // the fee tier when none is given
	defaultSlippage = 50  // basis points
	maxSlippage     = 1000

	CodeSwapsUnavailable = uniswap.CodeSwapsUnavailable
	CodeBadSwap          = "BAD_SWAP"
	CodeNoQuote          = uniswap.CodeNoQuote
	CodePriceMoved       = uniswap.CodePriceMoved
	CodeDeadlinePassed   = uniswap.CodeDeadlinePassed
	CodeAllowanceChanged = uniswap.CodeAllowanceChanged
)

var feeTiers = map[uint32]bool{100: true, 500: true, 3000: true, 10000: true}

// swapIntent is a swap's validated, resolved arguments: From pays
// AmountIn of In for Out in the Fee tier's pool, accepting Bps basis points
// below the quote.
type swapIntent struct {
	From     common.Address
	In, Out  asset
	AmountIn *big.Int
	Fee      uint32
	Bps      uint32
}

// pool is the swap in the pool's terms.
func (i swapIntent) pool() uniswap.Swap {
	return uniswap.Swap{From: i.From, Native: i.In.Native, In: i.In.Address, Out: i.Out.Address, AmountIn: i.AmountIn, Fee: i.Fee, Bps: i.Bps}
}

// weth is the network's WETH, or the zero address.
func (s *Server) weth() common.Address { return s.swaps.WETH() }

func (i swapIntent) key() any {
	return struct {
		TokenIn  string `json:"token_in"`
		TokenOut string `json:"token_out"`
		AmountIn string `json:"amount_in"`
		Fee      uint32 `json:"fee"`
		Bps      uint32 `json:"slippage_bps"`
	}{assetID(i.In), assetID(i.Out), i.AmountIn.String(), i.Fee, i.Bps}
}

// quoteArgs are wallet_swap_quote's arguments.
type quoteArgs struct {
	TokenIn     *string `json:"token_in" jsonschema:"what you pay: ETH, a symbol (e.g. USDT) or a token address"`
	TokenOut    *string `json:"token_out" jsonschema:"what you receive: a symbol or a token address (not ETH: use WETH)"`
	AmountIn    *string `json:"amount_in" pattern:"amount" jsonschema:"a decimal string in token_in's units, e.g. \"100\""`
	Fee         *uint32 `json:"fee,omitempty" enum:"100|500|3000|10000" jsonschema:"the pool's fee tier in hundredths of a basis point (default 500)"`
	SlippageBps *uint32 `json:"slippage_bps,omitempty" maximum:"1000" jsonschema:"basis points the output may fall below the quote (default 50 = 0.5%)"`
	networkArg
}

// swapArgs are wallet_swap's arguments: a quote's, and confirm.
type swapArgs struct {
	TokenIn     *string `json:"token_in" jsonschema:"what you pay: ETH, a symbol (e.g. USDT) or a token address"`
	TokenOut    *string `json:"token_out" jsonschema:"what you receive: a symbol or a token address (not ETH: use WETH)"`
	AmountIn    *string `json:"amount_in" pattern:"amount" jsonschema:"a decimal string in token_in's units, e.g. \"100\"; {capped}"`
	Fee         *uint32 `json:"fee,omitempty" enum:"100|500|3000|10000" jsonschema:"the pool's fee tier in hundredths of a basis point (default 500)"`
	SlippageBps *uint32 `json:"slippage_bps,omitempty" maximum:"1000" jsonschema:"basis points the output may fall below the quote (default 50 = 0.5%)"`
	confirmArg
	networkArg
}

// quoteArgs is swapArgs without confirm: a quote reads the same arguments.
func (a quoteArgs) swap() swapArgs {
	return swapArgs{TokenIn: a.TokenIn, TokenOut: a.TokenOut, AmountIn: a.AmountIn, Fee: a.Fee, SlippageBps: a.SlippageBps}
}

// parseSwap validates and resolves a swap's (or a quote's) arguments.
func (s *Server) parseSwap(ctx context.Context, a swapArgs) (swapIntent, *Refusal) {
	if off := s.swaps.Off(); off != "" {
		return swapIntent{}, refuse(CodeSwapsUnavailable, "%s. Nothing was signed or sent.", off)
	}
	in, ref := s.resolveAsset(ctx, deref(a.TokenIn))
	if ref != nil {
		return swapIntent{}, ref
	}
	outRaw := deref(a.TokenOut)
	if strings.EqualFold(outRaw, policy.NativeSymbol) {
		return swapIntent{}, refuse(CodeBadSwap, "token_out ETH is not supported: walletgate swaps into tokens only. Use token_out WETH (%s).", s.weth().Hex())
	}
	out, ref := s.resolveAsset(ctx, outRaw)
	if ref != nil {
		return swapIntent{}, ref
	}
	if s.swaps.RouterIn(in.Native, in.Address) == out.Address {
		return swapIntent{}, refuse(CodeBadSwap, "token_in and token_out are the same token (%s). Choose two different tokens.", out.Address.Hex())
	}
	if a.AmountIn == nil {
		return swapIntent{}, refuse(CodeBadAmount, "amount_in is missing. Give a decimal string such as \"100\".")
	}
	amtRaw := *a.AmountIn
	amount, err := policy.ParsePositiveAmount(amtRaw, in.Decimals)
	if err != nil {
		return swapIntent{}, refuse(CodeBadAmount, "amount_in %s: %s. Give a decimal string greater than zero with at most %d decimals for %s.", displayInput(amtRaw), reason(err), in.Decimals, in.Symbol)
	}
	fee := uint32(defaultFee)
	if a.Fee != nil {
		if fee = *a.Fee; !feeTiers[fee] {
			return swapIntent{}, refuse(CodeBadSwap, "fee %s is not a Uniswap v3 fee tier. Use 100, 500, 3000 or 10000 (hundredths of a basis point; 500 = 0.05%%).", displayInput(fmt.Sprint(fee)))
		}
	}
	bps := uint32(defaultSlippage)
	if a.SlippageBps != nil {
		if bps = *a.SlippageBps; bps > maxSlippage {
			return swapIntent{}, refuse(CodeBadSwap, "slippage_bps %s is above the most walletgate allows (%d = 10%%). Use a smaller value, e.g. 50 for 0.5%%.", displayInput(fmt.Sprint(bps)), maxSlippage)
		}
	}
	return swapIntent{From: s.address, In: in, Out: out, AmountIn: amount, Fee: fee, Bps: bps}, nil
}

// tokenRef is an asset in a swap result.
type tokenRef struct {
	Symbol   string `json:"symbol" jsonschema:"the symbol: from walletgate's table when known, else as the contract reports it (untrusted)"`
	Address  string `json:"address" jsonschema:"the token address, or ETH"`
	Decimals uint8  `json:"decimals" jsonschema:"the token's decimals"`
	Known    bool   `json:"known" jsonschema:"the token is in walletgate's known-token table (ETH counts as known)"`
}

// marked is the token's symbol for a line of text, UNVERIFIED when unknown.
func (t tokenRef) marked() string { return marked(t.Symbol, t.Known) }

func ref(as asset) tokenRef {
	return tokenRef{Symbol: as.Symbol, Address: assetID(as), Decimals: as.Decimals, Known: as.Known}
}

// quoteResult is wallet_swap_quote's structured result.
type quoteResult struct {
	TokenIn           tokenRef `json:"token_in" jsonschema:"what is paid"`
	TokenOut          tokenRef `json:"token_out" jsonschema:"what is received"`
	AmountIn          string   `json:"amount_in" pattern:"amount" jsonschema:"amount paid, in token_in's units"`
	AmountInBase      string   `json:"amount_in_base" pattern:"base" jsonschema:"amount paid in base units"`
	AmountOut         string   `json:"amount_out" pattern:"amount" jsonschema:"quoted amount received, in token_out's units"`
	AmountOutBase     string   `json:"amount_out_base" pattern:"base" jsonschema:"quoted amount received in base units"`
	MinOut            string   `json:"min_out" pattern:"amount" jsonschema:"the least accepted at slippage_bps: amount_out - amount_out*bps/10000 (integers)"`
	MinOutBase        string   `json:"min_out_base" pattern:"base" jsonschema:"min_out in base units"`
	SlippageBps       uint32   `json:"slippage_bps" jsonschema:"the slippage used"`
	Fee               uint32   `json:"fee" jsonschema:"the pool's fee tier"`
	Rate              string   `json:"rate" jsonschema:"token_out per token_in, rounded, for display only"`
	RateInverse       string   `json:"rate_inverse" pattern:"amount" jsonschema:"token_in per token_out at this quote, rounded to 18 decimals, for display only"`
	MidRate           string   `json:"mid_rate,omitempty" pattern:"amount" jsonschema:"token_out per token_in at the pool's mid price before the swap (slot0), rounded to 18 decimals; absent when the pool's price could not be read" client:"at the pool's mid price before the swap"`
	PriceImpactPct    string   `json:"price_impact_pct,omitempty" jsonschema:"how far this quote's rate falls below the mid price, in percent (the pool's fee included), rounded to 4 decimals; absent with mid_rate" client:"percent below mid_rate, fee included"`
	SqrtPriceX96      string   `json:"sqrt_price_x96,omitempty" pattern:"base" jsonschema:"the pool's price before this swap (slot0) as Uniswap's Q64.96 sqrtPriceX96 (token1/token0 in base units); not a human rate"`
	SqrtPriceX96After string   `json:"sqrt_price_x96_after" pattern:"base" jsonschema:"the pool's price after this swap as Uniswap's Q64.96 sqrtPriceX96 (token1/token0 in base units); not a human rate"`
	TicksCrossed      uint32   `json:"ticks_crossed" jsonschema:"initialized ticks the swap crosses"`
	GasEstimate       string   `json:"gas_estimate" pattern:"base" jsonschema:"the quoter's estimate of the swap's gas"`
	Block             uint64   `json:"block" jsonschema:"the block the quote was read at"`
	At                string   `json:"at" jsonschema:"that block's time (RFC 3339, UTC)"`
	Quoter            string   `json:"quoter" pattern:"address" jsonschema:"the QuoterV2 contract asked"`
	Calldata          string   `json:"calldata" jsonschema:"the eth_call data sent to the quoter (quoteExactInputSingle, selector 0xc6a5026a)"`
}

func (s *Server) quoteTool() Tool {
	return readTool(s, quoteTool, "Swap quote",
		"Quote an exact-input swap in one Uniswap v3 pool: amount out, the minimum at a slippage, both rates and the price impact.",
		s.quoteHandler)
}

func (s *Server) quoteHandler(ctx context.Context, a quoteArgs) (*mcp.CallToolResult, *Refusal) {
	in, ref := s.parseSwap(ctx, a.swap())
	if ref != nil {
		return nil, ref
	}
	q, err := s.swaps.Quote(ctx, in.pool())
	if err != nil {
		return nil, swapRefusal(in, err)
	}
	r := s.quoteResult(in, q)
	return success(r, quoteText(r)), nil
}

func (s *Server) quoteResult(in swapIntent, q *uniswap.Quote) quoteResult {
	minOut := uniswap.MinOut(q.AmountOut, in.Bps)
	rate := decimal.NewFromBigInt(q.AmountOut, -int32(in.Out.Decimals)).
		Div(decimal.NewFromBigInt(in.AmountIn, -int32(in.In.Decimals))).Round(8)
	p := uniswap.Price(s.swaps.RouterIn(in.In.Native, in.In.Address), in.Out.Address, in.In.Decimals, in.Out.Decimals, in.AmountIn, q.AmountOut, q.SqrtPriceX96)
	return quoteResult{
		RateInverse: p.Inverse, MidRate: p.Mid, PriceImpactPct: p.ImpactPct, SqrtPriceX96: p.SqrtPrice,
		TokenIn: ref(in.In), TokenOut: ref(in.Out),
		AmountIn: policy.FormatAmount(in.AmountIn, in.In.Decimals), AmountInBase: in.AmountIn.String(),
		AmountOut: policy.FormatAmount(q.AmountOut, in.Out.Decimals), AmountOutBase: q.AmountOut.String(),
		MinOut: policy.FormatAmount(minOut, in.Out.Decimals), MinOutBase: minOut.String(),
		SlippageBps: in.Bps, Fee: in.Fee, Rate: rate.String(),
		SqrtPriceX96After: q.SqrtPriceX96After.String(), TicksCrossed: q.TicksCrossed, GasEstimate: q.GasEstimate.String(),
		Block: q.Block.Number, At: time.Unix(int64(q.Block.Time), 0).UTC().Format(time.RFC3339),
		Quoter: s.swaps.Deployment().QuoterV2.Hex(), Calldata: hexutil.Encode(q.Calldata),
	}
}

func quoteText(r quoteResult) string {
	r.TokenIn.Symbol, r.TokenOut.Symbol = r.TokenIn.marked(), r.TokenOut.marked()
	return fmt.Sprintf("Quote at block %d (%s): %s %s → %s %s in the %s%% pool (fee tier %d).\n%s\n%s\n"+
		"At %d bps slippage the minimum accepted is %s %s (%s base units).\n"+
		"Ticks crossed: %d; quoter gas estimate: %s.",
		r.Block, r.At, r.AmountIn, r.TokenIn.Symbol, r.AmountOut, r.TokenOut.Symbol, decimal.New(int64(r.Fee), -4), r.Fee,
		ratesLine(r), impactLine(r),
		r.SlippageBps, r.MinOut, r.TokenOut.Symbol, r.MinOutBase, r.TicksCrossed, r.GasEstimate)
}

// ratesLine is a quote's rate both ways, readable: "Rate: 1 WETH ≈
// 2,000.12 USDT; 1 USDT ≈ 0.0004999 WETH." (symbols already marked).
func ratesLine(r quoteResult) string {
	return "Rate: " + rateText(r.TokenIn.Symbol, r.Rate, r.TokenOut.Symbol) + "; " + rateText(r.TokenOut.Symbol, r.RateInverse, r.TokenIn.Symbol) + "."
}

// impactLine says the price impact against the pool's mid price.
func impactLine(r quoteResult) string {
	if r.MidRate == "" {
		return "Price impact: unknown (the pool's mid price could not be read)."
	}
	impact, _ := readableDecimal(decimal.RequireFromString(r.PriceImpactPct), nearest)
	return "Price impact: " + impact + "% against the pool's mid price before the swap (" +
		rateText(r.TokenIn.Symbol, r.MidRate, r.TokenOut.Symbol) + "), the pool's fee included."
}

// rateText is "1 A ≈ x B", x rounded for reading (a rate is rarely exact).
func rateText(a, x, b string) string {
	text, _ := readableDecimal(decimal.RequireFromString(x), nearest)
	return "1 " + a + " ≈ " + text + " " + b
}

func (s *Server) swapTool() Tool {
	return writeTool(s, swapTool, "Swap tokens",
		"Swap an exact amount in one Uniswap v3 pool; the preview fixes the minimum output and lists each transaction (an exact approval if needed, then the swap). "+twoCalls,
		twoStep(s, swapTool, s.parseSwap, s.previewSwap, nil))
}

// swapPreview is a swap preview's facts.
type swapPreview struct {
	Action       string       `json:"action" enum:"swap" jsonschema:"what the confirm does"`
	Summary      string       `json:"summary" jsonschema:"the swap in one line"`
	Quote        quoteResult  `json:"quote" jsonschema:"the quote the minimum output was fixed from"`
	From         string       `json:"from" pattern:"address" jsonschema:"the wallet, which pays and receives"`
	Router       string       `json:"router" pattern:"address" jsonschema:"the Uniswap SwapRouter02 called"`
	Deadline     string       `json:"deadline" jsonschema:"after this the swap reverts (RFC 3339, UTC)"`
	Legs         []legPreview `json:"legs" jsonschema:"every transaction the confirm sends, in order: an exact approval when needed, then the swap"`
	AllowanceNow string       `json:"allowance_before" pattern:"amount" jsonschema:"the router's allowance of token_in before these transactions"`
	MaxFee       string       `json:"max_fee" pattern:"amount" jsonschema:"the most all legs together can cost in network fees, in ETH"`
	previewCommon

	in    swapIntent     // what is swapped
	built *uniswap.Built // the legs' facts: the quote, the minimum, the allowance before
	legs  []engine.Leg   // the plan's legs, with their gas and fees
	fees  *big.Int       // the most all legs can cost in network fees, in wei
}

// legPreview is one transaction of a swap preview.
type legPreview struct {
	Label    string `json:"label" jsonschema:"what the transaction does: reset approval, approve, swap, revoke, or call N for wallet_call"`
	To       string `json:"to" pattern:"address" jsonschema:"the contract called"`
	Value    string `json:"value" pattern:"amount" jsonschema:"ETH sent with it"`
	GasLimit uint64 `json:"gas_limit" jsonschema:"its gas limit"`
	MaxFee   string `json:"max_fee" pattern:"amount" jsonschema:"its most in network fees, in ETH"`
	Calldata string `json:"calldata" jsonschema:"its calldata, hex"`
}

// swapPreviewResult is its tool's preview result.
type swapPreviewResult = previewOf[swapPreview]

// swapRefusal words a failure of the uniswap package as a refusal.
func swapRefusal(in swapIntent, err error) *Refusal {
	var noCode *uniswap.NoCodeError
	var noQuote *uniswap.NoQuoteError
	var changed *uniswap.AllowanceChangedError
	switch {
	case errors.As(err, &noCode):
		return refuse(CodeSwapsUnavailable, "the Uniswap contract %s that walletgate expects on %s has no code on this node, so swaps are unavailable. Nothing was signed or sent.", noCode.Contract.Hex(), noCode.Network)
	case errors.As(err, &noQuote) && noQuote.Reverted != nil:
		return refuse(CodeNoQuote, "no quote for %s → %s at fee tier %d: there is no such pool, or it lacks liquidity for %s %s (%s). Try another fee tier or a smaller amount.",
			in.In.Symbol, in.Out.Symbol, in.Fee, policy.FormatAmount(in.AmountIn, in.In.Decimals), in.In.Symbol, noQuote.Reverted)
	case errors.As(err, &noQuote):
		return refuse(CodeNoQuote, "the pool would give nothing for %s %s. Try a larger amount or another fee tier.", policy.FormatAmount(in.AmountIn, in.In.Decimals), in.In.Symbol)
	case errors.As(err, &changed):
		return refuse(CodeAllowanceChanged, "the router's allowance for %s changed since the preview (was %s, now %s base units), so the previewed approvals no longer fit. Nothing was signed or sent. Call wallet_swap again without confirm for a new preview.",
			in.In.Symbol, changed.Was, changed.Now)
	}
	return engine.RPCRefusal(err)
}

// explainSwap turns Uniswap's terse revert reasons into plain words; nil
// for a revert it does not know.
func explainSwap(re *chain.RevertError) *Refusal {
	switch uniswap.Revert(re) {
	case uniswap.ErrTooLittleReceived:
		return refuse(CodePriceMoved, "the price moved: the swap would now return less than the previewed minimum, so it was not sent. Nothing was signed or spent, and the caps are as before. Call wallet_swap again without confirm for a fresh quote.").Because("the price moved: the swap would now return less than the previewed minimum")
	case uniswap.ErrTooOld:
		return refuse(CodeDeadlinePassed, "the swap's deadline has passed. Nothing was signed or sent. Call wallet_swap again without confirm for a fresh preview.").Because("the swap's deadline has passed")
	case uniswap.ErrSTF:
		return refuse(engine.CodeSimulationReverted, "the router could not take the input tokens (STF: the wallet's balance or its allowance to the router is short). Nothing was signed or sent. Check the balance with wallet_balance.").Because("the router could not take the input tokens (STF)")
	}
	return nil
}

// swapPlan builds in's plan on the engine from the uniswap package's legs:
// the operator's rules first (a swap gives value to no one but the router,
// walletgate's own table's, and brings its output back to the wallet), then
// the legs' simulation and caps check, the expected effects, the minimum
// output, and the confirm's hooks (the allowance re-check, the undo of an
// approval, the receipt check), which hold the swapper, the intent and the
// legs built, never the server. simOut is what the simulated swap returns.
func (s *Server) swapPlan(ctx context.Context, in swapIntent) (b *uniswap.Built, p *engine.Plan, simOut *big.Int, ref *Refusal) {
	if ref := s.engine.Allowed(nil); ref != nil {
		return nil, nil, nil, ref
	}
	b, err := s.swaps.Build(ctx, in.pool())
	if err != nil {
		return nil, nil, nil, swapRefusal(in, err)
	}
	p = &engine.Plan{Explain: explainSwap}
	for _, l := range b.Legs {
		p.Legs = append(p.Legs, engine.Leg{Label: l.Label, Call: l.Call})
	}
	spendOf := func(legs []engine.Leg) caps.Spend {
		sp := caps.Spend{policy.NativeAsset: new(big.Int)}
		for _, l := range legs {
			sp[policy.NativeAsset].Add(sp[policy.NativeAsset], l.Call.MaxCost())
		}
		if !in.In.Native {
			sp[in.In.Address] = new(big.Int).Set(in.AmountIn)
		}
		return sp
	}
	ret, ref := s.engine.BuildLegs(ctx, p, b.State, spendOf)
	if ref != nil {
		return nil, nil, nil, ref
	}
	p.Spend = spendOf(p.Legs)
	if p.USD != nil { // valued by BuildLegs from the same spend
		p.Spend[policy.USDAsset] = new(big.Int).Set(p.USD.Total)
	}
	p.Effects = []engine.Effect{{Asset: in.In, From: in.From, To: b.Router, Amount: in.AmountIn}}
	if !in.In.Native {
		p.Undo = func(i int) []engine.Leg {
			var legs []engine.Leg
			for _, a := range b.Undo(i) {
				legs = append(legs, engine.Leg{Label: "approval back to " + policy.FormatAmount(a.Amount, in.In.Decimals) + " " + in.In.Symbol, Call: a.Call})
			}
			return legs
		}
		p.Recheck = func() ([]*chain.View, func() *Refusal) {
			v := b.RecheckView()
			return []*chain.View{v}, func() *Refusal {
				if err := b.CheckAllowance(v); err != nil {
					return swapRefusal(in, err)
				}
				return nil
			}
		}
	}
	p.Verify = swapVerifier(s.swaps, in, b)
	p.MinIn = caps.Spend{in.Out.Address: new(big.Int).Set(b.MinOut)}
	return b, p, uniswap.Output(ret), nil
}

// swapVerifier reports a swap's receipt as the uniswap package reads it:
// the input left the wallet and at least the minimum of the output arrived,
// in the logs and in the balance.
func swapVerifier(sw *uniswap.Swapper, in swapIntent, b *uniswap.Built) func(context.Context, *chain.TxInfo, caps.Spend) ([]engine.Moved, []string) {
	return func(ctx context.Context, info *chain.TxInfo, measuredIn caps.Spend) ([]engine.Moved, []string) {
		r := sw.Read(ctx, b, info, measuredIn[in.Out.Address])
		var found []engine.Moved
		var missing []string
		if r.Paid == nil {
			missing = append(missing, fmt.Sprintf("no Transfer of exactly %s %s paid in", policy.FormatAmount(in.AmountIn, in.In.Decimals), in.In.Marked()))
		} else {
			found = append(found, engine.Moved{Kind: engine.MovedSwapIn, Asset: in.In.ID(), Symbol: in.In.Symbol, From: in.From.Hex(), To: r.Paid.To.Hex(),
				Amount: policy.FormatAmount(in.AmountIn, in.In.Decimals), Raw: in.AmountIn.String(), Known: in.In.Native || in.In.Known})
		}
		if r.Got == nil {
			missing = append(missing, fmt.Sprintf("no Transfer of at least %s %s to the wallet", policy.FormatAmount(b.MinOut, in.Out.Decimals), in.Out.Marked()))
			return found, missing
		}
		switch {
		case r.OutGrew == nil:
			missing = append(missing, "the output balance could not be read to confirm the log")
		case r.OutGrew.Cmp(r.Got.Amount) < 0:
			missing = append(missing, fmt.Sprintf("the %s balance grew by %s, less than the logged %s", in.Out.Marked(), policy.FormatAmount(r.OutGrew, in.Out.Decimals), policy.FormatAmount(r.Got.Amount, in.Out.Decimals)))
		}
		found = append(found, engine.Moved{Kind: engine.MovedSwapOut, Asset: in.Out.Address.Hex(), Symbol: in.Out.Symbol, From: r.Got.From.Hex(), To: in.From.Hex(),
			Amount: policy.FormatAmount(r.Got.Amount, in.Out.Decimals), Raw: r.Got.Amount.String(), Known: in.Out.Known})
		return found, missing
	}
}

func (s *Server) previewSwap(ctx context.Context, in swapIntent) (*mcp.CallToolResult, *Refusal) {
	b, p, simOut, ref := s.swapPlan(ctx, in)
	if ref != nil {
		return nil, ref
	}
	qr := s.quoteResult(in, b.Quote)
	pv := swapPreview{
		Action: "swap", Quote: qr, From: in.From.Hex(), Router: b.Router.Hex(),
		Deadline:     time.Unix(int64(b.Deadline), 0).UTC().Format(time.RFC3339),
		AllowanceNow: policy.FormatAmount(b.Allowance, in.In.Decimals),
		MaxFee:       policy.FormatAmount(maxFees(p), 18),
		previewCommon: s.newPreviewCommon(p.Spend, fmt.Sprintf("all %d transaction(s) succeed in sequence against block %d; the swap returns %s %s", len(p.Legs), b.State.Head.Number,
			policy.FormatAmount(simOut, in.Out.Decimals), in.Out.Symbol)),
		in: in, built: b, legs: p.Legs, fees: maxFees(p),
	}
	pv.Legs = legPreviews(p.Legs)
	for _, as := range []asset{in.In, in.Out} {
		if !as.Known {
			pv.Warnings = append(pv.Warnings, "UNVERIFIED token "+as.Address.Hex()+": not in walletgate's known-token table; its symbol is what the contract says")
		}
	}
	pv.Summary = fmt.Sprintf("Swap %s %s for at least %s %s (quoted %s) on %s (%s)", qr.AmountIn, qr.TokenIn.marked(), qr.MinOut, qr.TokenOut.marked(), qr.AmountOut, pv.Network, pv.NetworkMarker)
	return present(s, swapTool, in, p, pv)
}

func (pv swapPreview) title() string {
	minText, _ := readableAmount(pv.built.MinOut, pv.in.Out.Decimals, roundDown)
	return "Swap " + pv.Quote.AmountIn + " " + pv.Quote.TokenIn.Symbol + " for at least " + minText + " " + pv.Quote.TokenOut.Symbol
}

func (pv swapPreview) page(d *approval.Display) {
	in, qr, b := pv.in, pv.Quote, pv.built
	inName, outName := shownAsset(in.In), shownAsset(in.Out)
	d.Action = "Swap " + qr.AmountIn + " " + qr.TokenIn.Symbol + " for " + qr.TokenOut.Symbol
	d.Party = &approval.Party{Role: "Router (receives the " + qr.TokenIn.Symbol + ")", Address: pv.Router, Kind: "a contract: Uniswap SwapRouter02; the output comes back to this wallet",
		Checksum: "from walletgate's own table of Uniswap contracts, not typed by anyone"}
	d.Amounts = []approval.Amount{
		shownAmount("Pay", in.AmountIn, in.In.Decimals, inName, nearest),
		shownAmount("Receive", b.MinOut, in.Out.Decimals, outName, roundDown),
		shownAmount("Quoted", b.Quote.AmountOut, in.Out.Decimals, outName, nearest),
	}
	d.Amounts[2].Label = "Quoted (expected)"
	rate := decimal.NewFromBigInt(b.Quote.AmountOut, -int32(in.Out.Decimals)).Div(decimal.NewFromBigInt(in.AmountIn, -int32(in.In.Decimals)))
	if !rate.IsZero() {
		fwd, _ := readableDecimal(rate, nearest)
		back, _ := readableDecimal(decimal.NewFromInt(1).DivRound(rate, 18), nearest)
		d.Rate = "1 " + qr.TokenIn.Symbol + " ≈ " + fwd + " " + qr.TokenOut.Symbol + " · 1 " + qr.TokenOut.Symbol + " ≈ " + back + " " + qr.TokenIn.Symbol
	}
	d.Slippage = decimal.New(int64(in.Bps), -2).String() + "% (" + fmt.Sprint(in.Bps) + " bps) below the quote at most"
	d.FeeMax = feeAmount(pv.fees)
	d.FeeMax.Label = fmt.Sprintf("Network fees (%d transaction(s))", len(pv.legs))
	amountText := func(v *big.Int) string { return policy.FormatAmount(v, in.In.Decimals) + " " + qr.TokenIn.Symbol }
	for _, l := range pv.legs {
		fee, _ := readableAmount(l.Call.MaxFees(), 18, roundUp)
		lg := approval.Leg{Label: l.Label, To: l.Call.To.Hex(), FeeMax: fee + " ETH"}
		switch l.Label {
		case uniswap.LegResetApproval:
			lg.What = "set the router's allowance of " + qr.TokenIn.Symbol + " to 0 first (tokens like USDT require it)"
		case uniswap.LegApprove:
			lg.What = "let the router take " + amountText(new(big.Int).Add(b.Allowance, in.AmountIn)) + ", exactly"
		default:
			lg.What = "pay " + qr.AmountIn + " " + qr.TokenIn.Symbol + " for at least " + qr.MinOut + " " + qr.TokenOut.Symbol + ", to this wallet, before " + pv.Deadline
		}
		d.Legs = append(d.Legs, lg)
	}
	if !in.In.Native {
		after := new(big.Int).Set(b.Allowance)
		if len(pv.legs) == 1 { // no approval: the swap uses part of what was there
			after.Sub(after, in.AmountIn)
		}
		d.AllowanceBefore, d.AllowanceAfter = amountText(b.Allowance), amountText(after)
	}
	for _, as := range []asset{in.In, in.Out} {
		if !as.Known {
			d.Unverified = append(d.Unverified, as.Symbol+" ("+as.Address.Hex()+")")
		}
	}
}

func valueOrZero(v *big.Int) *big.Int {
	if v == nil {
		return new(big.Int)
	}
	return v
}

func (pv swapPreview) body(b *strings.Builder) {
	q := pv.Quote
	in, out := q.TokenIn.marked(), q.TokenOut.marked()
	fmt.Fprintf(b, "Action:    swap %s %s (%s base units) for at least %s %s (%s base units)\n", q.AmountIn, in, q.AmountInBase, q.MinOut, out, q.MinOutBase)
	fmt.Fprintf(b, "Quote:     %s %s at block %d (fee tier %d, slippage %d bps; 1 %s ≈ %s %s)\n", q.AmountOut, out, q.Block, q.Fee, q.SlippageBps, in, q.Rate, out)
	qm := q
	qm.TokenIn.Symbol, qm.TokenOut.Symbol = in, out
	fmt.Fprintf(b, "           %s %s\n", ratesLine(qm), impactLine(qm))
	fmt.Fprintf(b, "Tokens:    %s %s → %s %s\n", in, q.TokenIn.Address, out, q.TokenOut.Address)
	fmt.Fprintf(b, "From/to:   %s (this wallet receives the output)\n", pv.From)
	fmt.Fprintf(b, "Router:    %s (Uniswap SwapRouter02); deadline %s\n", pv.Router, pv.Deadline)
	legsText(b, pv.Legs)
	if len(pv.Legs) > 1 {
		fmt.Fprintf(b, "  The approval is exact (the router's allowance was %s %s; it returns there after the swap), never unlimited.\n", pv.AllowanceNow, in)
	}
	maxFeesText(b, pv.MaxFee)
}
