package devnet_test

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/testdata"
)

func TestStartDeploysTokensAtFixedAddresses(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })

	// The CREATE addresses of the dev account at nonces 0 and 1.
	require.Equal(t, common.HexToAddress("0x412c113686C5eC57D6DC7A01d0499e93Cc9E8dcC"), d.Contracts.USDT)
	require.Equal(t, common.HexToAddress("0x724E69488a4fbd92D7ef62c614229104D4CeF976"), d.Contracts.DAI)

	id, err := d.Client().ChainID(context.Background())
	require.NoError(t, err)
	require.Equal(t, big.NewInt(devnet.ChainID), id)

	code, err := d.Client().CodeAt(context.Background(), d.Contracts.USDT, nil)
	require.NoError(t, err)
	require.NotEmpty(t, code)
	require.Equal(t, signer.DevAddress, common.HexToAddress("0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c"))
}

// The dev chain's USD Coin look-alike: the name and version real USDC's
// EIP-712 domain uses, 6 decimals, EIP-2612 and EIP-3009, the dev account
// holding DevUSDC of it, at the address policy's known-token table lists.
func TestStartDeploysAUSDCLikeToken(t *testing.T) {
	ctx := context.Background()
	d, err := devnet.Start(ctx, devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })

	known, ok := policy.TokenBySymbol(devnet.ChainID, "USDC")
	require.True(t, ok)
	require.Equal(t, known.Address, d.Contracts.USDC)
	abiJSON, _, err := testdata.Contract("PermitToken")
	require.NoError(t, err)
	parsed, err := abi.JSON(strings.NewReader(abiJSON))
	require.NoError(t, err)
	read := func(method string, args ...any) []any {
		data, err := parsed.Pack(method, args...)
		require.NoError(t, err)
		out, err := d.Client().CallContract(ctx, ethereum.CallMsg{To: &d.Contracts.USDC, Data: data}, nil)
		require.NoError(t, err)
		vals, err := parsed.Unpack(method, out)
		require.NoError(t, err)
		return vals
	}
	require.Equal(t, "USD Coin", read("name")[0])
	require.Equal(t, "2", read("version")[0])
	require.Equal(t, "USDC", read("symbol")[0])
	require.Equal(t, uint8(6), read("decimals")[0])
	require.Equal(t, devnet.DevUSDC, read("balanceOf", signer.DevAddress)[0])
	require.Equal(t, uint64(2+len(devnet.FeedAssets)), mustNonce(t, d, signer.DevFacilitatorAddress), "the facilitator deployed it, minted the dev account's USDC, then deployed the price feeds")
}

func mustNonce(t *testing.T, d *devnet.Devnet, a common.Address) uint64 {
	t.Helper()
	n, err := d.Client().NonceAt(context.Background(), a, nil)
	require.NoError(t, err)
	return n
}

func TestHTTPOnlyOnLoopback(t *testing.T) {
	_, err := devnet.Start(context.Background(), devnet.Options{HTTPAddr: "0.0.0.0:0"})
	require.ErrorContains(t, err, "only loopback")
}

func TestMinesEveryTransactionAndAdjustsTime(t *testing.T) {
	ctx := context.Background()
	d, err := devnet.Start(ctx, devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })

	// Twenty transactions fired without waiting are all mined.
	dev := signer.Dev()
	nonce, err := d.Client().PendingNonceAt(ctx, dev.Address())
	require.NoError(t, err)
	to := common.HexToAddress("0x00000000000000000000000000000000000000e1")
	var hashes []common.Hash
	for i := uint64(0); i < 20; i++ {
		tx := types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(devnet.ChainID), Nonce: nonce + i, GasTipCap: big.NewInt(1e9),
			GasFeeCap: big.NewInt(20e9), Gas: 21000, To: &to, Value: big.NewInt(1)})
		signed, err := dev.SignTx(tx, big.NewInt(devnet.ChainID))
		require.NoError(t, err)
		require.NoError(t, d.Client().SendTransaction(ctx, signed))
		hashes = append(hashes, signed.Hash())
	}
	for _, h := range hashes {
		rcpt, err := d.WaitReceipt(ctx, h)
		require.NoError(t, err)
		require.Equal(t, uint64(1), rcpt.Status)
	}
	bal, err := d.Client().BalanceAt(ctx, to, nil)
	require.NoError(t, err)
	require.Equal(t, big.NewInt(20), bal)

	before, err := d.Client().HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, d.AdjustTime(time.Hour))
	after, err := d.Client().HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	require.GreaterOrEqual(t, after.Time, before.Time+3600)
}

