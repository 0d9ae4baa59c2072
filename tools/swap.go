package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/shopspring/decimal"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
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

	CodeSwapsUnavailable = "SWAPS_UNAVAILABLE"
	CodeBadSwap          = "BAD_SWAP"
	CodeNoQuote          = "NO_QUOTE"
	CodePriceMoved       = "PRICE_MOVED"
	CodeDeadlinePassed   = "DEADLINE_PASSED"
	CodeAllowanceChanged = "ALLOWANCE_CHANGED"
)

var feeTiers = map[uint32]bool{100: true, 500: true, 3000: true, 10000: true}

// swapIntent is a swap's validated, resolved arguments.
type swapIntent struct {
	from     common.Address
	in, out  asset
	amountIn *big.Int
	fee      uint32
	bps      uint32
}

// routerIn is the token the router takes: WETH for ETH (paid as msg.value).
func (s *Server) routerIn(in asset) common.Address {
	if in.Native {
		return s.weth()
	}
	return in.Address
}

func (s *Server) weth() common.Address {
	t, _ := policy.TokenBySymbol(s.chainID, "WETH")
	return t.Address
}

func (i swapIntent) key() any {
	return struct {
		TokenIn  string `json:"token_in"`
		TokenOut string `json:"token_out"`
		AmountIn string `json:"amount_in"`
		Fee      uint32 `json:"fee"`
		Bps      uint32 `json:"slippage_bps"`
	}{assetID(i.in), assetID(i.out), i.amountIn.String(), i.fee, i.bps}
}

// MinOut is A - (A*bps)/10000 in integers: never below what the slippage
// allows, and one base unit above flooring A*(10000-bps)/10000 when that does
// not divide evenly.
func MinOut(quoted *big.Int, bps uint32) *big.Int {
	cut := new(big.Int).Mul(quoted, big.NewInt(int64(bps)))
	cut.Quo(cut, big.NewInt(10_000))
	return cut.Sub(quoted, cut)
}

// swapsOff says why swaps are not offered, or "".
func (s *Server) swapsOff() string {
	if s.swapsDisabled != "" {
		return s.swapsDisabled
	}
	if s.network.Uniswap == nil {
		return "walletgate knows no Uniswap v3 deployment on " + s.network.Name
	}
	if (s.weth() == common.Address{}) {
		return "walletgate knows no WETH on " + s.network.Name
	}
	return ""
}

// codeChecked remembers contracts already seen to have code.
type codeChecked struct {
	mu sync.Mutex
	ok map[common.Address]bool
}

// codeViews read the code of those of addrs not yet seen to be contracts,
// to ride in a state read; codesOK then judges them as requireCode does.
func (s *Server) codeViews(addrs ...common.Address) []*chain.View {
	var out []*chain.View
	s.code.mu.Lock()
	defer s.code.mu.Unlock()
	for _, a := range addrs {
		if !s.code.ok[a] {
			out = append(out, chain.CodeView(a))
		}
	}
	return out
}

func (s *Server) codesOK(views []*chain.View) *Refusal {
	for _, v := range views {
		if v.Err != nil {
			return rpcRefusal(v.Err)
		}
		if len(v.Return) == 0 {
			return refuse(CodeSwapsUnavailable, "the Uniswap contract %s that walletgate expects on %s has no code on this node, so swaps are unavailable. Nothing was signed or sent.", v.To.Hex(), s.network.Name)
		}
		s.code.mu.Lock()
		if s.code.ok == nil {
			s.code.ok = map[common.Address]bool{}
		}
		s.code.ok[v.To] = true
		s.code.mu.Unlock()
	}
	return nil
}

// requireCode refuses when one of the Uniswap contracts has no code: the
// table names an address, the node must agree it is a contract.
func (s *Server) requireCode(ctx context.Context, addrs ...common.Address) *Refusal {
	for _, a := range addrs {
		s.code.mu.Lock()
		ok := s.code.ok[a]
		s.code.mu.Unlock()
		if ok {
			continue
		}
		code, err := s.chain.Code(ctx, a)
		if err != nil {
			return rpcRefusal(err)
		}
		if len(code) == 0 {
			return refuse(CodeSwapsUnavailable, "the Uniswap contract %s that walletgate expects on %s has no code on this node, so swaps are unavailable. Nothing was signed or sent.", a.Hex(), s.network.Name)
		}
		s.code.mu.Lock()
		if s.code.ok == nil {
			s.code.ok = map[common.Address]bool{}
		}
		s.code.ok[a] = true
		s.code.mu.Unlock()
	}
	return nil
}

