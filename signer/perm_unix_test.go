//go:build unix

package signer_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
)

// TestSpecialFilesRefused: a named pipe must be refused, not opened (opening one for
// reading blocks until a writer appears), and devices are not key files either.
func TestSpecialFilesRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))

	for _, tc := range []struct{ path, want string }{
		{fifo, "is a named pipe, not a regular file"},
		{"/dev/null", "is a device, not a regular file"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := signer.FromKeyFile(tc.path); done <- err }()
			select {
			case err := <-done:
				require.ErrorContains(t, err, tc.want)
			case <-time.After(5 * time.Second):
				t.Fatal("FromKeyFile blocked on a special file")
			}
			require.ErrorContains(t, signer.CheckPrivateFile(tc.path), tc.want)
		})
	}
}
