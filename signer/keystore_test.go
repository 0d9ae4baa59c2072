package signer_test

import (
	"crypto/ecdsa"
	"encoding/hex"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
)

// tinyScryptN keeps the many decryptions in these tests fast under -race (LightScryptN
// costs about a second each there); TestFromKeystoreLightScrypt covers realistic parameters.
const tinyScryptN = 1 << 4

// makeKeystore writes a keystore with scrypt parameter n for key (a fresh random key when nil)
// and a 0600 password file holding password plus a newline; it returns both paths.
func makeKeystore(t *testing.T, key *ecdsa.PrivateKey, password string, n int) (ksPath, pwPath string) {
	t.Helper()
	dir := t.TempDir()
	if key == nil {
		acct, err := keystore.StoreKey(filepath.Join(dir, "ks"), password, n, keystore.LightScryptP)
		require.NoError(t, err)
		ksPath = acct.URL.Path
	} else {
		ks := keystore.NewKeyStore(filepath.Join(dir, "ks"), n, keystore.LightScryptP)
		acct, err := ks.ImportECDSA(key, password)
		require.NoError(t, err)
		ksPath = acct.URL.Path
	}
	return ksPath, writeFile(t, dir, "password", password+"\n", 0o600)
}

func TestFromKeystore(t *testing.T) {
	const pw = "canary-pw-123"
	ksPath, pwPath := makeKeystore(t, nil, pw, tinyScryptN)
	keyJSON, err := os.ReadFile(ksPath)
	require.NoError(t, err)
	key, err := keystore.DecryptKey(keyJSON, pw)
	require.NoError(t, err)
	keyHex := hex.EncodeToString(crypto.FromECDSA(key.PrivateKey))
	addrField := strings.ToLower(key.Address.Hex()[2:]) // how geth writes it
	require.Contains(t, string(keyJSON), `"address":"`+addrField+`"`)

	s, err := signer.FromKeystore(ksPath, pwPath)
	require.NoError(t, err)
	require.Equal(t, key.Address, s.Address())
	require.Equal(t, signer.KindKeystore, s.Kind())
	requireSignedBy(t, s, dynamicTx(11155111), 11155111)

	// Password files: exactly one trailing "\n" or "\r\n" is removed, nothing else.
	passwords := []struct {
		name    string
		content string
		want    string // "" = accepted
	}{
		{"no newline", pw, ""},
		{"crlf", pw + "\r\n", ""},
		{"two newlines", pw + "\n\n", "does not decrypt"},
		{"trailing space", pw + " \n", "does not decrypt"},
		{"leading space", " " + pw + "\n", "does not decrypt"},
		{"lone cr", pw + "\r", "does not decrypt"},
		{"wrong password", "canary-wrong-pw-456\n", "does not decrypt keystore file"},
		{"empty", "", "is empty"},
		{"only newline", "\n", "is empty"},
		{"only crlf", "\r\n", "is empty"},
		{"oversized", strings.Repeat("p", 4<<10+1), "larger than the 4096 bytes"},
	}
	for _, tc := range passwords {
		t.Run("password/"+tc.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "pw", tc.content, 0o600)
			s, err := signer.FromKeystore(ksPath, p)
			if tc.want == "" {
				require.NoError(t, err)
				require.Equal(t, key.Address, s.Address())
				return
			}
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, s)
			require.Contains(t, err.Error(), p, "the error names the password file")
			requireNoSecret(t, err.Error(), pw, "canary-wrong-pw-456", keyHex)
		})
	}

	// Keystore files that are broken in various ways; none may be echoed.
	good := string(keyJSON)
	otherAddr := "0000000000000000000000000000000000000001"
	keystores := []struct {
		name    string
		content string
		want    string
	}{
		{"not json", "canary-content-not-json " + keyHex, "is not a JSON keystore"},
		{"hex key instead of keystore", keyHex + "\n", "is not a JSON keystore"},
		{"bad cipher", strings.Replace(good, `"aes-128-ctr"`, `"canary-cipher-xyz"`, 1), "could not be decrypted"},
		{"bad version", strings.Replace(good, `"version":3`, `"version":99`, 1), "could not be decrypted"},
		{"address field of another account", strings.Replace(good, addrField, otherAddr, 1), "names address 0x0000000000000000000000000000000000000001"},
		{"address field not an address", strings.Replace(good, `"address":"`, `"address":"canary-addr-xyz`, 1), "address field that is not 40 hex digits"},
		{"oversized", good + strings.Repeat(" ", 64<<10), "larger than the 65536 bytes"},
	}
	for _, tc := range keystores {
		t.Run("keystore/"+tc.name, func(t *testing.T) {
			if tc.content != good {
				require.NotEqual(t, good, tc.content, "the case must change the keystore")
			}
			p := writeFile(t, t.TempDir(), "ks.json", tc.content, 0o600)
			s, err := signer.FromKeystore(p, pwPath)
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, s)
			require.Contains(t, err.Error(), p)
			requireNoSecret(t, err.Error(), pw, keyHex, "canary-content", "canary-cipher", "canary-addr")
		})
	}

	t.Run("address field with 0x and checksum case is fine", func(t *testing.T) {
		checksummed := strings.Replace(good, addrField, key.Address.Hex(), 1)
		require.NotEqual(t, good, checksummed)
		for _, content := range []string{good, checksummed} {
			p := writeFile(t, t.TempDir(), "ks.json", content, 0o600)
			s, err := signer.FromKeystore(p, pwPath)
			require.NoError(t, err)
			require.Equal(t, key.Address, s.Address())
		}
	})
}