// quoteArgs are wallet_swap_quote's arguments.
type quoteArgs struct {
	TokenIn     *string `json:"token_in" jsonschema:"what you pay: ETH, a symbol (e.g. USDT) or a token address"`
	TokenOut    *string `json:"token_out" jsonschema:"what you receive: a symbol or a token address (not ETH: use WETH)"`
	AmountIn    *string `json:"amount_in" pattern:"amount" jsonschema:"a decimal string in token_in's units, e.g. \"100\""`
	Fee         *uint32 `json:"fee,omitempty" enum:"100|500|3000|10000" jsonschema:"the pool's fee tier in hundredths of a basis point (default 500)"`
	SlippageBps *uint32 `json:"slippage_bps,omitempty" maximum:"1000" jsonschema:"basis points the output may fall below the quote (default 50 = 0.5%)"`
}

// swapArgs are wallet_swap's arguments: a quote's, and confirm.
type swapArgs struct {
	TokenIn     *string `json:"token_in" jsonschema:"what you pay: ETH, a symbol (e.g. USDT) or a token address"`
	TokenOut    *string `json:"token_out" jsonschema:"what you receive: a symbol or a token address (not ETH: use WETH)"`
	AmountIn    *string `json:"amount_in" pattern:"amount" jsonschema:"a decimal string in token_in's units, e.g. \"100\"; {capped}"`
	Fee         *uint32 `json:"fee,omitempty" enum:"100|500|3000|10000" jsonschema:"the pool's fee tier in hundredths of a basis point (default 500)"`
	SlippageBps *uint32 `json:"slippage_bps,omitempty" maximum:"1000" jsonschema:"basis points the output may fall below the quote (default 50 = 0.5%)"`
	confirmArg
}

func (s *Server) parseSwap(ctx context.Context, a args) (swapIntent, *Refusal) {
	if off := s.swapsOff(); off != "" {
		return swapIntent{}, refuse(CodeSwapsUnavailable, "%s. Nothing was signed or sent.", off)
	}
	inRaw, _ := a.str("token_in")
	outRaw, _ := a.str("token_out")
	in, ref := s.resolveAsset(ctx, inRaw)
	if ref != nil {
		return swapIntent{}, ref
	}
	if strings.EqualFold(outRaw, policy.NativeSymbol) {
		return swapIntent{}, refuse(CodeBadSwap, "token_out ETH is not supported: walletgate swaps into tokens only. Use token_out WETH (%s).", s.weth().Hex())
	}
	out, ref := s.resolveAsset(ctx, outRaw)
	if ref != nil {
		return swapIntent{}, ref
	}
	if s.routerIn(in) == out.Address {
		return swapIntent{}, refuse(CodeBadSwap, "token_in and token_out are the same token (%s). Choose two different tokens.", out.Address.Hex())
	}
	amtRaw, ok := a.str("amount_in")
	if !ok {
		return swapIntent{}, refuse(CodeBadAmount, "amount_in is missing. Give a decimal string such as \"100\".")
	}
	amount, err := policy.ParsePositiveAmount(amtRaw, in.Decimals)
	if err != nil {
		return swapIntent{}, refuse(CodeBadAmount, "amount_in %s: %s. Give a decimal string greater than zero with at most %d decimals for %s.", displayInput(amtRaw), reason(err), in.Decimals, in.Symbol)
	}
	fee := uint32(defaultFee)
	if v, ok := a.str("fee"); ok {
		n, _ := strconv.ParseUint(v, 10, 32)
		if !feeTiers[uint32(n)] {
			return swapIntent{}, refuse(CodeBadSwap, "fee %s is not a Uniswap v3 fee tier. Use 100, 500, 3000 or 10000 (hundredths of a basis point; 500 = 0.05%%).", displayInput(v))
		}
		fee = uint32(n)
	}
	bps := uint32(defaultSlippage)
	if v, ok := a.str("slippage_bps"); ok {
		n, _ := strconv.ParseUint(v, 10, 32)
		if n > maxSlippage {
			return swapIntent{}, refuse(CodeBadSwap, "slippage_bps %s is above the most walletgate allows (%d = 10%%). Use a smaller value, e.g. 50 for 0.5%%.", displayInput(v), maxSlippage)
		}
		bps = uint32(n)
	}
	return swapIntent{from: s.address, in: in, out: out, amountIn: amount, fee: fee, bps: bps}, nil
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
		untyped[quoteArgs](s.quoteHandler))
}

