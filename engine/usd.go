package engine

// USD windows: every write's outflows valued at Chainlink prices read on
// chain, counted against the USD caps beside each asset's own.
//
// Rules of this file:
//   - Only when a cap window names USD (policy.USDAsset) does anything here
//     run; then the spend of every write gets a USD entry, the sum of its
//     assets' values (ETH with its max fees, tokens, exposures), rounded up.
//   - Prices ride in the batch a step makes anyway (the preview's state read
//     or simulation, the confirm's re-read). Signatures, which have no such
//     batch at the confirm, read them in one round trip of their own.
//   - Fail closed: an asset with no feed, a feed that does not answer, a
//     round that is stale, non-positive or from after the head, or an L2
//     sequencer that is down or within its grace period refuses the write
//     (PRICE_UNAVAILABLE) — an asset is never counted as $0. Only an asset
//     the operator lists as unpriced (WALLETGATE_USD_UNPRICED) is left out of
//     the total, and the preview says so.
//   - The confirm prices again and reserves at its own prices, which the run
//     keeps: settlement values what moved at those prices, never the
//     market's later ones. A reservation that reaches the caps without a
//     USD entry is refused (usdGuard), so no path can skip the USD windows.
//     A price that rose so far that the write no longer fits is PRICE_MOVED.

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/policy"
)

// CodePriceUnavailable: a write's USD value cannot be known.
const CodePriceUnavailable = chain.CodePriceUnavailable

// CodePriceMoved: at the confirm, the price moved so that the write no
// longer fits its USD caps.
const CodePriceMoved = "PRICE_MOVED"

// USD is the USD windows' asset, in 10^-8 dollars.
var USD = Asset{Address: policy.USDAsset, Symbol: policy.USDSymbol, Decimals: policy.USDDecimals, Known: true}

// Pricing is how a chain's assets are priced in USD.
type Pricing struct {
	// Feeds are the USD feeds by asset address (policy.NativeAsset: ETH;
	// WETH has ETH's feed).
	Feeds map[common.Address]policy.PriceFeed
	// Unpriced are assets the operator lets be spent with no USD value.
	Unpriced map[common.Address]bool
	// Sequencer is the chain's L2 sequencer uptime feed, if it has one.
	Sequencer *common.Address
	Grace     time.Duration
}

// PricingFor resolves cfg's price feeds (policy.FeedsFor: the pinned ones
// and the operator's) and unpriced assets to addresses on chainID. An
// operator's symbol the chain does not know is an error; a pinned one is
// skipped.
func PricingFor(chainID uint64, cfg policy.Config) (*Pricing, error) {
	p := &Pricing{Feeds: map[common.Address]policy.PriceFeed{}, Unpriced: map[common.Address]bool{}, Grace: policy.SequencerGracePeriod}
	resolve := func(asset string) (common.Address, bool) {
		switch {
		case asset == policy.NativeSymbol:
			return policy.NativeAsset, true
		case strings.HasPrefix(asset, "0x"):
			return common.HexToAddress(asset), true // checked by ParsePriceFeeds / ParseUnpriced
		}
		t, ok := policy.TokenBySymbol(chainID, asset)
		return t.Address, ok
	}
	for asset, f := range policy.FeedsFor(chainID, chainID, cfg.PriceFeeds) {
		a, ok := resolve(asset)
		if !ok {
			if f.Pinned {
				continue
			}
			return nil, fmt.Errorf("%s: %s is not a known token on chain %d; write its address", policy.EnvPriceFeeds, asset, chainID)
		}
		p.Feeds[a] = f
	}
	if eth, ok := p.Feeds[policy.NativeAsset]; ok {
		if weth, ok := policy.TokenBySymbol(chainID, "WETH"); ok {
			if _, own := p.Feeds[weth.Address]; !own {
				p.Feeds[weth.Address] = eth
			}
		}
	}
	for _, u := range cfg.USDUnpriced {
		a, ok := resolve(u.Asset)
		if !ok {
			return nil, fmt.Errorf("%s: %s is not a known token on chain %d; write its address", policy.EnvUSDUnpriced, u.Asset, chainID)
		}
		p.Unpriced[a] = true
	}
	if s, ok := policy.SequencerFeed(chainID); ok {
		p.Sequencer = &s
	}
	return p, nil
}

// USDLine is one asset's part of a write's USD value.
type USDLine struct {
	Asset    Asset
	Amount   *big.Int // base units of Asset
	USD      *big.Int // 10^-8 dollars; nil when Unpriced
	Round    chain.Round
	Unpriced bool // the operator's: left out of the total
}

