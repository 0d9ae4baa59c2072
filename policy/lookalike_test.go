package policy

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

func TestLookAlike(t *testing.T) {
	paid := common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
	poison := common.HexToAddress("0x8335000000000000000000000000000000002913")
	require.True(t, LookAlike(poison, paid), "same first 4 and last 4 hex digits")
	require.True(t, LookAlike(common.HexToAddress("0x83350000000000000000000000000000000029aB"), common.HexToAddress("0x83359999999999999999999999999999999929Ab")), "case-insensitive")
	require.False(t, LookAlike(paid, paid), "the address itself is not a look-alike")
	require.False(t, LookAlike(common.HexToAddress("0x8336000000000000000000000000000000002913"), paid), "first 4 differ")
	require.False(t, LookAlike(common.HexToAddress("0x8335000000000000000000000000000000002914"), paid), "last 4 differ")

	got, ok := LookAlikeOf(poison, []common.Address{common.HexToAddress("0x00000000000000000000000000000000000000aa"), paid})
	require.True(t, ok)
	require.Equal(t, paid, got)
	_, ok = LookAlikeOf(paid, []common.Address{poison, paid})
	require.False(t, ok, "an address the wallet knows exactly is not flagged")
}

func TestDelegatedTo(t *testing.T) {
	to := common.HexToAddress("0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B")
	a, ok := DelegatedTo(append([]byte{0xef, 0x01, 0x00}, to.Bytes()...))
	require.True(t, ok)
	require.Equal(t, to, a)
	for name, code := range map[string][]byte{
		"empty":      nil,
		"short":      append([]byte{0xef, 0x01, 0x00}, to.Bytes()[:19]...),
		"long":       append(append([]byte{0xef, 0x01, 0x00}, to.Bytes()...), 0),
		"other code": append([]byte{0x60, 0x01, 0x00}, to.Bytes()...),
	} {
		_, ok := DelegatedTo(code)
		require.False(t, ok, name)
	}
}
