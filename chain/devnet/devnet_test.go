package devnet_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
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
