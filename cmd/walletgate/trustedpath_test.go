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

// The person lists the enrolled passkeys and removes one by its id (a prefix
// of 8 characters or more that names one).
func TestServicePasskeysListAndRemove(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	require.NoError(t, os.Mkdir(state, 0o700))
	cfg := filepath.Join(dir, "service.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"socket":"`+dir+`/mcp.sock","users":[{"name":"a","uid":1}],"env":{"WALLETGATE_STATE_DIR":"`+state+`"},"page_port":746}`), 0o600))
	// Two credentials, as an enrolment stores them (ids "person-passkey"
	// and "other-passkey").
	require.NoError(t, os.WriteFile(filepath.Join(state, "passkeys.json"), []byte(`{"user_id":"AQID","credentials":[`+
		`{"id":"cGVyc29uLXBhc3NrZXk=","publicKey":"AQ==","flags":{},"authenticator":{"AAGUID":"AAAAAAAAAAAAAAAAAAAAAA==","signCount":3}},`+
		`{"id":"b3RoZXItcGFzc2tleQ==","publicKey":"AQ==","flags":{},"authenticator":{"signCount":0}}]}`), 0o600))
	run := func(args ...string) (string, error) {
		out, err := exec.Command(binary, append(append([]string{"service", "passkeys"}, args...), "--config", cfg)...).CombinedOutput()
		return string(out), err
	}
	out, err := run()
	require.NoError(t, err, out)
	require.Contains(t, out, "passkeys enrolled: 2")
	require.Contains(t, out, "cGVyc29uLXBhc3NrZXk  authenticator (the authenticator names no model), signature counter 3")
	out, err = run("remove", "cGVy")
	require.Error(t, err, out)
	require.Contains(t, out, "at least 8 characters")
	out, err = run("remove", "cGVyc29uLXBh")
	require.NoError(t, err, out)
	require.Contains(t, out, "removed passkey cGVyc29uLXBhc3NrZXk")
	require.Contains(t, out, "passkeys enrolled: 1")
	require.NotContains(t, out, "  cGVyc29uLXBhc3NrZXk")
	fi, err := os.Stat(filepath.Join(state, "passkeys.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}
