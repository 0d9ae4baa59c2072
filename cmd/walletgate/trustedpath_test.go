package main_test

// A trusted path to the person (issue 37): the approval page's origin is
// only the service's. Whoever holds one address of localhost at the page's
// port (the desktop user's page on [::1], which Chromium tries first) keeps
// the service from starting: it names the address and serves nothing.

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// freePagePort is a port neither 127.0.0.1 nor ::1 listens on now.
func freePagePort(t *testing.T) int {
	t.Helper()
	for range 20 {
		port := freeLocalPort(t)
		if l6, err := net.Listen("tcp", "[::1]:"+strconv.Itoa(port)); err == nil {
			l6.Close()
			return port
		}
	}
	t.Fatal("no port is free at both 127.0.0.1 and ::1")
	return 0
}

func TestServiceDoesNotStartWhileAnAddressOfItsPageIsTaken(t *testing.T) {
	info := startDevnet(t)
	for _, taken := range []string{"[::1]", "127.0.0.1"} {
		t.Run(taken, func(t *testing.T) {
			port := freePagePort(t)
			at := taken + ":" + strconv.Itoa(port)
			squatter, err := net.Listen("tcp", at)
			require.NoError(t, err)
			defer squatter.Close()
			sock := filepath.Join(t.TempDir(), "mcp.sock")
			// On a service that starts anyway, the deadline ends it.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			svc := exec.CommandContext(ctx, binary, "service", "run", "--env", "--socket", sock, "--page-port", strconv.Itoa(port))
			svc.Env = cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile,
				"WALLETGATE_STATE_DIR="+t.TempDir(), "WALLETGATE_CONFIRM=human",
				"WALLETGATE_CAP_PER_TX=ETH=1", "WALLETGATE_CAP_PER_SESSION=ETH=1", "WALLETGATE_CAP_PER_DAY=ETH=1")
			out, err := svc.CombinedOutput()
			require.Error(t, err, "the service started while %s was another program's: %s", at, out)
			require.Contains(t, string(out), at+" is already in use by another program", "the error names the address")
			require.NotContains(t, string(out), "serving MCP")
			_, err = os.Stat(sock)
			require.ErrorIs(t, err, os.ErrNotExist, "no socket: nothing is served")
		})
	}
}