func (s *Server) quoteHandler(ctx context.Context, a args) (*mcp.CallToolResult, *Refusal) {
	in, ref := s.parseSwap(ctx, a)
	if ref != nil {
		return nil, ref
	}
	q, ref := s.quote(ctx, in)
	if ref != nil {
		return nil, ref
	}
	r := s.quoteResult(in, q)
	return success(r, quoteText(r)), nil
}

func (s *Server) quote(ctx context.Context, in swapIntent) (*chain.Quote, *Refusal) {
	u := s.network.Uniswap
	if ref := s.requireCode(ctx, u.QuoterV2, u.SwapRouter02); ref != nil {
		return nil, ref
	}
	q, err := s.chain.QuoteExactInputSingle(ctx, u.QuoterV2, u.Factory, s.routerIn(in.in), in.out.Address, in.amountIn, in.fee)
	return s.checkQuote(in, q, err)
}

// decodeQuote reads a quote batched as a view.
func (s *Server) decodeQuote(in swapIntent, v *chain.View, head chain.Head) (*chain.Quote, *Refusal) {
	if v.Err != nil {
		return s.checkQuote(in, nil, v.Err)
	}
	q, err := chain.DecodeQuote(v.Return, v.Data, head)
	return s.checkQuote(in, q, err)
}

// checkQuote turns a failed or empty quote into a refusal.
func (s *Server) checkQuote(in swapIntent, q *chain.Quote, err error) (*chain.Quote, *Refusal) {
	if err != nil {
		var re *chain.RevertError
		if errors.As(err, &re) {
			return nil, refuse(CodeNoQuote, "no quote for %s → %s at fee tier %d: there is no such pool, or it lacks liquidity for %s %s (%s). Try another fee tier or a smaller amount.",
				in.in.Symbol, in.out.Symbol, in.fee, policy.FormatAmount(in.amountIn, in.in.Decimals), in.in.Symbol, err)
		}
		return nil, rpcRefusal(err)
	}
	if q.AmountOut.Sign() == 0 {
		return nil, refuse(CodeNoQuote, "the pool would give nothing for %s %s. Try a larger amount or another fee tier.", policy.FormatAmount(in.amountIn, in.in.Decimals), in.in.Symbol)
	}
	return q, nil
}

