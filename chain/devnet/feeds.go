package devnet

// The dev chain's Chainlink price feeds.
//
// Rules of this file:
//   - The feeds are Chainlink's own MockV3Aggregator, compiled from the npm
//     package @chainlink/contracts with the pinned solc (testdata/contracts/
//     compile.js), never a hand-written stand-in: walletgate reads them with
//     the same latestRoundData call it makes to a real feed.
//   - They are deployed by the dev facilitator account right after the USD
//     Coin look-alike (its nonces 2 to 5, in FeedAssets order), so their
//     addresses are fixed whether or not Uniswap is deployed, and policy can
//     pin them for the dev chain ids as it pins the real chains' feeds.
//   - Anyone may move a mock's price or age its round (updateAnswer,
//     updateRoundData): that is what tests do, through SetPrice and SetRound.

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/testdata"
)

// FeedDecimals is the number of decimals of every dev price feed (as
// Chainlink's USD feeds have).
const FeedDecimals = 8

// FeedAssets are the assets the dev chain has a USD price feed for, in the
// order they are deployed.
var FeedAssets = []string{"ETH", "USDC", "USDT", "DAI"}

// FeedPrices are the dev feeds' initial answers in units of 10^-FeedDecimals
// USD: ETH at $3,000, the stablecoins at $1.
var FeedPrices = map[string]*big.Int{
	"ETH":  big.NewInt(3_000_00000000),
	"USDC": big.NewInt(1_00000000),
	"USDT": big.NewInt(1_00000000),
	"DAI":  big.NewInt(1_00000000),
}

// feedNonce0 is the facilitator's nonce of the first feed deployment: after
// deploying USDC (0) and minting the dev account's (1).
const feedNonce0 = 2

// FeedAddress is the fixed address of the dev chain's USD price feed for
// asset (one of FeedAssets), and false for any other asset.
func FeedAddress(asset string) (common.Address, bool) {
	for i, a := range FeedAssets {
		if a == asset {
			return crypto.CreateAddress(signer.DevFacilitatorAddress, uint64(feedNonce0+i)), true
		}
	}
	return common.Address{}, false
}

// SequencerFeedAddress is the fixed address of an OP-stack dev chain's L2
// sequencer uptime feed (Contracts.SequencerUptimeFeed).
func SequencerFeedAddress() common.Address {
	return crypto.CreateAddress(signer.DevFacilitatorAddress, uint64(feedNonce0+len(FeedAssets)))
}

// deployFeeds deploys a MockV3Aggregator for each of FeedAssets from the dev
// facilitator at the fixed addresses FeedAddress names and, on an OP-stack
// chain, the sequencer uptime feed (answer 0: up since now).
func (d *Devnet) deployFeeds(ctx context.Context, opStack bool) error {
	f := signer.DevFacilitator()
	d.Contracts.PriceFeeds = make(map[string]common.Address, len(FeedAssets))
	for _, asset := range FeedAssets {
		addr, err := d.DeployAs(ctx, f, "MockV3Aggregator", uint8(FeedDecimals), FeedPrices[asset])
		if err != nil {
			return fmt.Errorf("dev chain: %s/USD feed: %w", asset, err)
		}
		if want, _ := FeedAddress(asset); addr != want {
			return fmt.Errorf("dev chain: %s/USD feed deployed at %s, not at its fixed address %s (the facilitator's nonce moved)", asset, addr.Hex(), want.Hex())
		}
		d.Contracts.PriceFeeds[asset] = addr
	}
	if !opStack {
		return nil
	}
	addr, err := d.DeployAs(ctx, f, "MockV3Aggregator", uint8(0), new(big.Int))
	if err != nil {
		return fmt.Errorf("dev chain: sequencer uptime feed: %w", err)
	}
	if addr != SequencerFeedAddress() {
		return fmt.Errorf("dev chain: sequencer uptime feed deployed at %s, not at its fixed address %s", addr.Hex(), SequencerFeedAddress().Hex())
	}
	d.Contracts.SequencerUptimeFeed = addr
	return nil
}

// SetSequencer reports the OP-stack dev chain's sequencer down (1) or up (0)
// since startedAt (a unix time), as Chainlink's uptime feed does.
func (d *Devnet) SetSequencer(ctx context.Context, up bool, startedAt uint64) error {
	if d.Contracts.SequencerUptimeFeed == (common.Address{}) {
		return fmt.Errorf("dev chain: no sequencer uptime feed (an --op-stack chain has one)")
	}
	status := big.NewInt(1)
	if up {
		status = new(big.Int)
	}
	return d.sendFeed(ctx, d.Contracts.SequencerUptimeFeed, "updateRoundData", big.NewInt(2), status,
		new(big.Int).SetUint64(startedAt), new(big.Int).SetUint64(startedAt))
}

// SetPrice starts a new round of asset's feed with answer (units of
// 10^-FeedDecimals USD) at the current block's time (updateAnswer).
func (d *Devnet) SetPrice(ctx context.Context, asset string, answer *big.Int) error {
	return d.callFeed(ctx, asset, "updateAnswer", answer)
}

// SetRound writes asset's latest round as given (updateRoundData): tests age
// a round by giving it an old updatedAt, or make an answer non-positive.
func (d *Devnet) SetRound(ctx context.Context, asset string, roundID uint64, answer *big.Int, updatedAt, startedAt uint64) error {
	return d.callFeed(ctx, asset, "updateRoundData", new(big.Int).SetUint64(roundID), answer,
		new(big.Int).SetUint64(updatedAt), new(big.Int).SetUint64(startedAt))
}

func (d *Devnet) callFeed(ctx context.Context, asset, method string, args ...any) error {
	feed, ok := d.Contracts.PriceFeeds[asset]
	if !ok {
		return fmt.Errorf("dev chain: no %s/USD feed (the feeds are %v)", asset, FeedAssets)
	}
	if err := d.sendFeed(ctx, feed, method, args...); err != nil {
		return fmt.Errorf("%s/USD: %w", asset, err)
	}
	return nil
}

func (d *Devnet) sendFeed(ctx context.Context, feed common.Address, method string, args ...any) error {
	abiJSON, _, err := testdata.Contract("MockV3Aggregator")
	if err != nil {
		return fmt.Errorf("dev chain: %w", err)
	}
	parsed, err := abi.JSON(strings.NewReader(abiJSON))
	if err != nil {
		return fmt.Errorf("dev chain: MockV3Aggregator abi: %w", err)
	}
	data, err := parsed.Pack(method, args...)
	if err != nil {
		return fmt.Errorf("dev chain: feed %s %s: %w", feed.Hex(), method, err)
	}
	if _, err := d.SendAs(ctx, signer.DevFacilitator(), &feed, nil, data, 1_000_000); err != nil {
		return fmt.Errorf("dev chain: feed %s %s: %w", feed.Hex(), method, err)
	}
	return nil
}