// USDValue is what a write spends in USD, and the rounds it was valued at.
type USDValue struct {
	Total *big.Int
	Lines []USDLine
}

// usdCapped says whether a USD window is capped.
func (e *Engine) usdCapped() bool { return e.ledger.Capped(policy.USDAsset) }

// priceRead is the price views of one batch.
type priceRead struct {
	assets []common.Address
	views  [][2]*chain.View
	seq    *[2]*chain.View
}

// priceViews are the reads a USD valuation needs, to add to a batch; nil
// when no USD window is capped.
func (e *Engine) priceViews() (*priceRead, []*chain.View) {
	if !e.usdCapped() || e.pricing == nil {
		return nil, nil
	}
	pr := &priceRead{}
	var flat []*chain.View
	for _, a := range sortedFeedAssets(e.pricing.Feeds) {
		v := chain.PriceViews(e.pricing.Feeds[a].Feed)
		pr.assets, pr.views = append(pr.assets, a), append(pr.views, v)
		flat = append(flat, v[0], v[1])
	}
	if e.pricing.Sequencer != nil {
		v := chain.PriceViews(*e.pricing.Sequencer)
		pr.seq = &v
		flat = append(flat, v[0], v[1])
	}
	return pr, flat
}

func sortedFeedAssets(m map[common.Address]policy.PriceFeed) []common.Address {
	out := make([]common.Address, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cmp(out[j]) < 0 })
	return out
}

// readPrices reads the views of one batch in its own round trip, for a step
// that makes no batch of its own (signatures). Its head is the clock.
func (e *Engine) readPrices(ctx context.Context) (*priceRead, uint64, *Refusal) {
	pr, views := e.priceViews()
	if pr == nil {
		return nil, 0, nil
	}
	st, err := e.chain.StateAndViews(ctx, e.address, views...)
	if err != nil {
		return nil, 0, RPCRefusal(err)
	}
	return pr, st.Head.Time, nil
}

// priced returns spend with its USD entry and the value, at the rounds of
// pr judged at the head's time now. Without capped USD windows it returns
// spend as it is.
func (e *Engine) priced(spend caps.Spend, pr *priceRead, now uint64) (caps.Spend, *USDValue, *Refusal) {
	if !e.usdCapped() {
		return spend, nil, nil
	}
	refuse := func(a Asset, why string) *Refusal {
		return Refuse(CodePriceUnavailable, "this write spends %s, whose USD value walletgate cannot know: %s. The USD caps (%s) need every outflow priced, so nothing was signed or sent and no cap was used. The operator can name a feed in %s, or let the asset be bounded by its own caps alone with %s=%s.",
			a.Marked(), why, policy.USDSymbol, policy.EnvPriceFeeds, policy.EnvUSDUnpriced, capKey(a)).
			Because("%s", why)
	}
	if pr == nil {
		return nil, nil, Refuse(CodePriceUnavailable, "no USD price feeds are configured for this chain, so the USD caps cannot be applied. Nothing was signed or sent. The operator names feeds in %s.", policy.EnvPriceFeeds)
	}
	rounds := map[common.Address]chain.Round{}
	errs := map[common.Address]error{}
	for i, a := range pr.assets {
		r, err := chain.ReadRound(pr.views[i])
		if err == nil {
			err = r.Fresh(now, e.pricing.Feeds[a].Heartbeat, policy.HeartbeatMargin)
		}
		rounds[a], errs[a] = r, err
	}
	var seqErr error
	if pr.seq != nil {
		r, err := chain.ReadRound(*pr.seq)
		if err == nil {
			err = r.SequencerUp(now, e.pricing.Grace)
		}
		seqErr = err
	}
	out := caps.Spend{}
	v := &USDValue{Total: new(big.Int)}
	for _, a := range sortedKeys(spend) {
		amount := spend[a]
		if a == policy.USDAsset {
			continue
		}
		out[a] = new(big.Int).Set(amount)
		if amount.Sign() <= 0 {
			continue
		}
		as := e.asset(a)
		if e.pricing.Unpriced[a] {
			v.Lines = append(v.Lines, USDLine{Asset: as, Amount: amount, Unpriced: true})
			continue
		}
		if _, ok := e.pricing.Feeds[a]; !ok {
			return nil, nil, refuse(as, fmt.Sprintf("no USD price feed is configured for it on chain %s", e.chainID))
		}
		if seqErr != nil {
			return nil, nil, refuse(as, seqErr.Error())
		}
		if errs[a] != nil {
			return nil, nil, refuse(as, errs[a].Error())
		}
		r := rounds[a]
		usd := r.USDValue(amount, as.Decimals, policy.USDDecimals)
		v.Total.Add(v.Total, usd)
		v.Lines = append(v.Lines, USDLine{Asset: as, Amount: amount, USD: usd, Round: r})
	}
	out[policy.USDAsset] = new(big.Int).Set(v.Total)
	return out, v, nil
}

