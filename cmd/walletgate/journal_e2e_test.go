package main_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// capsEnv are tight caps for the journal tests: USDT 100 per day.
func capsEnv(info devnetInfo, stateDir string) []string {
	return cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile,
		"WALLETGATE_STATE_DIR="+stateDir, "WALLETGATE_CAP_PER_TX=ETH=1,USDT=100", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=1000",
		"WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100")
}

func TestTwoProcessesOnOneStateDirNeverPassTheDayCap(t *testing.T) {
	info := startDevnet(t)
	state := t.TempDir()
	a := startServer(t, capsEnv(info, state))
	b := startServer(t, capsEnv(info, state))
	a.initialize()
	b.initialize()
	args := map[string]any{"to": "0x00000000000000000000000000000000000e2e03", "amount": "60", "asset": "USDT"}
	ta := a.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	tb := b.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	texts := make([]string, 2)
	var wg sync.WaitGroup
	for i, c := range []struct {
		c   *stdioClient
		tok any
	}{{a, ta}, {b, tb}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			confirm := map[string]any{"to": args["to"], "amount": "60", "asset": "USDT", "confirm": c.tok}
			texts[i] = text(c.c.callTool("wallet_send", confirm))
		}()
	}
	wg.Wait()
	ok := 0
	for _, txt := range texts {
		if strings.HasPrefix(txt, "CONFIRMED") {
			ok++
		} else {
			require.True(t, strings.HasPrefix(txt, "CAP_EXCEEDED: "), txt)
			require.Contains(t, txt, "per day")
		}
	}
	require.Equal(t, 1, ok, "%v", texts)
}

func TestAuditCommandsAndARestartKeepTheDay(t *testing.T) {
	info := startDevnet(t)
	state := t.TempDir()
	env := capsEnv(info, state)
	c := startServer(t, env)
	c.initialize()
	args := map[string]any{"to": "0x00000000000000000000000000000000000e2e04", "amount": "70", "asset": "USDT"}
	args["confirm"] = c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	require.Equal(t, "confirmed", c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["status"])
	c.stdin.Close()
	require.NoError(t, c.cmd.Wait())

	// A restart keeps the day: 30.000001 more is refused.
	c2 := startServer(t, env)
	c2.initialize()
	over := c2.callTool("wallet_send", map[string]any{"to": "0x00000000000000000000000000000000000e2e04", "amount": "30.000001", "asset": "USDT"})
	require.True(t, strings.HasPrefix(text(over), "CAP_EXCEEDED: "), text(over))
	c2.stdin.Close()
	require.NoError(t, c2.cmd.Wait())

	run := func(args ...string) (string, error) {
		cmd := exec.Command(binary, args...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	out, err := run("audit", "verify")
	require.NoError(t, err, out)
	require.Contains(t, out, "hash chain intact")
	out, err = run("audit", "show")
	require.NoError(t, err, out)
	for _, want := range []string{"session", "wallet_send previewed", "caps reserved", "SIGNED 0x", "broadcast 0x", "INCLUDED, succeeded", "wallet_send REFUSED: CAP_EXCEEDED"} {
		require.Contains(t, out, want)
	}
	out, err = run("policy")
	require.NoError(t, err, out)
	require.Contains(t, out, "USDT per day: 70 / 100, 30 left")
	require.Contains(t, out, "kept in the journal")

	// Tampering with one line is found and named.
	files, _ := filepath.Glob(filepath.Join(state, "*", "journal.jsonl"))
	require.Len(t, files, 1)
	raw, err := os.ReadFile(files[0])
	require.NoError(t, err)
	tampered := regexp.MustCompile(`"70000000"`).ReplaceAllString(string(raw), `"7000000"`)
	require.NotEqual(t, string(raw), tampered)
	require.NoError(t, os.WriteFile(files[0], []byte(tampered), 0o600))
	out, err = run("audit", "verify")
	require.Error(t, err)
	require.Regexp(t, `line \d+`, out)

	// And the server refuses writes, keeps reads.
	c3 := startServer(t, env)
	c3.initialize()
	res := c3.callTool("wallet_send", map[string]any{"to": "0x00000000000000000000000000000000000e2e04", "amount": "1", "asset": "USDT"})
	require.True(t, strings.HasPrefix(text(res), "LEDGER_UNAVAILABLE: "), text(res))
	bal := c3.callTool("wallet_balance", map[string]any{})
	require.Nil(t, bal["isError"])
}

// TestPolicyWritesNothing: `walletgate policy` reads the journal the server
// keeps (the day's spend is in its answer) and changes nothing under the
// state directory — no record, no head, no lock file, no binding, no
// modification time — and on a state directory with no journal yet it
// creates none.
func TestPolicyWritesNothing(t *testing.T) {
	info := startDevnet(t)
	state := t.TempDir()
	env := capsEnv(info, state)
	policy := func() string { return runPolicy(t, env) }
	require.Contains(t, policy(), "USDT per day: 0 / 100, 100 left")
	entries, err := os.ReadDir(state)
	require.NoError(t, err)
	require.Empty(t, entries, "policy created nothing in an empty state directory")

	c := startServer(t, env)
	c.initialize()
	args := map[string]any{"to": "0x00000000000000000000000000000000000e2e05", "amount": "30", "asset": "USDT"}
	args["confirm"] = c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	require.Equal(t, "confirmed", c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["status"])
	c.stdin.Close()
	require.NoError(t, c.cmd.Wait())

	before, times := stateFiles(t, state), modTimes(t, state)
	require.NotEmpty(t, before)
	out := policy()
	require.Contains(t, out, "USDT per day: 30 / 100, 70 left", "the day's spend is read from the journal")
	require.Contains(t, out, "kept in the journal")
	require.Equal(t, before, stateFiles(t, state), "policy changed no byte under the state directory")
	require.Equal(t, times, modTimes(t, state), "policy touched no file or directory")
}

// runPolicy runs `walletgate policy` in env and returns what it printed.
func runPolicy(t *testing.T, env []string) string {
	t.Helper()
	cmd := exec.Command(binary, "policy")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// modTimes are the modification times of everything under dir, itself
// included.
func modTimes(t *testing.T, dir string) map[string]time.Time {
	t.Helper()
	times := map[string]time.Time{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			times[p] = fi.ModTime()
		}
		return err
	}))
	return times
}
