package policy

// Price feeds: which Chainlink feed prices an asset in USD on a chain.
//
// Rules of this file:
//   - Feeds are pinned per chain in pinnedFeeds, each from Chainlink's own
//     registries (see the comment on the table); an address that could not
//     be confirmed there is left out, never guessed. A chain or asset with no
//     pinned feed has none until the operator names one.
//   - A price list (WALLETGATE_PRICE_FEEDS) adds or overrides feeds:
//     comma-separated ASSET=0xFEED items, each optionally with a chain
//     prefix as in cap lists ("base:ETH=0x…"), optionally with the feed's
//     heartbeat after a slash ("ETH=0x…/1h"). Without one an operator's feed
//     gets DefaultHeartbeat.
//   - An unpriced list (WALLETGATE_USD_UNPRICED) names assets the operator
//     accepts having no USD price: they are bounded by their own caps only.
//   - WETH is priced as ETH.
//   - Parsing is syntax and addresses only; reading and judging a round is
//     chain's (chain/price.go).

import (
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// USDAsset is the key of the USD windows in cap maps: 0x…0348 (840, the ISO
// 4217 number of the US dollar), the address Chainlink's Denominations
// library gives USD. No ERC-20 can be deployed there.
var USDAsset = common.HexToAddress("0x0000000000000000000000000000000000000348")

// USDSymbol is how cap lists and results name the USD windows.
const USDSymbol = "USD"

// USDDecimals is the precision USD amounts are kept in (base units of
// 10^-8 dollars, as Chainlink's USD feeds answer).
const USDDecimals = 8

// DefaultHeartbeat is the heartbeat of a feed whose heartbeat is not known:
// its latest round may be at most this old (plus HeartbeatMargin).
const DefaultHeartbeat = time.Hour

// HeartbeatMargin is allowed beyond a feed's heartbeat: a round is written
// on chain some time after the heartbeat elapses (Chainlink's docs: about
// 40 seconds under congestion).
const HeartbeatMargin = 2 * time.Minute

// SequencerGracePeriod is how long after an L2 sequencer comes back up its
// chain's prices are still refused (Chainlink's example uses one hour).
const SequencerGracePeriod = time.Hour

// MaxPriceFeeds is the most items a price list may have.
const MaxPriceFeeds = 64

// PriceFeed is the Chainlink feed that prices one asset in USD on one chain.
type PriceFeed struct {
	Asset     string         // ETH or a token symbol or address (EIP-55), as cap lists name it
	Feed      common.Address // the feed's proxy: latestRoundData is read here
	Heartbeat time.Duration  // the longest a round may go unrefreshed
	Chain     uint64         // 0 in a parsed list: the default chain
	Pinned    bool           // from pinnedFeeds, not the operator
}

// pinnedFeeds are the USD feeds walletgate knows by chain. The mainnet
// addresses are the standard proxies listed both in Chainlink's
// hardhat-chainlink registry (src/registries/json/DataFeeds.json) and in
// the feed data of Chainlink's @chainlink/mcp-server package
// (data/feeds/*.json); Base is left out because the second lists two
// proxies for its ETH/USD, USDC/USD and USDT/USD and the first lists no
// Base at all. Heartbeats are not in either registry, so the pinned
// mainnet feeds get DefaultHeartbeat: a feed refreshed less often than
// hourly is refused (PRICE_UNAVAILABLE) until the operator names it with
// its heartbeat in WALLETGATE_PRICE_FEEDS. The dev chains' are the fixed
// addresses of walletgate-devnet's MockV3Aggregators (chain/devnet,
// feeds.go).
var pinnedFeeds = map[uint64]map[string]common.Address{
	1: {
		"ETH":  common.HexToAddress("0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419"),
		"USDC": common.HexToAddress("0x8fFfFfd4AfB6115b954Bd326cbe7B4BA576818f6"),
		"USDT": common.HexToAddress("0x3E7d1eAB13ad0104d2750B8863b489D65364e32D"),
		"DAI":  common.HexToAddress("0xAed0c38402a5d19df6E4c03F4E2DceD6e29c1ee9"),
	},
	10: {
		"ETH":  common.HexToAddress("0x13e3Ee699D1909E989722E753853AE30b17e08c5"),
		"USDC": common.HexToAddress("0x16a9FA2FDa030272Ce99B29CF780dFA30361E0f3"),
		"USDT": common.HexToAddress("0xECef79E109e997bCA29c1c0897ec9d7b03647F5E"),
		"DAI":  common.HexToAddress("0x8dBa75e83DA73cc766A7e5a0ee71F656BAb470d6"),
	},
	42161: {
		"ETH":  common.HexToAddress("0x639Fe6ab55C921f74e7fac1ee960C0B6293ba612"),
		"USDC": common.HexToAddress("0x50834F3163758fcC1Df9973b6e91f0F0F0434aD3"),
		"USDT": common.HexToAddress("0x3f3f5dF88dC9F13eac63DF89EC16ef6e7E25DdE7"),
		"DAI":  common.HexToAddress("0xc5C8E77B397E531B8EC06BFb0048328B30E9eCfB"),
	},
	137: {
		"ETH":  common.HexToAddress("0xF9680D99D6C9589e2a93a78A04A279e509205945"),
		"USDC": common.HexToAddress("0xfE4A8cc5b5B2366C1B58Bea3858e81843581b2F7"),
		"USDT": common.HexToAddress("0x0A6513e40db6EB1b165753AD52E80663aeA50545"),
		"DAI":  common.HexToAddress("0x4746DeC9e833A82EC7C2C1356372CcF2cfcD2F3D"),
	},
	1337:  devFeeds,
	31337: devFeeds,
}

// devFeeds are walletgate-devnet's MockV3Aggregators: CREATE addresses of
// the dev facilitator at its nonces 2 to 5 (chain/devnet.FeedAddress).
var devFeeds = map[string]common.Address{
	"ETH":  common.HexToAddress("0x4E7d178136A82284525517f1c375dC63dBfdC468"),
	"USDC": common.HexToAddress("0xE0083793D0526d773f608DF22F6F9dDd030dc3e1"),
	"USDT": common.HexToAddress("0x671DEbeb84b6668555a67D8637d3A9A2EE78Ebc9"),
	"DAI":  common.HexToAddress("0xfbfA5b3D9303dbB91db2cD06204599AD877C52eF"),
}

// sequencerFeeds are Chainlink's L2 sequencer uptime feeds, from Chainlink's
// documentation (src/content/data-feeds/l2-sequencer-feeds.mdx, "Available
// networks").
var sequencerFeeds = map[uint64]common.Address{
	42161: common.HexToAddress("0xFdB631F5EE196F0ed6FAa767959853A9F217697D"),
	10:    common.HexToAddress("0x371EAD81c9102C9BF4874A9075FFFf170F2Ee389"),
	8453:  common.HexToAddress("0xBCF85224fc0756B9Fa45aA7892530B47e10b6433"),
}

// PinnedFeed is the pinned USD feed of asset (ETH, WETH, or a symbol as
// cap lists write it) on chainID, and false when walletgate pins none.
func PinnedFeed(chainID uint64, asset string) (PriceFeed, bool) {
	if asset == "WETH" {
		asset = NativeSymbol
	}
	a, ok := pinnedFeeds[chainID][asset]
	if !ok {
		return PriceFeed{}, false
	}
	return PriceFeed{Asset: asset, Feed: a, Heartbeat: DefaultHeartbeat, Chain: chainID, Pinned: true}, true
}

// SequencerFeed is the L2 sequencer uptime feed of chainID (OP, Base,
// Arbitrum), and false on a chain that has none.
func SequencerFeed(chainID uint64) (common.Address, bool) {
	a, ok := sequencerFeeds[chainID]
	return a, ok
}

// PriceListError reports a price list item that was refused, with the
// reason and the expected form.
type PriceListError struct {
	Item   string
	Reason string
}

// Error returns `price list item "<item>": <reason>`.
func (e *PriceListError) Error() string {
	if e.Item == "" {
		return "price list: " + e.Reason
	}
	return `price list item "` + e.Item + `": ` + e.Reason
}

const priceListExample = "expected comma-separated ASSET=0xFEED items, optionally CHAIN:ASSET=0xFEED and /HEARTBEAT, like ETH=0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419/1h,base:USDC=0x…"

// ParsePriceFeeds parses a price list (see the rules at the top of this
// file). The empty string is the empty list.
func ParsePriceFeeds(s string) ([]PriceFeed, error) {
	if s == "" {
		return nil, nil
	}
	items := strings.Split(s, ",")
	if len(items) > MaxPriceFeeds {
		return nil, &PriceListError{Reason: fmt.Sprintf("has %d items; the limit is %d", len(items), MaxPriceFeeds)}
	}
	out := make([]PriceFeed, 0, len(items))
	seen := map[string]bool{}
	for _, raw := range items {
		item := trimSpaceTab(raw)
		bad := func(reason string) error {
			return &PriceListError{Item: display(item, maxDisplay), Reason: reason}
		}
		if item == "" {
			return nil, bad("is empty (two commas in a row, or a comma at an end); " + priceListExample)
		}
		chainID, asset, feed, err := splitChainItem(item)
		if err != nil {
			return nil, bad(err.Error() + "; " + priceListExample)
		}
		canonical, cerr := parseCapAsset(item, asset)
		if cerr != nil {
			return nil, bad(cerr.(*CapListError).Reason)
		}
		switch canonical {
		case "WETH":
			canonical = NativeSymbol
		case USDSymbol:
			return nil, bad("names USD, which is what feeds price in, not an asset to price")
		}
		heartbeat := DefaultHeartbeat
		if f, hb, ok := strings.Cut(feed, "/"); ok {
			d, err := time.ParseDuration(trimSpaceTab(hb))
			if err != nil || d < time.Minute || d > 7*24*time.Hour {
				return nil, bad("has the heartbeat \"" + display(hb, maxDisplay) + "\"; expected a Go duration between 1m and 168h, like 1h or 24h")
			}
			feed, heartbeat = trimSpaceTab(f), d
		}
		addr, aerr := ParseAddress(feed)
		if aerr != nil {
			return nil, bad("has a bad feed address: " + aerr.(*AddressError).Reason)
		}
		if addr == (common.Address{}) {
			return nil, bad("names the zero address as a feed")
		}
		key := fmt.Sprintf("%d:%s", chainID, canonical)
		if seen[key] {
			return nil, bad("names a second feed for " + canonical + "; give each asset one feed per chain")
		}
		seen[key] = true
		out = append(out, PriceFeed{Asset: canonical, Feed: addr, Heartbeat: heartbeat, Chain: chainID})
	}
	return out, nil
}

// ParseUnpriced parses an unpriced list: comma-separated assets as cap lists
// name them, each optionally with a chain prefix.
func ParseUnpriced(s string) ([]CapEntry, error) {
	if s == "" {
		return nil, nil
	}
	items := strings.Split(s, ",")
	if len(items) > MaxCapEntries {
		return nil, &PriceListError{Reason: fmt.Sprintf("has %d items; the limit is %d", len(items), MaxCapEntries)}
	}
	out := make([]CapEntry, 0, len(items))
	for _, raw := range items {
		item := trimSpaceTab(raw)
		if item == "" {
			return nil, &PriceListError{Item: display(raw, maxDisplay), Reason: "is empty; expected comma-separated assets, like DAI,base:0x…"}
		}
		var chainID uint64
		asset := item
		if prefix, rest, ok := strings.Cut(item, ":"); ok {
			id, known := ParseNetwork(trimSpaceTab(prefix))
			if !known {
				return nil, &PriceListError{Item: display(item, maxDisplay), Reason: "names a chain that is neither a chain id nor a known name"}
			}
			chainID, asset = id, trimSpaceTab(rest)
		}
		canonical, err := parseCapAsset(item, asset)
		if err != nil {
			return nil, &PriceListError{Item: display(item, maxDisplay), Reason: err.(*CapListError).Reason}
		}
		if canonical == USDSymbol {
			return nil, &PriceListError{Item: display(item, maxDisplay), Reason: "names USD, which needs no price"}
		}
		out = append(out, CapEntry{Asset: canonical, Chain: chainID})
	}
	return out, nil
}

// splitChainItem splits "[CHAIN:]ASSET=VALUE".
func splitChainItem(item string) (uint64, string, string, error) {
	asset, value, ok := strings.Cut(item, "=")
	if !ok {
		return 0, "", "", fmt.Errorf("has no '='")
	}
	asset, value = trimSpaceTab(asset), trimSpaceTab(value)
	var chainID uint64
	if prefix, rest, ok := strings.Cut(asset, ":"); ok {
		id, known := ParseNetwork(trimSpaceTab(prefix))
		if !known {
			return 0, "", "", fmt.Errorf("names the chain \"%s\", which is neither a chain id nor a known name (%s)", display(trimSpaceTab(prefix), maxDisplay), strings.Join(NetworkNames(), ", "))
		}
		chainID, asset = id, trimSpaceTab(rest)
	}
	return chainID, asset, value, nil
}

// FeedsFor are the USD feeds in force on chainID (defaultChain: the chain
// unprefixed items belong to): the pinned ones, overridden or added to by
// the operator's list.
func FeedsFor(chainID, defaultChain uint64, operator []PriceFeed) map[string]PriceFeed {
	out := map[string]PriceFeed{}
	for asset := range pinnedFeeds[chainID] {
		out[asset], _ = PinnedFeed(chainID, asset)
	}
	for _, f := range operator {
		c := f.Chain
		if c == 0 {
			c = defaultChain
		}
		if c != chainID {
			continue
		}
		f.Chain = chainID
		out[f.Asset] = f
	}
	return out
}
