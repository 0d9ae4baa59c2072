package uniswap_test

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain/uniswap"
)

func TestMinOutRounding(t *testing.T) {
	cases := []struct {
		name      string
		quoted    int64
		bps       uint32
		want      int64
		floorForm int64 // A*(10000-bps)/10000, floored: what a naive formula gives
	}{
		{"divides evenly", 10_000, 50, 9_950, 9_950},
		{"does not divide: one above the floored form", 9_999, 50, 9_950, 9_949},
		{"zero slippage", 12_345, 0, 12_345, 12_345},
		{"tiny amount", 1, 50, 1, 0},
		{"max slippage", 1_000_001, 1000, 900_001, 900_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := uniswap.MinOut(big.NewInt(c.quoted), c.bps)
			require.Zero(t, got.Cmp(big.NewInt(c.want)), "got %s", got)
			floor := new(big.Int).Mul(big.NewInt(c.quoted), big.NewInt(int64(10_000-c.bps)))
			floor.Quo(floor, big.NewInt(10_000))
			require.Zero(t, floor.Cmp(big.NewInt(c.floorForm)), "floored form %s", floor)
		})
	}
}
