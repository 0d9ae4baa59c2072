package main_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// copyBinaries copies walletgate (and, with devnet, walletgate-devnet beside
// it) into a fresh directory, as a user installing them would, and returns
// the copied walletgate.
func copyBinaries(t *testing.T, devnet bool) string {
	t.Helper()
	dir := t.TempDir()
	pairs := [][2]string{{binary, "walletgate"}}
	if devnet {
		pairs = append(pairs, [2]string{devnetBin, "walletgate-devnet"})
	}
	for _, p := range pairs {
		b, err := os.ReadFile(p[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, p[1]), b, 0o755))
	}
	return filepath.Join(dir, "walletgate")
}

// pathWithout is PATH minus any directory holding a walletgate-devnet.
func pathWithout() string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "walletgate-devnet")); err != nil {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// A walletgate without walletgate-devnet says exactly how to build it.
func TestDevWithoutDevnetBinaryNamesTheBuildCommand(t *testing.T) {
	bin := copyBinaries(t, false)
	for _, args := range [][]string{{"--dev"}, {"devnet", "--http", "127.0.0.1:0"}, {"demo"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = "/"
		var stderr bytes.Buffer
		cmd.Env, cmd.Stderr = append(cleanEnv("WALLETGATE_STATE_DIR="+t.TempDir()), "PATH="+pathWithout()), &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v", args)
		require.Equal(t, 2, ee.ExitCode(), "%v: %s", args, stderr.String())
		want := "go build -o " + filepath.Join(filepath.Dir(bin), "walletgate-devnet") + " ./cmd/walletgate-devnet"
		require.Contains(t, stderr.String(), want, "%v", args)
	}
}

// A binary copied out of the repository and started from / with --dev
// refuses swaps in words before the documented install step and offers them
// after it.
func TestCopiedBinaryOffersSwapsAfterInstallArtifacts(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(root, "testdata", "node_modules", "@uniswap", "v3-core")); err != nil {
		t.Fatal(swapTestsNeedArtifacts)
	}
	bin := copyBinaries(t, true)
	data := t.TempDir()
	env := func() []string {
		return append(cleanEnv(), "XDG_DATA_HOME="+data) // the last one wins in exec
	}
	quote := map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "10"}

	before := startBinaryIn(t, bin, "/", env(), "--dev")
	before.initialize()
	res := before.callTool("wallet_swap_quote", quote)
	require.Equal(t, true, res["isError"], text(res))
	require.True(t, strings.HasPrefix(text(res), "SWAPS_UNAVAILABLE: "), text(res))
	require.Contains(t, text(res), "install-artifacts")

	// The documented step, run in the source tree.
	install := exec.Command(filepath.Join(filepath.Dir(bin), "walletgate-devnet"), "install-artifacts")
	install.Dir, install.Env = root, env()
	out, err := install.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), filepath.Join(data, "walletgate", "dev-artifacts"))

	after := startBinaryIn(t, bin, "/", env(), "--dev")
	after.initialize()
	res = after.callTool("wallet_swap_quote", quote)
	require.Nil(t, res["isError"], text(res))
	require.Contains(t, toolNames(after), "wallet_swap")
}

// The dev chain never outlives walletgate: killed with SIGKILL (no deferred
// cleanup runs), its child still stops, because its stdin pipe closes.
func TestDevChainStopsWhenWalletgateIsKilled(t *testing.T) {
	c := startServer(t, cleanEnv(), "--dev")
	c.initialize()
	// Logged before serving, but stderr is read apart from stdout: it may
	// reach the test after the initialize answer.
	pidRE := regexp.MustCompile(`devnet_pid=(\d+)`)
	require.Eventually(t, func() bool { return pidRE.MatchString(c.stderr.String()) }, 10*time.Second, 10*time.Millisecond, "no devnet_pid logged")
	m := pidRE.FindStringSubmatch(c.stderr.String())
	pid, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.True(t, alive(pid), "the dev chain should run while walletgate does")
	t.Cleanup(func() {
		if alive(pid) { // the failure below: leave no orphan behind either
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})

	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 50*time.Millisecond, "walletgate-devnet (pid %d) outlived walletgate", pid)
}

// alive reports whether pid runs (a zombie waiting for its reaper does not).
func alive(pid int) bool {
	if p, err := os.FindProcess(pid); err != nil || p.Signal(syscall.Signal(0)) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

// walletgate-devnet keeps a dev key file it finds (so a client config can
// name a stable path), but never touches a file holding another key.
func TestDevnetKeyFileReusedOnlyIfItIsTheDevKey(t *testing.T) {
	run := func(path string) (string, error) {
		cmd := exec.Command(devnetBin, "--http", "127.0.0.1:0", "--key-file", path, "--stop-with-stdin")
		cmd.Env = cleanEnv()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, _ := bufio.NewReader(out).ReadString('\n')
		stdin.Close()
		werr := cmd.Wait()
		if werr != nil {
			return stderr.String(), werr
		}
		return line, nil
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "dev.key")
	first, err := run(path)
	require.NoError(t, err, first)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	again, err := run(path) // the same file, kept
	require.NoError(t, err, again)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)

	other := filepath.Join(dir, "other.key")
	require.NoError(t, os.WriteFile(other, []byte(strings.Repeat("11", 32)+"\n"), 0o600))
	msg, err := run(other)
	require.Error(t, err)
	require.Contains(t, msg, "not the dev key")
	got, _ := os.ReadFile(other)
	require.Equal(t, strings.Repeat("11", 32)+"\n", string(got), "another key is never overwritten")
}
