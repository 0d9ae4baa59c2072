package signer_test

import (
	"encoding/hex"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
)

// The dev key is public; these are the values written in DESIGN and handed to other processes.
const (
	devKeyHex  = "ef4f253a951fe489e4ca51c5272c4f062942549d2279e6f3a72965e0e6e1a7c5"
	devAddrHex = "0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c"
)

func TestDevKey(t *testing.T) {
	require.Equal(t, devKeyHex, hex.EncodeToString(crypto.Keccak256([]byte("walletgate dev account"))))
	key, err := crypto.HexToECDSA(devKeyHex)
	require.NoError(t, err)
	require.Equal(t, devAddrHex, crypto.PubkeyToAddress(key.PublicKey).Hex())
	require.Equal(t, devAddrHex, signer.DevAddress.Hex())

	d := signer.Dev()
	require.Equal(t, signer.DevAddress, d.Address())
	require.Equal(t, signer.KindDev, d.Kind())
	require.EqualValues(t, 1337, signer.DevChainID)
}

// devChainOnly checks that s signs for the dev chain and refuses every other chain.
func devChainOnly(t *testing.T, s signer.Signer) {
	t.Helper()
	t.Run("signs for 1337", func(t *testing.T) { requireSignedBy(t, s, dynamicTx(1337), 1337) })
	t.Run("signs for 31337 (walletgate-devnet --chain-id 31337, Hardhat/Anvil)", func(t *testing.T) { requireSignedBy(t, s, dynamicTx(31337), 31337) })
	t.Run("signs legacy for 1337", func(t *testing.T) { requireSignedBy(t, s, legacyTx(), 1337) })
	for _, tc := range []struct {
		name    string
		txChain int64
		chainID *big.Int
		want    string
	}{
		{"mainnet", 1, big.NewInt(1), "signs only for chain 1337 or 31337"},
		{"sepolia", 11155111, big.NewInt(11155111), "signs only for chain 1337 or 31337"},
		{"base", 8453, big.NewInt(8453), "signs only for chain 1337 or 31337"},
		{"mainnet tx asked as 1337", 1, big.NewInt(1337), "transaction is for chain 1"},
		{"nil", 1337, nil, "no chain id"},
		{"zero", 1337, big.NewInt(0), "must be positive"},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			signed, err := s.SignTx(dynamicTx(tc.txChain), tc.chainID)
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, signed)
			requireNoSecret(t, err.Error(), devKeyHex)
		})
	}
	t.Run("refuses legacy for mainnet", func(t *testing.T) {
		_, err := s.SignTx(legacyTx(), big.NewInt(1))
		require.ErrorContains(t, err, "public dev key")
	})
}

func TestDevSignerChains(t *testing.T) { devChainOnly(t, signer.Dev()) }

// The dev facilitator key is public as well, and as bound to the dev chain.
func TestDevFacilitatorSignerChains(t *testing.T) {
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("walletgate dev facilitator")))
	require.NoError(t, err)
	require.Equal(t, crypto.PubkeyToAddress(key.PublicKey), signer.DevFacilitatorAddress)
	require.Equal(t, signer.DevFacilitatorAddress, signer.DevFacilitator().Address())
	devChainOnly(t, signer.DevFacilitator())
}

func TestWriteDevKeyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dev.key")
	require.NoError(t, signer.WriteDevKeyFile(p))

	info, err := os.Stat(p)
	require.NoError(t, err)
	if !isWindows() {
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	}
	require.NoError(t, signer.CheckPrivateFile(p))

	s, err := signer.FromKeyFile(p)
	require.NoError(t, err)
	require.Equal(t, signer.DevAddress, s.Address())
	require.Equal(t, signer.KindKeyFile, s.Kind())
	t.Run("loaded from the file it is still dev-chain only", func(t *testing.T) { devChainOnly(t, s) })

	t.Run("refuses to overwrite", func(t *testing.T) {
		require.NoError(t, os.WriteFile(p, []byte("keep me"), 0o600))
		err := signer.WriteDevKeyFile(p)
		require.ErrorContains(t, err, "already exists")
		got, rerr := os.ReadFile(p)
		require.NoError(t, rerr)
		require.Equal(t, "keep me", string(got), "the existing file is untouched")
	})
	t.Run("refuses to follow a symlink", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "target")
		link := filepath.Join(dir, "link")
		if err := os.Symlink(target, link); err != nil {
			t.Skip("no symlinks:", err)
		}
		require.ErrorContains(t, signer.WriteDevKeyFile(link), "already exists")
		_, err := os.Lstat(target)
		require.ErrorIs(t, err, os.ErrNotExist, "nothing was written through the link")
	})
	t.Run("missing directory", func(t *testing.T) {
		require.Error(t, signer.WriteDevKeyFile(filepath.Join(t.TempDir(), "no", "such", "dir", "k")))
	})
}
