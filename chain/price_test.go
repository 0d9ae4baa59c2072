package chain_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/signer"
)

// A price is read from the dev chain's Chainlink mock as views riding in one
// StateAndViews batch, and judged against the head read with it: a fresh
// positive round passes; an aged round, a non-positive answer and a round
// from the future are refused naming feed, round and age; an address that is
// not a feed is refused.
func TestPricesReadOnChainAndJudged(t *testing.T) {
	ctx := context.Background()
	d := startDevnet(t, devnet.Options{})
	c := inProcess(t, d)
	read := func(asset string) (chain.Round, uint64) {
		t.Helper()
		v := chain.PriceViews(d.Contracts.PriceFeeds[asset])
		st, err := c.StateAndViews(ctx, signer.DevAddress, v[0], v[1])
		require.NoError(t, err)
		r, err := chain.ReadRound(v)
		require.NoError(t, err)
		return r, st.Head.Time
	}
	eth, now := read("ETH")
	require.Equal(t, big.NewInt(3_000_00000000), eth.Answer)
	require.Equal(t, uint8(8), eth.Decimals)
	require.NoError(t, eth.Fresh(now, time.Hour, 0))
	// 0.02 ETH is $60; 30 USDC (6 decimals) is $30, in 10^-8 USD.
	require.Equal(t, big.NewInt(60_00000000), eth.USDValue(big.NewInt(2e16), 18, 8))
	usdc, _ := read("USDC")
	require.Equal(t, big.NewInt(30_00000000), usdc.USDValue(big.NewInt(30_000_000), 6, 8))
	require.Equal(t, big.NewInt(1), eth.USDValue(big.NewInt(1), 18, 8), "1 wei is rounded up, never down to $0")

	// Aged past its heartbeat.
	require.NoError(t, d.SetRound(ctx, "ETH", 9, big.NewInt(3_000_00000000), now-2*3600, now-2*3600))
	eth, now = read("ETH")
	err := eth.Fresh(now, time.Hour, 2*time.Minute)
	var pe *chain.PriceError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, d.Contracts.PriceFeeds["ETH"], pe.Feed)
	require.Equal(t, big.NewInt(9), pe.RoundID)
	require.GreaterOrEqual(t, pe.Age, 2*time.Hour)
	require.Contains(t, err.Error(), "round 9")
	require.Contains(t, err.Error(), d.Contracts.PriceFeeds["ETH"].Hex())

	// Non-positive answers.
	for _, answer := range []int64{0, -1} {
		require.NoError(t, d.SetRound(ctx, "USDT", 3, big.NewInt(answer), now, now))
		usdt, at := read("USDT")
		require.ErrorAs(t, usdt.Fresh(at, time.Hour, 0), &pe, "answer %d", answer)
		require.Contains(t, pe.Reason, "not a positive price")
	}
	// A round from after the head.
	require.NoError(t, d.SetRound(ctx, "DAI", 4, big.NewInt(1_00000000), now+3600, now+3600))
	dai, at := read("DAI")
	require.ErrorAs(t, dai.Fresh(at, time.Hour, 0), &pe)

	// Not a feed: the USDT token answers neither call as a feed does.
	v := chain.PriceViews(d.Contracts.USDT)
	_, err = c.StateAndViews(ctx, signer.DevAddress, v[0], v[1])
	require.NoError(t, err)
	_, err = chain.ReadRound(v)
	require.ErrorAs(t, err, &pe)
}

// The L2 sequencer check: up long enough passes; down, or up within the
// grace period, is refused.
func TestSequencerUptimeJudged(t *testing.T) {
	feed := chain.Round{RoundID: big.NewInt(1), Answer: big.NewInt(0), StartedAt: 1_000}
	require.NoError(t, feed.SequencerUp(1_000+3600, time.Hour))
	var pe *chain.PriceError
	require.ErrorAs(t, feed.SequencerUp(1_000+60, time.Hour), &pe)
	require.Contains(t, pe.Reason, "grace period")
	down := feed
	down.Answer = big.NewInt(1)
	require.ErrorAs(t, down.SequencerUp(1_000+7200, time.Hour), &pe)
	require.Contains(t, pe.Reason, "down")
}
