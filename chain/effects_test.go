package chain_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/signer"
)

// A traced simulation reports what each call moves: ETH (as Transfer logs
// of the pseudo address), ERC-20 transfers and approvals, in sequence.
func TestStateAndTraceReportsMovements(t *testing.T) {
	d := startDevnet(t, devnet.Options{})
	c := inProcess(t, d)
	to := common.HexToAddress("0x00000000000000000000000000000000000ef001")
	spender := common.HexToAddress("0x00000000000000000000000000000000000ef002")
	usdt := d.Contracts.USDT
	calls := []chain.Call{
		{From: signer.DevAddress, To: to, Value: big.NewInt(12345)},
		{From: signer.DevAddress, To: usdt, Data: chain.TransferData(to, big.NewInt(7))},
		{From: signer.DevAddress, To: usdt, Data: chain.ApproveData(spender, big.NewInt(9))},
	}
	_, res, err := c.StateAndTrace(context.Background(), signer.DevAddress, calls)
	require.NoError(t, err)
	require.Len(t, res, 3)
	for _, r := range res {
		require.Nil(t, r.Revert)
	}
	require.Equal(t, []chain.Transfer{{Token: chain.ETHTransferLog, From: signer.DevAddress, To: to, Amount: big.NewInt(12345)}}, zeroIndex(res[0].Transfers))
	require.Equal(t, []chain.Transfer{{Token: usdt, From: signer.DevAddress, To: to, Amount: big.NewInt(7)}}, zeroIndex(res[1].Transfers))
	require.Len(t, res[2].Approvals, 1)
	res[2].Approvals[0].LogIndex = 0
	require.Equal(t, []chain.Approval{{Token: usdt, Owner: signer.DevAddress, Spender: spender, Amount: big.NewInt(9)}}, res[2].Approvals)
}

func zeroIndex(ts []chain.Transfer) []chain.Transfer {
	for i := range ts {
		ts[i].LogIndex = 0
	}
	return ts
}
