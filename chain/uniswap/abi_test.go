package uniswap_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain/uniswap"
)

func TestUniswapSelectorsAndLayout(t *testing.T) {
	a := common.HexToAddress("0x00000000000000000000000000000000000000a1")
	b := common.HexToAddress("0x00000000000000000000000000000000000000b2")
	q := uniswap.QuoteData(a, b, big.NewInt(7), 500)
	require.Equal(t, "c6a5026a", common.Bytes2Hex(q[:4]))
	// After the selector: five static words, no tuple offset.
	require.Len(t, q, 4+5*32)
	require.Equal(t, a, common.BytesToAddress(q[4:36]))
	require.Equal(t, big.NewInt(7), new(big.Int).SetBytes(q[68:100]))
	require.Equal(t, big.NewInt(500), new(big.Int).SetBytes(q[100:132]))

	s := uniswap.SwapData(a, b, 500, a, big.NewInt(9), big.NewInt(8), 1234)
	uni := uniswap.ABI()
	method, err := uni.MethodById(s[:4])
	require.NoError(t, err)
	require.Equal(t, "multicall", method.Name)
	vals, err := method.Inputs.Unpack(s[4:])
	require.NoError(t, err)
	require.Equal(t, big.NewInt(1234), vals[0])
	inner := vals[1].([][]byte)[0]
	require.Equal(t, "04e45aaf", common.Bytes2Hex(inner[:4]))
	require.Len(t, inner, 4+7*32)
	require.Equal(t, big.NewInt(8), new(big.Int).SetBytes(inner[4+5*32:4+6*32]), "amountOutMinimum is the sixth word")
}
