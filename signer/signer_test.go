package signer_test

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
)

// canaryKeyHex is a private key used only to check that it never shows up in output.
const canaryKeyHex = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"

func canaryKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := crypto.HexToECDSA(canaryKeyHex)
	require.NoError(t, err)
	return k
}

// writeFile writes content to dir/name with exactly mode perm (the umask is undone).
func writeFile(t *testing.T, dir, name, content string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), perm))
	require.NoError(t, os.Chmod(p, perm))
	return p
}

// requireNoSecret fails if text contains any secret, or any 8-character piece of one,
// in any letter case.
func requireNoSecret(t *testing.T, text string, secrets ...string) {
	t.Helper()
	lower := strings.ToLower(text)
	for _, s := range secrets {
		s = strings.ToLower(s)
		if len(s) < 8 {
			require.NotContains(t, lower, s)
			continue
		}
		for i := 0; i+8 <= len(s); i++ {
			if strings.Contains(lower, s[i:i+8]) {
				t.Fatalf("output contains a piece (%q) of a secret:\n%s", s[i:i+8], text)
			}
		}
	}
}

func dynamicTx(chainID int64) *types.Transaction {
	to := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	return types.NewTx(&types.DynamicFeeTx{
		ChainID:   big.NewInt(chainID),
		Nonce:     7,
		GasTipCap: big.NewInt(1e9),
		GasFeeCap: big.NewInt(2e9),
		Gas:       21000,
		To:        &to,
		Value:     big.NewInt(12345),
	})
}

func legacyTx() *types.Transaction {
	to := common.HexToAddress("0x00000000000000000000000000000000000000bb")
	return types.NewTx(&types.LegacyTx{Nonce: 1, GasPrice: big.NewInt(1e9), Gas: 21000, To: &to, Value: big.NewInt(1)})
}

// requireSignedBy signs tx for chainID and checks that the signature recovers s's address.
func requireSignedBy(t *testing.T, s signer.Signer, tx *types.Transaction, chainID int64) {
	t.Helper()
	signed, err := s.SignTx(tx, big.NewInt(chainID))
	require.NoError(t, err)
	from, err := types.Sender(types.LatestSignerForChainID(big.NewInt(chainID)), signed)
	require.NoError(t, err)
	require.Equal(t, s.Address(), from)
	require.Equal(t, big.NewInt(chainID), signed.ChainId())
	require.Equal(t, tx.Hash() != signed.Hash(), true, "signing must change the hash")
}

func keyFileSigner(t *testing.T, keyHex string) signer.Signer {
	t.Helper()
	s, err := signer.FromKeyFile(writeFile(t, t.TempDir(), "key", keyHex+"\n", 0o600))
	require.NoError(t, err)
	return s
}

func TestSignTx(t *testing.T) {
	s := keyFileSigner(t, canaryKeyHex)
	require.Equal(t, crypto.PubkeyToAddress(canaryKey(t).PublicKey), s.Address())
	require.Equal(t, signer.KindKeyFile, s.Kind())

	t.Run("dynamic fee tx", func(t *testing.T) { requireSignedBy(t, s, dynamicTx(11155111), 11155111) })
	t.Run("legacy tx gets EIP-155 protection", func(t *testing.T) { requireSignedBy(t, s, legacyTx(), 5) })
	t.Run("mainnet is not this package's call", func(t *testing.T) { requireSignedBy(t, s, dynamicTx(1), 1) })

	refusals := []struct {
		name    string
		tx      *types.Transaction
		chainID *big.Int
		want    string
	}{
		{"nil chain id", dynamicTx(1), nil, "no chain id"},
		{"zero chain id", dynamicTx(1), big.NewInt(0), "must be positive"},
		{"negative chain id", dynamicTx(1), big.NewInt(-1), "must be positive"},
		{"nil chain id legacy", legacyTx(), nil, "no chain id"},
		{"tx for another chain", dynamicTx(1), big.NewInt(5), "transaction is for chain 1, asked to sign for chain 5"},
		{"nil tx", nil, big.NewInt(1), "no transaction"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			signed, err := s.SignTx(tc.tx, tc.chainID)
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, signed)
			requireNoSecret(t, err.Error(), canaryKeyHex)
		})
	}
}

func TestSignTxConcurrent(t *testing.T) {
	s := keyFileSigner(t, canaryKeyHex)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			signed, err := s.SignTx(dynamicTx(10), big.NewInt(10))
			if err != nil || signed == nil {
				t.Errorf("goroutine %d: %v", i, err)
			}
		})
	}
	wg.Wait()
}

// TestFormatHidesKey checks every way a signer is likely to be printed or logged.
func TestFormatHidesKey(t *testing.T) {
	ksPath, pwPath := makeKeystore(t, canaryKey(t), "canary-pw-123", tinyScryptN)
	ks, err := signer.FromKeystore(ksPath, pwPath)
	require.NoError(t, err)
	devHex := hex.EncodeToString(crypto.Keccak256([]byte("walletgate dev account")))

	signers := []struct {
		s      signer.Signer
		secret string
		want   string
	}{
		{keyFileSigner(t, canaryKeyHex), canaryKeyHex, "signer.key-file(" + ks.Address().Hex() + ")"},
		{ks, canaryKeyHex, "signer.keystore(" + ks.Address().Hex() + ")"},
		{signer.Dev(), devHex, "signer.dev(0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c)"},
	}
	type exported struct{ S signer.Signer }
	type unexported struct{ s signer.Signer }
	for _, c := range signers {
		t.Run(c.s.Kind(), func(t *testing.T) {
			require.Equal(t, c.want, fmt.Sprint(c.s))
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3f"} {
				require.Equal(t, c.want, fmt.Sprintf(verb, c.s), "every verb prints the safe description, %s too", verb)
			}
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T", "%p"} {
				for _, val := range []any{c.s, exported{c.s}, unexported{c.s}, []signer.Signer{c.s}, map[string]signer.Signer{"k": c.s}, &exported{c.s}} {
					requireNoSecret(t, fmt.Sprintf(verb, val), c.secret)
				}
			}
			js, err := json.Marshal(exported{c.s})
			require.NoError(t, err)
			requireNoSecret(t, string(js), c.secret)
			require.Contains(t, string(js), c.want)

			var logs bytes.Buffer
			slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "signer", c.s, "wrapped", exported{c.s})
			slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "signer", c.s, "wrapped", exported{c.s})
			requireNoSecret(t, logs.String(), c.secret)
			require.Contains(t, logs.String(), c.want)
		})
	}
}