func TestFromKeystoreLightScrypt(t *testing.T) {
	ksPath, pwPath := makeKeystore(t, nil, "canary-pw-123", keystore.LightScryptN)
	s, err := signer.FromKeystore(ksPath, pwPath)
	require.NoError(t, err)
	requireSignedBy(t, s, dynamicTx(11155111), 11155111)
}

func TestFromKeystorePermissions(t *testing.T) {
	skipOnWindows(t)
	ksPath, pwPath := makeKeystore(t, nil, "canary-pw-123", tinyScryptN)
	for _, tc := range []struct {
		name   string
		target func() string // the file whose mode is loosened
		mode   os.FileMode
	}{
		{"keystore 0644", func() string { return ksPath }, 0o644},
		{"keystore 0640", func() string { return ksPath }, 0o640},
		{"password 0644", func() string { return pwPath }, 0o644},
		{"password 0604", func() string { return pwPath }, 0o604},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.target()
			require.NoError(t, os.Chmod(p, tc.mode))
			t.Cleanup(func() { require.NoError(t, os.Chmod(p, 0o600)) })
			s, err := signer.FromKeystore(ksPath, pwPath)
			require.ErrorContains(t, err, "chmod 600 "+p)
			require.Nil(t, s)
		})
	}
	t.Run("password file is a directory", func(t *testing.T) {
		_, err := signer.FromKeystore(ksPath, t.TempDir())
		require.ErrorContains(t, err, "is a directory, not a regular file")
	})
	t.Run("missing password file", func(t *testing.T) {
		_, err := signer.FromKeystore(ksPath, filepath.Join(t.TempDir(), "nope"))
		require.ErrorContains(t, err, "password file")
	})
}

// TestKeystoreDevKeyStaysOnDevChain: importing the public dev key into a keystore does not
// let it sign for a real chain.
func TestKeystoreDevKeyStaysOnDevChain(t *testing.T) {
	devKey, err := crypto.ToECDSA(crypto.Keccak256([]byte("walletgate dev account")))
	require.NoError(t, err)
	ksPath, pwPath := makeKeystore(t, devKey, "pw", tinyScryptN)
	s, err := signer.FromKeystore(ksPath, pwPath)
	require.NoError(t, err)
	require.Equal(t, signer.DevAddress, s.Address())
	_, err = s.SignTx(dynamicTx(1), big.NewInt(1))
	require.ErrorContains(t, err, "public dev key")
	requireSignedBy(t, s, dynamicTx(signer.DevChainID), signer.DevChainID)
}
