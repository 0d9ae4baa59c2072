package caps

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// Hosts compare the caps in force by their canonical form: the same limits
// built in any order are equal; any cap that differs is listed, in the
// asset's units, with unlimited for a window that does not cap it.
func TestCanonicalCapsCompare(t *testing.T) {
	dec := func(a common.Address) uint8 {
		if a == usdc {
			return 6
		}
		return 18
	}
	a := Limits{PerTx: capsOf(eth, 10, usdc, 25), PerSession: capsOf(eth, 50, usdc, 100), PerDay: capsOf(usdc, 200, eth, 50)}
	same := Limits{PerDay: capsOf(eth, 50, usdc, 200), PerSession: capsOf(usdc, 100, eth, 50), PerTx: capsOf(usdc, 25, eth, 10)}
	require.Equal(t, Canonical(a, false, dec), Canonical(same, false, dec))
	require.NoError(t, Compare(Canonical(a, false, dec), Canonical(same, false, dec), "db"))

	b := Limits{PerTx: capsOf(eth, 10, usdc, 25), PerSession: capsOf(eth, 50), PerDay: capsOf(usdc, 200, eth, 1_000_000_000_000_000_000)}
	err := Compare(Canonical(a, false, dec), Canonical(b, true, dec), "postgres://db:5432/w")
	var me *MismatchError
	require.ErrorAs(t, err, &me)
	require.Equal(t, []LimitDiff{
		{Window: PerSession, Asset: usdc, Theirs: big.NewInt(100), Ours: nil, Decimals: 6},
		{Window: PerDay, Asset: eth, Theirs: big.NewInt(50), Ours: big.NewInt(1_000_000_000_000_000_000), Decimals: 18},
	}, me.Diffs)
	require.True(t, me.Uncapped)
	require.False(t, me.TheirsUncapped)
	require.Equal(t, "this host's caps differ from the caps in force for the wallet in the shared state postgres://db:5432/w: "+
		"per session token 0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48: 0.0001 there, unlimited here; "+
		"per day ETH: 0.00000000000000005 there, 1 here; uncapped assets allowed: false there, true here", err.Error())

	var unreadable *MismatchError
	require.ErrorAs(t, Compare(`{"v":2}`, Canonical(a, false, dec), "db"), &unreadable)
	require.True(t, unreadable.Unreadable)
}