func (s *Server) quoteResult(in swapIntent, q *chain.Quote) quoteResult {
	minOut := MinOut(q.AmountOut, in.bps)
	rate := decimal.NewFromBigInt(q.AmountOut, -int32(in.out.Decimals)).
		Div(decimal.NewFromBigInt(in.amountIn, -int32(in.in.Decimals))).Round(8)
	p := pricing(s.routerIn(in.in), in.out.Address, in.in.Decimals, in.out.Decimals, in.amountIn, q.AmountOut, q.SqrtPriceX96)
	return quoteResult{
		RateInverse: p.inverse, MidRate: p.mid, PriceImpactPct: p.impactPct, SqrtPriceX96: p.sqrtPrice,
		TokenIn: ref(in.in), TokenOut: ref(in.out),
		AmountIn: policy.FormatAmount(in.amountIn, in.in.Decimals), AmountInBase: in.amountIn.String(),
		AmountOut: policy.FormatAmount(q.AmountOut, in.out.Decimals), AmountOutBase: q.AmountOut.String(),
		MinOut: policy.FormatAmount(minOut, in.out.Decimals), MinOutBase: minOut.String(),
		SlippageBps: in.bps, Fee: in.fee, Rate: rate.String(),
		SqrtPriceX96After: q.SqrtPriceX96After.String(), TicksCrossed: q.TicksCrossed, GasEstimate: q.GasEstimate.String(),
		Block: q.Block.Number, At: time.Unix(int64(q.Block.Time), 0).UTC().Format(time.RFC3339),
		Quoter: s.network.Uniswap.QuoterV2.Hex(), Calldata: hexutil.Encode(q.Calldata),
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

// quotePricing is a quote's inverse rate, the pool's mid rate and the price
// impact against it, as decimal strings; the mid and impact are "" when
// sqrtPrice (the pool's price before the swap) was not read.
type quotePricing struct{ inverse, mid, impactPct, sqrtPrice string }

// pricing computes quotePricing exactly, in rationals (never floats), and
// rounds only the results: inverse and mid to 18 decimals, the impact to 4.
// tokenIn is the token the pool takes (WETH for ETH). Uniswap's
// sqrtPriceX96 is sqrt(token1/token0) in base units, times 2^96; token0 is
// the lower address.
func pricing(tokenIn, tokenOut common.Address, decIn, decOut uint8, amountIn, amountOut, sqrtPrice *big.Int) quotePricing {
	scale := func(dec uint8) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec)), nil) }
	// out per in, in the tokens' units: (out / 10^decOut) / (in / 10^decIn)
	exec := new(big.Rat).SetFrac(new(big.Int).Mul(amountOut, scale(decIn)), new(big.Int).Mul(amountIn, scale(decOut)))
	var p quotePricing
	if exec.Sign() > 0 {
		p.inverse = decimal.NewFromBigRat(new(big.Rat).Inv(exec), 18).String()
	}
	if sqrtPrice == nil || sqrtPrice.Sign() == 0 || exec.Sign() == 0 {
		return p
	}
	// token1 per token0 in base units: sqrtPrice² / 2^192
	mid := new(big.Rat).SetFrac(new(big.Int).Mul(sqrtPrice, sqrtPrice), new(big.Int).Lsh(big.NewInt(1), 192))
	if bytes.Compare(tokenIn.Bytes(), tokenOut.Bytes()) > 0 {
		mid.Inv(mid) // token_in is token1: out (token0) per in is the inverse
	}
	mid.Mul(mid, new(big.Rat).SetFrac(scale(decIn), scale(decOut)))
	impact := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Quo(exec, mid))
	p.mid = decimal.NewFromBigRat(mid, 18).String()
	p.impactPct = decimal.NewFromBigRat(impact.Mul(impact, big.NewRat(100, 1)), 4).String()
	p.sqrtPrice = sqrtPrice.String()
	return p
}

