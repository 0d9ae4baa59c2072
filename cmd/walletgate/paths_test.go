package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A client configuration written as people write it: the key file given as
// "~/…" (a JSON config expands nothing) starts walletgate with that key,
// and a path it cannot expand refuses the start in words.
func TestKeyFileWithATildeStarts(t *testing.T) {
	info := startDevnet(t)
	home := t.TempDir()
	raw, err := os.ReadFile(info.KeyFile)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".walletgate"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".walletgate", "dev.key"), raw, 0o600))
	env := append(capsEnv(info, t.TempDir()), "HOME="+home, "WALLETGATE_KEY_FILE=~/.walletgate/dev.key")
	c := startServer(t, env)
	c.initialize()
	addr := c.callTool("wallet_address", map[string]any{})["structuredContent"].(map[string]any)
	require.Equal(t, "key-file", addr["signer"])
	require.Equal(t, info.DevAccount, addr["address"])

	cmd := exec.Command(binary)
	cmd.Env = append(capsEnv(info, t.TempDir()), "HOME="+home, "WALLETGATE_KEY_FILE=~bob/.walletgate/dev.key")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "refused")
	require.Contains(t, string(out), "WALLETGATE_KEY_FILE")
	require.Contains(t, string(out), "~user is not expanded")
}
