package chain_test

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
)

// A call's max fees are its gas limit × max fee plus its L1 data fee bound
// (an OP-stack chain's), and its max cost is its value plus those: what the
// caps count and what a leg's preview shows are the same sum.
func TestACallsMaxFeesCountItsL1FeeBound(t *testing.T) {
	c := chain.Call{Value: big.NewInt(1000), Gas: 21000, MaxFee: big.NewInt(3)}
	require.Equal(t, big.NewInt(63000), c.MaxFees(), "no L1 fee: gas × max fee")
	require.Equal(t, big.NewInt(64000), c.MaxCost())
	c.L1Fee = big.NewInt(500)
	require.Equal(t, big.NewInt(63500), c.MaxFees(), "with its L1 fee bound")
	require.Equal(t, big.NewInt(64500), c.MaxCost())
}
