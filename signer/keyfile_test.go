package signer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
)

func TestFromKeyFile(t *testing.T) {
	want := crypto.PubkeyToAddress(canaryKey(t).PublicKey)
	upper := strings.ToUpper(canaryKeyHex)
	accepted := map[string]string{
		"plain":             canaryKeyHex,
		"newline":           canaryKeyHex + "\n",
		"crlf":              canaryKeyHex + "\r\n",
		"0x prefix":         "0x" + canaryKeyHex + "\n",
		"0X prefix":         "0X" + canaryKeyHex,
		"upper-case digits": upper + "\n",
	}
	for name, content := range accepted {
		t.Run("accepts/"+name, func(t *testing.T) {
			s, err := signer.FromKeyFile(writeFile(t, t.TempDir(), "key", content, 0o600))
			require.NoError(t, err)
			require.Equal(t, want, s.Address())
			require.Equal(t, signer.KindKeyFile, s.Kind())
		})
	}

	refused := []struct {
		name    string
		content string
		want    string
	}{
		{"empty", "", "is empty"},
		{"only newline", "\n", "is empty"},
		{"two newlines", canaryKeyHex + "\n\n", "holds 65 characters"},
		{"leading space", " " + canaryKeyHex, "holds 65 characters"},
		{"trailing space", canaryKeyHex + " ", "holds 65 characters"},
		{"trailing tab and newline", canaryKeyHex + "\t\n", "holds 65 characters"},
		{"lone cr", canaryKeyHex + "\r", "holds 65 characters"},
		{"63 digits", canaryKeyHex[:63], "holds 63 characters"},
		{"65 digits", canaryKeyHex + "a", "holds 65 characters"},
		{"double prefix", "0x0x" + canaryKeyHex[4:], "holds 62 characters"},
		{"non-hex character", canaryKeyHex[:40] + "g" + canaryKeyHex[41:], "not a hex digit"},
		{"double prefix, 64 digits", "0x0x" + canaryKeyHex[2:], "not a hex digit"},
		{"inner space", canaryKeyHex[:40] + " " + canaryKeyHex[41:], "not a hex digit"},
		{"zero key", strings.Repeat("0", 64), "does not hold a valid secp256k1 private key"},
		{"key above curve order", strings.Repeat("f", 64), "does not hold a valid secp256k1 private key"},
		{"keystore json", `{"address":"` + canaryKeyHex[:40] + `","crypto":{}}`, "holds JSON"},
		{"text", "canary-text-secret-phrase " + canaryKeyHex, "holds 90 characters"},
		{"oversized", strings.Repeat(canaryKeyHex, 20), "larger than the 1024 bytes"},
	}
	for _, tc := range refused {
		t.Run("refuses/"+tc.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "key", tc.content, 0o600)
			s, err := signer.FromKeyFile(p)
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, s)
			require.Contains(t, err.Error(), p, "the error names the file")
			requireNoSecret(t, err.Error(), canaryKeyHex, "canary-text")
		})
	}
}

func TestFromKeyFileFiles(t *testing.T) {
	skipOnWindows(t)
	dir := t.TempDir()
	private := writeFile(t, dir, "private", canaryKeyHex+"\n", 0o600)
	public := writeFile(t, dir, "public", canaryKeyHex+"\n", 0o644)
	require.NoError(t, os.Symlink(private, filepath.Join(dir, "link-to-private")))
	require.NoError(t, os.Symlink(public, filepath.Join(dir, "link-to-public")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "nothing"), filepath.Join(dir, "dangling")))

	for _, tc := range []struct {
		name string
		path string
		want string // "" = accepted
	}{
		{"0600", private, ""},
		{"0400", writeFile(t, dir, "ro", canaryKeyHex, 0o400), ""},
		{"symlink to a private file", filepath.Join(dir, "link-to-private"), ""},
		{"0644", public, "has mode 0644"},
		{"0640", writeFile(t, dir, "g", canaryKeyHex, 0o640), "has mode 0640"},
		{"0604", writeFile(t, dir, "o", canaryKeyHex, 0o604), "has mode 0604"},
		{"0620", writeFile(t, dir, "gw", canaryKeyHex, 0o620), "has mode 0620"},
		{"symlink to a public file", filepath.Join(dir, "link-to-public"), "chmod 600 " + filepath.Join(dir, "link-to-public")},
		{"dangling symlink", filepath.Join(dir, "dangling"), "no such file"},
		{"missing", filepath.Join(dir, "missing"), "no such file"},
		{"directory", dir, "is a directory, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := signer.FromKeyFile(tc.path)
			if tc.want == "" {
				require.NoError(t, err)
				require.Equal(t, crypto.PubkeyToAddress(canaryKey(t).PublicKey), s.Address())
				return
			}
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, s)
			requireNoSecret(t, err.Error(), canaryKeyHex)
		})
	}
}
