package policy

import (
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

func TestParsePriceFeeds(t *testing.T) {
	feed := "0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419"
	got, err := ParsePriceFeeds("ETH=" + feed + "/24h, base:usdc=" + feed + ",WETH=" + feed[:2] + "5f4ec3df9cbd43714fe2740f5e3616155c5b8419" + "/1h")
	require.Error(t, err, "WETH is ETH: a second feed for it on the default chain")
	got, err = ParsePriceFeeds("ETH=" + feed + "/24h, base:usdc=" + feed)
	require.NoError(t, err)
	require.Equal(t, []PriceFeed{
		{Asset: "ETH", Feed: common.HexToAddress(feed), Heartbeat: 24 * time.Hour},
		{Asset: "USDC", Feed: common.HexToAddress(feed), Heartbeat: DefaultHeartbeat, Chain: 8453},
	}, got)

	for name, bad := range map[string]string{
		"empty item":      "ETH=" + feed + ",",
		"no equals":       "ETH",
		"bad address":     "ETH=0x1234",
		"bad checksum":    "ETH=0x5F4eC3Df9cbd43714FE2740f5E3616155c5b8419",
		"zero address":    "ETH=0x0000000000000000000000000000000000000000",
		"bad heartbeat":   "ETH=" + feed + "/soon",
		"short heartbeat": "ETH=" + feed + "/1s",
		"unknown chain":   "mars:ETH=" + feed,
		"usd":             "USD=" + feed,
		"repeat":          "DAI=" + feed + ",dai=" + feed,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParsePriceFeeds(bad)
			var pe *PriceListError
			require.ErrorAs(t, err, &pe, bad)
		})
	}
}

func TestParseUnpriced(t *testing.T) {
	got, err := ParseUnpriced("DAI, base:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
	require.NoError(t, err)
	require.Equal(t, []CapEntry{{Asset: "DAI"}, {Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", Chain: 8453}}, got)
	for _, bad := range []string{"DAI,", "USD", "mars:DAI", "0x1234"} {
		_, err := ParseUnpriced(bad)
		require.Error(t, err, bad)
	}
}

// Every chain the issue names pins ETH/USD and the stablecoins, except Base
// (see pinnedFeeds: not confirmable in Chainlink's registries); the L2s have
// their sequencer feeds; WETH is priced as ETH; an operator's feed overrides
// a pinned one on its chain only.
func TestPinnedFeeds(t *testing.T) {
	for _, id := range []uint64{1, 10, 42161, 137, 1337, 31337} {
		for _, asset := range []string{"ETH", "USDC", "USDT", "DAI"} {
			f, ok := PinnedFeed(id, asset)
			require.True(t, ok, "%d %s", id, asset)
			require.NotEqual(t, common.Address{}, f.Feed)
			require.True(t, f.Pinned)
		}
	}
	_, ok := PinnedFeed(8453, "ETH")
	require.False(t, ok, "Base's feeds are not pinned")
	weth, _ := PinnedFeed(1, "WETH")
	eth, _ := PinnedFeed(1, "ETH")
	require.Equal(t, eth, weth)
	for _, id := range []uint64{10, 8453, 42161} {
		_, ok := SequencerFeed(id)
		require.True(t, ok, id)
	}
	_, ok = SequencerFeed(1)
	require.False(t, ok)

	mine := common.HexToAddress("0x00000000000000000000000000000000000f33d1")
	feeds := FeedsFor(1, 1, []PriceFeed{{Asset: "ETH", Feed: mine, Heartbeat: time.Minute}, {Asset: "ETH", Feed: mine, Chain: 8453, Heartbeat: time.Hour}})
	require.Equal(t, mine, feeds["ETH"].Feed)
	require.False(t, feeds["ETH"].Pinned)
	require.Equal(t, eth.Feed, FeedsFor(1, 8453, []PriceFeed{{Asset: "ETH", Feed: mine}})["ETH"].Feed, "an unprefixed item is the default chain's")
	require.Equal(t, mine, FeedsFor(8453, 1, []PriceFeed{{Asset: "ETH", Feed: mine, Chain: 8453}})["ETH"].Feed)
}

// USD is an asset of every cap list: any case, with a chain prefix, unlimited,
// resolved to USDAsset in 10^-8 dollars; the address standing for it is
// refused; the window rule holds for it as for any asset.
func TestUSDInCapLists(t *testing.T) {
	entries, err := ParseCapList("ETH=0.1, usd=100, base:USD=unlimited")
	require.NoError(t, err)
	require.Equal(t, []CapEntry{{"ETH", "0.1", 0}, {"USD", "100", 0}, {"USD", Unlimited, 8453}}, entries)
	m, err := ResolveCapList(entries[:2], 1337, nil)
	require.NoError(t, err)
	require.Equal(t, "10000000000", m[USDAsset].String(), "$100 in 10^-8 dollars")
	require.Equal(t, "USD", assetLabel(USDAsset, 1))

	_, err = ParseCapList("0x0000000000000000000000000000000000000348=5")
	require.ErrorContains(t, err, "write USD")
	_, err = ParseCapList("USD=0.000000001")
	require.NoError(t, err, "syntax only")
	_, err = ResolveCapList([]CapEntry{{Asset: "USD", Amount: "0.000000001"}}, 1, nil)
	require.Error(t, err, "more decimals than USD keeps (8)")

	_, err = ResolveCapWindows([3][]CapEntry{{{Asset: "USD", Amount: "10"}}, nil, nil}, [3]string{"ETH=1", "ETH=1", "ETH=1"}, 1337, nil)
	var we *CapWindowsError
	require.ErrorAs(t, err, &we, "USD in one window only breaks the window rule")
	require.Equal(t, "USD", we.Assets[len(we.Assets)-1].Asset)
}
