package signer_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
)

func isWindows() bool { return runtime.GOOS == "windows" }

func skipOnWindows(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("permission bits do not describe access on Windows")
	}
}

func TestCheckPrivateFile(t *testing.T) {
	skipOnWindows(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		ok   bool
	}{
		{0o600, true}, {0o400, true}, {0o700, true}, {0o200, true},
		{0o644, false}, {0o640, false}, {0o604, false}, {0o660, false},
		{0o606, false}, {0o666, false}, {0o620, false}, {0o602, false},
		{0o610, false}, {0o601, false}, {0o777, false},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			p := writeFile(t, dir, tc.mode.String(), "secret", tc.mode)
			err := signer.CheckPrivateFile(p)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			msg := err.Error()
			require.Contains(t, msg, p)
			require.Contains(t, msg, "has mode 0"+octal(tc.mode))
			require.Contains(t, msg, "chmod 600 "+p)
		})
	}

	t.Run("path with a space is quoted for the shell", func(t *testing.T) {
		p := writeFile(t, dir, "my key's file", "secret", 0o644)
		require.ErrorContains(t, signer.CheckPrivateFile(p), `chmod 600 '`+filepath.Dir(p)+`/my key'\''s file'`)
	})
	t.Run("directory", func(t *testing.T) {
		require.ErrorContains(t, signer.CheckPrivateFile(t.TempDir()), "is a directory, not a regular file")
	})
	t.Run("missing", func(t *testing.T) {
		require.ErrorIs(t, signer.CheckPrivateFile(filepath.Join(dir, "missing")), os.ErrNotExist)
	})
}

func octal(m os.FileMode) string {
	const digits = "01234567"
	return string([]byte{digits[m>>6&7], digits[m>>3&7], digits[m&7]})
}
