package devnet_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/signer"
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