// usdGuard refuses a reservation that would pass the USD windows without a
// USD entry: a path that forgot to price is refused, not let through.
func (e *Engine) usdGuard(spend caps.Spend) *Refusal {
	if !e.usdCapped() {
		return nil
	}
	if _, ok := spend[policy.USDAsset]; ok {
		return nil
	}
	for _, v := range spend {
		if v != nil && v.Sign() > 0 {
			return Refuse(CodePriceUnavailable, "this write was not valued in USD, and the USD caps need every write valued. Nothing was signed or sent.")
		}
	}
	return nil
}

// repriced values p's spend again at the confirm's rounds: PRICE_MOVED when
// the value rose past what the caps leave, where the previewed value fit.
func (e *Engine) repriced(p *Plan, pr *priceRead, now uint64) (caps.Spend, *USDValue, *Refusal) {
	spend, v, ref := e.priced(p.Spend, pr, now)
	if ref != nil || v == nil {
		return spend, v, ref
	}
	if p.USD != nil && v.Total.Cmp(p.USD.Total) > 0 {
		if err := e.ledger.Check(spend); err != nil {
			return nil, nil, Refuse(CodePriceMoved, "the USD value of this write rose from $%s at the preview to $%s now (%s), more than the USD caps leave: %s Nothing was signed or sent and no cap was used. Preview it again to see the new value.",
				USD.Format(p.USD.Total), USD.Format(v.Total), v.prices(), e.capsRefusal(err, nil).Message)
		}
	}
	return spend, v, nil
}

// prices names each line's price, feed and round, for messages.
func (v *USDValue) prices() string {
	var parts []string
	for _, l := range v.Lines {
		if l.Unpriced {
			parts = append(parts, l.Asset.Symbol+" not priced (the operator's "+policy.EnvUSDUnpriced+")")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s at $%s, feed %s round %s", l.Asset.Symbol, l.Price(), l.Round.Feed.Hex(), l.Round.RoundID))
	}
	return strings.Join(parts, "; ")
}

// Price is the line's price per whole unit of its asset, in dollars.
func (l USDLine) Price() string {
	return policy.FormatAmount(l.Round.Answer, l.Round.Decimals)
}

// settleUSD gives actual its USD entry: what moved valued at the rounds the
// reservation used, and never less than was reserved when something that
// moved was not valued then (a new asset, an unreadable one).
func (e *Engine) settleUSD(actual caps.Spend, v *USDValue, reserved caps.Spend) caps.Spend {
	if !e.usdCapped() {
		return actual
	}
	out := caps.Spend{}
	for a, x := range actual {
		out[a] = x
	}
	held := reserved[policy.USDAsset]
	if v == nil {
		if held != nil {
			atLeast(out, policy.USDAsset, held)
		}
		return out
	}
	rounds := map[common.Address]USDLine{}
	for _, l := range v.Lines {
		rounds[l.Asset.Address] = l
	}
	total := new(big.Int)
	for a, x := range actual {
		if a == policy.USDAsset || x == nil || x.Sign() <= 0 {
			continue
		}
		l, ok := rounds[a] // ETH's Asset.Address is policy.NativeAsset
		switch {
		case ok && l.Unpriced:
		case ok:
			total.Add(total, l.Round.USDValue(x, l.Asset.Decimals, policy.USDDecimals))
		default:
			if held != nil {
				atLeast(out, policy.USDAsset, held)
			}
			return out
		}
	}
	atLeast(out, policy.USDAsset, total)
	return out
}

// priceSignature values a signature plan's spend in one round trip of its
// own (a signature's checks make no batch the prices could ride in): at the
// preview it sets p.Spend and p.USD; at the confirm (again) it values it at
// the confirm's prices, refusing PRICE_MOVED as a transaction's confirm
// does, and the reservation takes that spend.
func (e *Engine) priceSignature(ctx context.Context, p *Plan, again bool) *Refusal {
	if !e.usdCapped() {
		return nil
	}
	pr, now, ref := e.readPrices(ctx)
	if ref != nil {
		return ref
	}
	var (
		spend caps.Spend
		v     *USDValue
	)
	if again {
		spend, v, ref = e.repriced(p, pr, now)
	} else {
		spend, v, ref = e.priced(p.Spend, pr, now)
	}
	if ref != nil {
		return ref
	}
	p.Spend = spend
	if !again {
		p.USD = v
	}
	return nil
}