func (s *Server) swapTool() Tool {
	return writeTool(s, swapTool, "Swap tokens",
		"Swap an exact amount in one Uniswap v3 pool; the preview fixes the minimum output and lists each transaction (an exact approval if needed, then the swap). "+twoCalls,
		twoStep(s, swapTool, byName[swapArgs](s.parseSwap), s.previewSwap, nil))
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

func (s *Server) previewSwap(ctx context.Context, in swapIntent) (*mcp.CallToolResult, *Refusal) {
	if ref := s.writeAllowed(nil); ref != nil {
		return nil, ref
	}
	u := s.network.Uniswap
	router := u.SwapRouter02
	// One round trip: the wallet's state, the quote, the router's allowance
	// and, once per process, whether the Uniswap contracts have code.
	codes := s.codeViews(u.QuoterV2, u.SwapRouter02)
	quoteView := chain.QuoteView(u.QuoterV2, s.routerIn(in.in), in.out.Address, in.amountIn, in.fee)
	slot0View := chain.Slot0View(chain.PoolAddress(u.Factory, s.routerIn(in.in), in.out.Address, in.fee))
	views := append([]*chain.View{quoteView, slot0View}, codes...)
	var allowanceView *chain.View
	if !in.in.Native {
		allowanceView = chain.AllowanceView(in.in.Address, in.from, router)
		views = append(views, allowanceView)
	}
	st, err := s.chain.StateAndViews(ctx, in.from, views...)
	if err != nil {
		return nil, rpcRefusal(err)
	}
	if ref := s.codesOK(codes); ref != nil {
		return nil, ref
	}
	q, ref := s.decodeQuote(in, quoteView, st.Head)
	if ref != nil {
		return nil, ref
	}
	if slot0View.Err == nil {
		q.SqrtPriceX96, _ = chain.DecodeSqrtPrice(slot0View.Return)
	}
	minOut := MinOut(q.AmountOut, in.bps)
	deadline := uint64(s.now().Add(s.cfg.ConfirmTTL + 10*time.Minute).Unix())
	if head := q.Block.Time + uint64((s.cfg.ConfirmTTL + 10*time.Minute).Seconds()); head > deadline {
		deadline = head
	}
	swapCall := chain.Call{From: in.from, To: router, Data: chain.SwapData(s.routerIn(in.in), in.out.Address, in.fee, in.from, in.amountIn, minOut, deadline)}
	var legs []engine.Leg
	allowance := new(big.Int)
	if in.in.Native {
		swapCall.Value = new(big.Int).Set(in.amountIn)
	} else {
		if allowanceView.Err != nil {
			return nil, rpcRefusal(allowanceView.Err)
		}
		if allowance, err = chain.DecodeUint256(allowanceView.Return); err != nil {
			return nil, rpcRefusal(fmt.Errorf("allowance of %s: %w", in.in.Address.Hex(), err))
		}
		if allowance.Cmp(in.amountIn) < 0 {
			if allowance.Sign() > 0 {
				legs = append(legs, engine.Leg{Label: "reset approval", Call: chain.Call{From: in.from, To: in.in.Address, Data: chain.ApproveData(router, new(big.Int))}})
			}
			total := new(big.Int).Add(allowance, in.amountIn)
			legs = append(legs, engine.Leg{Label: "approve", Call: chain.Call{From: in.from, To: in.in.Address, Data: chain.ApproveData(router, total)}})
		}
	}
	legs = append(legs, engine.Leg{Label: "swap", Call: swapCall})

	p := &engine.Plan{Tool: swapTool, Legs: legs, Explain: s.explainSwap}
	spendOf := func(legs []engine.Leg) caps.Spend {
		sp := caps.Spend{policy.NativeAsset: new(big.Int)}
		for _, l := range legs {
			sp[policy.NativeAsset].Add(sp[policy.NativeAsset], l.Call.MaxCost())
		}
		if !in.in.Native {
			sp[in.in.Address] = new(big.Int).Set(in.amountIn)
		}
		return sp
	}
	ret, ref := s.engine.BuildLegs(ctx, p, st, spendOf)
	if ref != nil {
		return nil, ref
	}
	simOut := swapOutput(ret)
	p.Spend = spendOf(p.Legs)
	p.Effects = []engine.Effect{{Asset: in.in, From: in.from, To: router, Amount: in.amountIn}}
	allowanceBefore := new(big.Int).Set(allowance)
	if !in.in.Native {
		p.Undo = s.swapUndo(in, router, allowanceBefore)
		p.Recheck = func() ([]*chain.View, func() *Refusal) {
			v := chain.AllowanceView(in.in.Address, in.from, router)
			return []*chain.View{v}, func() *Refusal {
				if v.Err != nil {
					return rpcRefusal(v.Err)
				}
				now, err := chain.DecodeUint256(v.Return)
				if err != nil {
					return rpcRefusal(fmt.Errorf("allowance of %s: %w", in.in.Address.Hex(), err))
				}
				if now.Cmp(allowanceBefore) == 0 {
					return nil
				}
				return refuse(CodeAllowanceChanged, "the router's allowance for %s changed since the preview (was %s, now %s base units), so the previewed approvals no longer fit. Nothing was signed or sent. Call wallet_swap again without confirm for a new preview.",
					in.in.Symbol, allowanceBefore, now)
			}
		}
	}
	p.Verify = s.swapVerifier(in, minOut)
	p.MinIn = caps.Spend{in.out.Address: new(big.Int).Set(minOut)}

	qr := s.quoteResult(in, q)
	pv := swapPreview{
		Action: "swap", Quote: qr, From: in.from.Hex(), Router: router.Hex(),
		Deadline:     time.Unix(int64(deadline), 0).UTC().Format(time.RFC3339),
		AllowanceNow: policy.FormatAmount(allowance, in.in.Decimals),
		MaxFee:       policy.FormatAmount(new(big.Int).Sub(p.MaxCost(), p.Value()), 18),
		previewCommon: s.newPreviewCommon(p.Spend, fmt.Sprintf("all %d transaction(s) succeed in sequence against block %d; the swap returns %s %s", len(p.Legs), st.Head.Number,
			policy.FormatAmount(simOut, in.out.Decimals), in.out.Symbol)),
	}
	pv.Legs = legPreviews(p.Legs)
	for _, as := range []asset{in.in, in.out} {
		if !as.Known {
			pv.Warnings = append(pv.Warnings, "UNVERIFIED token "+as.Address.Hex()+": not in walletgate's known-token table; its symbol is what the contract says")
		}
	}
	pv.Summary = fmt.Sprintf("Swap %s %s for at least %s %s (quoted %s) on %s (%s)", qr.AmountIn, qr.TokenIn.marked(), qr.MinOut, qr.TokenOut.marked(), qr.AmountOut, pv.Network, pv.NetworkMarker)

	display := func() approval.Display {
		inName, outName := shownAsset(in.in), shownAsset(in.out)
		minText, _ := readableAmount(minOut, in.out.Decimals, roundDown)
		d := s.display("Swap "+qr.AmountIn+" "+qr.TokenIn.Symbol+" for at least "+minText+" "+qr.TokenOut.Symbol, pv.previewCommon)
		d.Action = "Swap " + qr.AmountIn + " " + qr.TokenIn.Symbol + " for " + qr.TokenOut.Symbol
		d.Party = &approval.Party{Role: "Router (receives the " + qr.TokenIn.Symbol + ")", Address: pv.Router, Kind: "a contract: Uniswap SwapRouter02; the output comes back to this wallet",
			Checksum: "from walletgate's own table of Uniswap contracts, not typed by anyone"}
		d.Amounts = []approval.Amount{
			shownAmount("Pay", in.amountIn, in.in.Decimals, inName, nearest),
			shownAmount("Receive", minOut, in.out.Decimals, outName, roundDown),
			shownAmount("Quoted", q.AmountOut, in.out.Decimals, outName, nearest),
		}
		d.Amounts[2].Label = "Quoted (expected)"
		rate := decimal.NewFromBigInt(q.AmountOut, -int32(in.out.Decimals)).Div(decimal.NewFromBigInt(in.amountIn, -int32(in.in.Decimals)))
		if !rate.IsZero() {
			fwd, _ := readableDecimal(rate, nearest)
			back, _ := readableDecimal(decimal.NewFromInt(1).DivRound(rate, 18), nearest)
			d.Rate = "1 " + qr.TokenIn.Symbol + " ≈ " + fwd + " " + qr.TokenOut.Symbol + " · 1 " + qr.TokenOut.Symbol + " ≈ " + back + " " + qr.TokenIn.Symbol
		}
		d.Slippage = decimal.New(int64(in.bps), -2).String() + "% (" + fmt.Sprint(in.bps) + " bps) below the quote at most"
		d.FeeMax = feeAmount(new(big.Int).Sub(p.MaxCost(), p.Value()))
		d.FeeMax.Label = fmt.Sprintf("Network fees (%d transaction(s))", len(p.Legs))
		amountText := func(v *big.Int) string { return policy.FormatAmount(v, in.in.Decimals) + " " + qr.TokenIn.Symbol }
		for _, l := range p.Legs {
			fee, _ := readableAmount(new(big.Int).Mul(new(big.Int).SetUint64(l.Call.Gas), l.Call.MaxFee), 18, roundUp)
			lg := approval.Leg{Label: l.Label, To: l.Call.To.Hex(), FeeMax: fee + " ETH"}
			switch l.Label {
			case "reset approval":
				lg.What = "set the router's allowance of " + qr.TokenIn.Symbol + " to 0 first (tokens like USDT require it)"
			case "approve":
				lg.What = "let the router take " + amountText(new(big.Int).Add(allowance, in.amountIn)) + ", exactly"
			default:
				lg.What = "pay " + qr.AmountIn + " " + qr.TokenIn.Symbol + " for at least " + qr.MinOut + " " + qr.TokenOut.Symbol + ", to this wallet, before " + pv.Deadline
			}
			d.Legs = append(d.Legs, lg)
		}
		if !in.in.Native {
			after := new(big.Int).Set(allowance)
			if len(p.Legs) == 1 { // no approval: the swap uses part of what was there
				after.Sub(after, in.amountIn)
			}
			d.AllowanceBefore, d.AllowanceAfter = amountText(allowance), amountText(after)
		}
		for _, as := range []asset{in.in, in.out} {
			if !as.Known {
				d.Unverified = append(d.Unverified, as.Symbol+" ("+as.Address.Hex()+")")
			}
		}
		return d
	}
	return s.offer(swapTool, s.canonical(in), p, display, func(c confirmation) (any, string) {
		r := previewFor(pv, c, swapTool)
		return r, s.swapPreviewText(r, c)
	})
}

func valueOrZero(v *big.Int) *big.Int {
	if v == nil {
		return new(big.Int)
	}
	return v
}

// swapUndo takes back what an included approval left standing when the swap
// itself cannot be sent: the router's allowance goes back to what it was
// (through zero, as USDT-like tokens require).
func (s *Server) swapUndo(in swapIntent, router common.Address, before *big.Int) func(int) []engine.Leg {
	return func(i int) []engine.Leg {
		if i == 0 {
			return nil
		}
		call := func(amount *big.Int) chain.Call {
			return chain.Call{From: in.from, To: in.in.Address, Data: chain.ApproveData(router, amount)}
		}
		legs := []engine.Leg{{Label: "approval back to 0 " + in.in.Symbol, Call: call(new(big.Int))}}
		if before.Sign() > 0 {
			legs = append(legs, engine.Leg{Label: "approval back to " + policy.FormatAmount(before, in.in.Decimals) + " " + in.in.Symbol, Call: call(before)})
		}
		return legs
	}
}

// swapOutput decodes multicall's bytes[] result whose one element is
// exactInputSingle's amountOut.
func swapOutput(ret []byte) *big.Int {
	vals, err := chain.UniswapABI().Methods["multicall"].Outputs.Unpack(ret)
	if err != nil || len(vals) != 1 {
		return new(big.Int)
	}
	results, ok := vals[0].([][]byte)
	if !ok || len(results) != 1 || len(results[0]) < 32 {
		return new(big.Int)
	}
	return new(big.Int).SetBytes(results[0][:32])
}

// explainSwap turns Uniswap's terse revert reasons into plain words.
func (s *Server) explainSwap(re *chain.RevertError) *Refusal {
	switch {
	case strings.Contains(re.Reason, "Too little received"):
		return refuse(CodePriceMoved, "the price moved: the swap would now return less than the previewed minimum, so it was not sent. Nothing was signed or spent, and the caps are as before. Call wallet_swap again without confirm for a fresh quote.").Because("the price moved: the swap would now return less than the previewed minimum")
	case strings.Contains(re.Reason, "Transaction too old"):
		return refuse(CodeDeadlinePassed, "the swap's deadline has passed. Nothing was signed or sent. Call wallet_swap again without confirm for a fresh preview.").Because("the swap's deadline has passed")
	case strings.Contains(re.Reason, "STF"):
		return refuse(CodeSimulationReverted, "the router could not take the input tokens (STF: the wallet's balance or its allowance to the router is short). Nothing was signed or sent. Check the balance with wallet_balance.").Because("the router could not take the input tokens (STF)")
	}
	return nil
}

// swapVerifier checks a swap's receipt: the input left the wallet and at
// least the minimum of the output arrived, in the logs and in the balance.
func (s *Server) swapVerifier(in swapIntent, minOut *big.Int) func(context.Context, *chain.TxInfo, caps.Spend) ([]engine.Moved, []string) {
	return func(ctx context.Context, info *chain.TxInfo, measuredIn caps.Spend) ([]engine.Moved, []string) {
		var found []engine.Moved
		var missing []string
		tokenIn := s.routerIn(in.in)
		var paid, got *chain.Transfer
		for i := range info.Transfers {
			t := &info.Transfers[i]
			if t.Token == tokenIn && t.Amount.Cmp(in.amountIn) == 0 && (t.From == in.from || (in.in.Native && t.From == s.network.Uniswap.SwapRouter02)) {
				paid = t
			}
			if t.Token == in.out.Address && t.To == in.from && t.Amount.Cmp(minOut) >= 0 {
				got = t
			}
		}
		if paid == nil {
			missing = append(missing, fmt.Sprintf("no Transfer of exactly %s %s paid in", policy.FormatAmount(in.amountIn, in.in.Decimals), marked(in.in.Symbol, in.in.Native || in.in.Known)))
		} else {
			found = append(found, engine.Moved{Kind: engine.MovedSwapIn, Asset: assetID(in.in), Symbol: in.in.Symbol, From: in.from.Hex(), To: paid.To.Hex(),
				Amount: policy.FormatAmount(in.amountIn, in.in.Decimals), Raw: in.amountIn.String(), Known: in.in.Native || in.in.Known})
		}
		if got == nil {
			missing = append(missing, fmt.Sprintf("no Transfer of at least %s %s to the wallet", policy.FormatAmount(minOut, in.out.Decimals), marked(in.out.Symbol, in.out.Known)))
		} else {
			// The balance must agree with the log: as the engine measured
			// it, or read here when it could not.
			delta, ok := measuredIn[in.out.Address]
			if !ok {
				if bals, err := s.chain.TokenBalancesAt(ctx, in.out.Address, in.from, info.Block-1, info.Block); err == nil {
					delta, ok = new(big.Int).Sub(bals[1], bals[0]), true
				}
			}
			if !ok {
				missing = append(missing, "the output balance could not be read to confirm the log")
			} else if delta.Cmp(got.Amount) < 0 {
				missing = append(missing, fmt.Sprintf("the %s balance grew by %s, less than the logged %s", marked(in.out.Symbol, in.out.Known), policy.FormatAmount(delta, in.out.Decimals), policy.FormatAmount(got.Amount, in.out.Decimals)))
			}
			found = append(found, engine.Moved{Kind: engine.MovedSwapOut, Asset: in.out.Address.Hex(), Symbol: in.out.Symbol, From: got.From.Hex(), To: in.from.Hex(),
				Amount: policy.FormatAmount(got.Amount, in.out.Decimals), Raw: got.Amount.String(), Known: in.out.Known})
		}
		return found, missing
	}
}

func (s *Server) swapPreviewText(r swapPreviewResult, c confirmation) string {
	pv := r.Preview
	q := pv.Quote
	var b strings.Builder
	b.WriteString("PREVIEW — nothing has been signed or sent.\n")
	pv.networkLine(&b)
	in, out := q.TokenIn.marked(), q.TokenOut.marked()
	fmt.Fprintf(&b, "Action:    swap %s %s (%s base units) for at least %s %s (%s base units)\n", q.AmountIn, in, q.AmountInBase, q.MinOut, out, q.MinOutBase)
	fmt.Fprintf(&b, "Quote:     %s %s at block %d (fee tier %d, slippage %d bps; 1 %s ≈ %s %s)\n", q.AmountOut, out, q.Block, q.Fee, q.SlippageBps, in, q.Rate, out)
	qm := q
	qm.TokenIn.Symbol, qm.TokenOut.Symbol = in, out
	fmt.Fprintf(&b, "           %s %s\n", ratesLine(qm), impactLine(qm))
	fmt.Fprintf(&b, "Tokens:    %s %s → %s %s\n", in, q.TokenIn.Address, out, q.TokenOut.Address)
	fmt.Fprintf(&b, "From/to:   %s (this wallet receives the output)\n", pv.From)
	fmt.Fprintf(&b, "Router:    %s (Uniswap SwapRouter02); deadline %s\n", pv.Router, pv.Deadline)
	legsText(&b, pv.Legs)
	if len(pv.Legs) > 1 {
		fmt.Fprintf(&b, "  The approval is exact (the router's allowance was %s %s; it returns there after the swap), never unlimited.\n", pv.AllowanceNow, in)
	}
	fmt.Fprintf(&b, "Max fees:  %s ETH in all, paid in ETH\n", pv.MaxFee)
	s.previewTail(&b, pv.previewCommon, r.ExpiresAt, swapTool, c)
	return b.String()
}
