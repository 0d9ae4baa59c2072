package engine

import (
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/policy"
)

// usdEngine is an engine whose ledger caps USD at $100 a day, pricing ETH
// and one token from views as a batch would leave them.
func usdEngine(t *testing.T, pricing *Pricing) *Engine {
	t.Helper()
	lim := map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18), policy.USDAsset: big.NewInt(100_00000000)}
	return &Engine{chainID: big.NewInt(1337), pricing: pricing,
		ledger: caps.NewLedger(caps.Limits{PerTx: lim, PerSession: lim, PerDay: lim}, false, time.Now)}
}

// answered is a priceRead whose views answered round, decimals 8.
func answered(feeds []common.Address, rounds [][5]int64) (*priceRead, []common.Address) {
	pr := &priceRead{}
	for i, f := range feeds {
		v := chain.PriceViews(f)
		word := func(x int64) []byte { return common.LeftPadBytes(big.NewInt(x).Bytes(), 32) }
		var ret []byte
		for _, x := range rounds[i] {
			b := word(x)
			if x < 0 {
				b = common.LeftPadBytes(new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(x)).Bytes(), 32)
			}
			ret = append(ret, b...)
		}
		v[0].Return, v[1].Return = ret, word(8)
		pr.views = append(pr.views, v)
	}
	return pr, feeds
}

// Fail closed: an asset without a feed, a stale or non-positive round and a
// sequencer that is down are each PRICE_UNAVAILABLE, never $0; a reservation
// reaching the caps without a USD entry is refused; the operator's unpriced
// asset is left out of the total, named.
func TestUSDFailsClosed(t *testing.T) {
	ethFeed, tokFeed := common.HexToAddress("0xfeed000000000000000000000000000000000001"), common.HexToAddress("0xfeed000000000000000000000000000000000002")
	usdt, _ := policy.TokenBySymbol(1337, "USDT")
	dai, _ := policy.TokenBySymbol(1337, "DAI")
	tok := usdt.Address
	now := int64(1_000_000)
	pricing := &Pricing{Feeds: map[common.Address]policy.PriceFeed{
		policy.NativeAsset: {Feed: ethFeed, Heartbeat: time.Hour}, tok: {Feed: tokFeed, Heartbeat: time.Hour}},
		Unpriced: map[common.Address]bool{}}
	e := usdEngine(t, pricing)
	read := func(eth, token [5]int64) *priceRead {
		pr, _ := answered([]common.Address{ethFeed, tokFeed}, [][5]int64{eth, token})
		pr.assets = []common.Address{policy.NativeAsset, tok}
		return pr
	}
	fresh := [5]int64{1, 3_000_00000000, now, now, 1}
	e.known = nil
	// 0.02 ETH: $60.
	spend, v, ref := e.priced(caps.Spend{policy.NativeAsset: big.NewInt(2e16)}, read(fresh, fresh), uint64(now))
	require.Nil(t, ref)
	require.Equal(t, big.NewInt(60_00000000), spend[policy.USDAsset])
	require.Equal(t, big.NewInt(60_00000000), v.Total)

	for name, c := range map[string]struct {
		eth  [5]int64
		want string
	}{
		"stale":           {[5]int64{4, 3_000_00000000, now - 7200, now - 7200, 4}, "older than the feed's heartbeat"},
		"zero":            {[5]int64{5, 0, now, now, 5}, "not a positive price"},
		"negative":        {[5]int64{6, -1, now, now, 6}, "not a positive price"},
		"from the future": {[5]int64{7, 1, now + 60, now + 60, 7}, "after the chain's head"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, ref := e.priced(caps.Spend{policy.NativeAsset: big.NewInt(1)}, read(c.eth, fresh), uint64(now))
			require.NotNil(t, ref)
			require.Equal(t, CodePriceUnavailable, ref.Code)
			require.Contains(t, ref.Message, c.want)
			require.Contains(t, ref.Message, ethFeed.Hex())
		})
	}
	other := dai.Address
	_, _, ref = e.priced(caps.Spend{other: big.NewInt(1)}, read(fresh, fresh), uint64(now))
	require.Equal(t, CodePriceUnavailable, ref.Code, "a token with no feed is never $0")
	require.Contains(t, ref.Message, "no USD price feed")

	pricing.Unpriced[other] = true
	spend, v, ref = e.priced(caps.Spend{other: big.NewInt(1), policy.NativeAsset: big.NewInt(2e16)}, read(fresh, fresh), uint64(now))
	require.Nil(t, ref)
	require.Equal(t, big.NewInt(60_00000000), spend[policy.USDAsset], "the unpriced token is left out of the total")
	require.Len(t, v.Lines, 2)

	seq := common.HexToAddress("0xfeed000000000000000000000000000000000003")
	pricing.Sequencer, pricing.Grace = &seq, time.Hour
	pr := read(fresh, fresh)
	s, _ := answered([]common.Address{seq}, [][5]int64{{2, 1, now - 10, now - 10, 2}})
	pr.seq = &s.views[0]
	_, _, ref = e.priced(caps.Spend{policy.NativeAsset: big.NewInt(1)}, pr, uint64(now))
	require.Equal(t, CodePriceUnavailable, ref.Code)
	require.Contains(t, ref.Message, "sequencer is down")
	pricing.Sequencer = nil

	require.NotNil(t, e.usdGuard(caps.Spend{policy.NativeAsset: big.NewInt(1)}), "a spend that skipped pricing is refused")
	require.Nil(t, e.usdGuard(caps.Spend{policy.NativeAsset: big.NewInt(1), policy.USDAsset: big.NewInt(1)}))
	_, _, ref = (&Engine{chainID: big.NewInt(1), ledger: e.ledger}).priced(caps.Spend{policy.NativeAsset: big.NewInt(1)}, nil, uint64(now))
	require.Equal(t, CodePriceUnavailable, ref.Code, "USD capped with no feeds at all")
}

// Settlement values what moved at the reservation's rounds; what was not
// valued then keeps the reserved USD counted.
func TestUSDSettlesAtTheReservationsPrices(t *testing.T) {
	e := usdEngine(t, &Pricing{})
	r := chain.Round{RoundID: big.NewInt(1), Answer: big.NewInt(3_000_00000000), Decimals: 8}
	v := &USDValue{Total: big.NewInt(60_00000000), Lines: []USDLine{{Asset: ETH, Amount: big.NewInt(2e16), USD: big.NewInt(60_00000000), Round: r}}}
	reserved := caps.Spend{policy.NativeAsset: big.NewInt(2e16), policy.USDAsset: big.NewInt(60_00000000)}
	got := e.settleUSD(caps.Spend{policy.NativeAsset: big.NewInt(1e16)}, v, reserved)
	require.Equal(t, big.NewInt(30_00000000), got[policy.USDAsset], "0.01 ETH moved, at $3,000")
	tok := common.HexToAddress("0x00000000000000000000000000000000000070c1")
	got = e.settleUSD(caps.Spend{policy.NativeAsset: big.NewInt(1e16), tok: big.NewInt(5)}, v, reserved)
	require.Equal(t, big.NewInt(60_00000000), got[policy.USDAsset], "a token not valued at the reservation: the reserved USD stays")
	got = e.settleUSD(caps.Spend{policy.NativeAsset: big.NewInt(1)}, nil, reserved)
	require.Equal(t, big.NewInt(60_00000000), got[policy.USDAsset], "no rounds (a pending reservation found later): the reserved USD stays")
}