// A dev chain's id is a local dev chain id: any other would make walletgate
// (and the public dev key) take it for a real network.
func TestDevnetRefusesANetworksChainID(t *testing.T) {
	for _, id := range []uint64{1, 8453, 11155111, 4242} {
		_, err := devnet.Start(context.Background(), devnet.Options{ChainID: id})
		require.ErrorContains(t, err, "not a local dev chain id")
		require.ErrorContains(t, err, "1337 or 31337")
	}
}

// The dev chain's Chainlink price feeds: MockV3Aggregator from
// @chainlink/contracts at their fixed addresses, 8 decimals, ETH at $3,000 and
// the stablecoins at $1, and tests can move a price and age a round.
func TestStartDeploysPriceFeeds(t *testing.T) {
	ctx := context.Background()
	d, err := devnet.Start(ctx, devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })

	abiJSON, _, err := testdata.Contract("MockV3Aggregator")
	require.NoError(t, err)
	parsed, err := abi.JSON(strings.NewReader(abiJSON))
	require.NoError(t, err)
	read := func(feed common.Address, method string) []any {
		data, err := parsed.Pack(method)
		require.NoError(t, err)
		out, err := d.Client().CallContract(ctx, ethereum.CallMsg{To: &feed, Data: data}, nil)
		require.NoError(t, err)
		vals, err := parsed.Unpack(method, out)
		require.NoError(t, err)
		return vals
	}
	require.Len(t, d.Contracts.PriceFeeds, 4)
	for asset, want := range map[string]int64{"ETH": 3_000_00000000, "USDC": 1_00000000, "USDT": 1_00000000, "DAI": 1_00000000} {
		feed := d.Contracts.PriceFeeds[asset]
		fixed, ok := devnet.FeedAddress(asset)
		require.True(t, ok, asset)
		require.Equal(t, fixed, feed, asset)
		pinned, ok := policy.PinnedFeed(devnet.ChainID, asset)
		require.True(t, ok, asset)
		require.Equal(t, fixed, pinned.Feed, "policy pins the dev chain's %s/USD feed at its fixed address", asset)
		require.Equal(t, uint8(8), read(feed, "decimals")[0], asset)
		round := read(feed, "latestRoundData")
		require.Equal(t, big.NewInt(1), round[0], asset)
		require.Equal(t, big.NewInt(want), round[1], asset)
		require.NotZero(t, round[3].(*big.Int).Sign(), "%s: updatedAt", asset)
	}
	require.Equal(t, common.Address{}, d.Contracts.SequencerUptimeFeed, "only an OP-stack dev chain has a sequencer feed")

	require.NoError(t, d.SetPrice(ctx, "ETH", big.NewInt(2_500_00000000)))
	round := read(d.Contracts.PriceFeeds["ETH"], "latestRoundData")
	require.Equal(t, big.NewInt(2), round[0])
	require.Equal(t, big.NewInt(2_500_00000000), round[1])

	require.NoError(t, d.SetRound(ctx, "USDT", 7, big.NewInt(-1), 1_000, 999))
	round = read(d.Contracts.PriceFeeds["USDT"], "latestRoundData")
	require.Equal(t, big.NewInt(7), round[0])
	require.Equal(t, big.NewInt(-1), round[1])
	require.Equal(t, big.NewInt(999), round[2])
	require.Equal(t, big.NewInt(1_000), round[3])
	require.Error(t, d.SetPrice(ctx, "WBTC", big.NewInt(1)))
}
