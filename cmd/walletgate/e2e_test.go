package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools/schemacheck"
)

// binary is the walletgate binary built once for these tests, with
// walletgate-devnet beside it (as an install puts them); devnetBinary is
// that one.
var binary, devnetBin string

// viaConnect is set by WALLETGATE_E2E_VIA=connect: every MCP session of
// these tests goes through walletgate service run and walletgate connect.
var viaConnect = os.Getenv("WALLETGATE_E2E_VIA") == "connect"

// dataHome is an empty XDG_DATA_HOME for every server: the Uniswap artifacts
// a developer installed under their own data directory must not change what
// a test sees.
var dataHome string

func TestMain(m *testing.M) {
	// A test run again in a private namespace (privateRoot) uses the
	// binaries its parent built.
	if dir := os.Getenv("WALLETGATE_E2E_BIN_DIR"); dir != "" {
		binary, devnetBin, dataHome = filepath.Join(dir, "walletgate"), filepath.Join(dir, "walletgate-devnet"), filepath.Join(dir, "data")
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "walletgate-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "walletgate")
	devnetBin = filepath.Join(dir, "walletgate-devnet")
	dataHome = filepath.Join(dir, "data")
	// walletgate-shared (the PostgreSQL client) beside walletgate, which
	// becomes it when WALLETGATE_STATE_URL is set.
	for _, b := range [][3]string{{binary, ".", ""}, {devnetBin, "../walletgate-devnet", ""}, {filepath.Join(dir, "walletgate-shared"), ".", "shared"}} {
		build := exec.Command("go", "build", "-tags", b[2], "-o", b[0], b[1])
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build", b[1]+":", err)
			os.Exit(1)
		}
	}
	if viaConnect {
		// Every session through the service and walletgate connect
		// (scripts/via-connect stands in for the binary).
		if err := os.Rename(binary, binary+"-real"); err != nil {
			panic(err)
		}
		shim, err := os.ReadFile("../../scripts/via-connect")
		if err != nil {
			panic(err)
		}
		if err := os.WriteFile(binary, shim, 0o755); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cleanEnv is the test process's environment without WALLETGATE_* variables,
// plus extra.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "WALLETGATE_") && !strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			env = append(env, kv)
		}
	}
	// No test opens a browser on this machine: a test of the opener sets
	// WALLETGATE_OPEN_BROWSER to a script of its own.
	if !slices.ContainsFunc(extra, func(kv string) bool { return strings.HasPrefix(kv, "WALLETGATE_OPEN_BROWSER=") }) {
		env = append(env, "WALLETGATE_OPEN_BROWSER=off")
	}
	return append(append(env, "XDG_DATA_HOME="+dataHome), extra...)
}

// withStateDir gives a server a state directory of its own unless the test
// chose one: tests must never write to the user's state.
func withStateDir(t *testing.T, env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "WALLETGATE_STATE_DIR=") {
			return env
		}
	}
	return append(env, "WALLETGATE_STATE_DIR="+t.TempDir())
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// stdioClient is a minimal, independent JSON-RPC client for an MCP server on
// stdio: it writes requests line by line and checks that every line the server
// writes on stdout is a JSON-RPC 2.0 message.
type stdioClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *syncBuffer
	nextID int
	// schemas are the output schemas tools/list gave (fetched at the first
	// callTool); every callTool result is checked against its tool's.
	schemas *schemacheck.Set
}

func startServer(t *testing.T, env []string, args ...string) *stdioClient {
	t.Helper()
	return startServerIn(t, "", env, args...)
}

// startServerIn starts walletgate in working directory dir ("" = this one).
func startServerIn(t *testing.T, dir string, env []string, args ...string) *stdioClient {
	t.Helper()
	return startBinaryIn(t, binary, dir, env, args...)
}

// startBinaryIn starts the walletgate binary bin in working directory dir.
func startBinaryIn(t *testing.T, bin, dir string, env []string, args ...string) *stdioClient {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = withStateDir(t, env)
	return startCommand(t, cmd)
}

// startCommand starts cmd, set up but for its pipes, as an MCP server on
// stdio.
func startCommand(t *testing.T, cmd *exec.Cmd) *stdioClient {
	t.Helper()
	// A child that outlives walletgate (a dev chain it failed to stop) keeps
	// stderr open; Wait must not hang on it, so the test can say so.
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	c := &stdioClient{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 64), stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	require.NoError(t, cmd.Start())
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return c
}

// stop closes walletgate's stdin and waits for it to exit.
func (c *stdioClient) stop() {
	c.t.Helper()
	c.stdin.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// send writes one raw line.
func (c *stdioClient) send(line string) {
	c.t.Helper()
	_, err := io.WriteString(c.stdin, line+"\n")
	require.NoError(c.t, err)
}

// next reads the next stdout line and checks it is a JSON-RPC 2.0 message.
func (c *stdioClient) next() map[string]any {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		require.True(c.t, ok, "server closed stdout; stderr:\n%s", c.stderr.String())
		var msg map[string]any
		require.NoError(c.t, json.Unmarshal([]byte(line), &msg), "stdout line is not JSON: %q", line)
		require.Equal(c.t, "2.0", msg["jsonrpc"], "stdout line is not JSON-RPC 2.0: %q", line)
		return msg
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no answer from the server; stderr:\n%s", c.stderr.String())
		return nil
	}
}

// request sends a request and returns its response, skipping notifications.
func (c *stdioClient) request(method string, params any) map[string]any {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	require.NoError(c.t, err)
	c.send(string(b))
	for {
		msg := c.next()
		if msg["id"] == float64(id) {
			return msg
		}
	}
}

func (c *stdioClient) initialize() map[string]any {
	c.t.Helper()
	res := c.request("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "e2e", "version": "0"},
	})
	require.Nil(c.t, res["error"])
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res["result"].(map[string]any)
}

// callTool returns the result object of a tools/call, checked against the
// tool's output schema as a strict client (the TypeScript SDK) checks it.
func (c *stdioClient) callTool(name string, args any) map[string]any {
	c.t.Helper()
	if c.schemas == nil {
		c.schemas = c.outputSchemas()
	}
	res := c.request("tools/call", map[string]any{"name": name, "arguments": args})
	require.Nil(c.t, res["error"], "tools/call %s: %v", name, res["error"])
	result := res["result"].(map[string]any)
	isError, _ := result["isError"].(bool)
	require.NoError(c.t, c.schemas.Check(name, result["structuredContent"], isError), "tools/call %s: %s", name, text(result))
	return result
}

// outputSchemas compiles the output schemas tools/list gives.
func (c *stdioClient) outputSchemas() *schemacheck.Set {
	c.t.Helper()
	res := c.request("tools/list", map[string]any{})
	require.Nil(c.t, res["error"], "tools/list: %v", res["error"])
	schemas := map[string]json.RawMessage{}
	for _, tl := range res["result"].(map[string]any)["tools"].([]any) {
		tool := tl.(map[string]any)
		b, err := json.Marshal(tool["outputSchema"])
		require.NoError(c.t, err)
		schemas[tool["name"].(string)] = b
	}
	set, err := schemacheck.Compile(schemas)
	require.NoError(c.t, err)
	return set
}

func text(result map[string]any) string {
	var parts []string
	for _, c := range result["content"].([]any) {
		parts = append(parts, c.(map[string]any)["text"].(string))
	}
	return strings.Join(parts, "\n")
}

func TestStdioDevServesExactlyTheReadTools(t *testing.T) {
	c := startServer(t, cleanEnv("WALLETGATE_TOOLS=read"), "--dev")
	init := c.initialize()
	require.Equal(t, "walletgate", init["serverInfo"].(map[string]any)["name"])
	require.Contains(t, init["instructions"], "confirm_token")

	list := c.request("tools/list", map[string]any{})["result"].(map[string]any)["tools"].([]any)
	var names []string
	for _, tl := range list {
		tool := tl.(map[string]any)
		names = append(names, tool["name"].(string))
		require.Equal(t, true, tool["annotations"].(map[string]any)["readOnlyHint"], tool["name"])
		require.NotNil(t, tool["outputSchema"], tool["name"])
	}
	require.ElementsMatch(t, []string{"wallet_address", "wallet_balance", "wallet_verify_tx", "wallet_policy", "wallet_swap_quote", "wallet_allowance"}, names)

	addr := c.callTool("wallet_address", map[string]any{})
	require.Equal(t, "0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c", addr["structuredContent"].(map[string]any)["address"])

	bal := c.callTool("wallet_balance", map[string]any{})["structuredContent"].(map[string]any)
	require.True(t, strings.HasPrefix(bal["eth"].(string), "8999.9"), "10000 ETH less 1000 wrapped for the pools and the deploy fees: %s", bal["eth"])
	tokens := bal["tokens"].([]any)
	require.Len(t, tokens, 4, "USDT, DAI, WETH, USDC")
	usdc := tokens[3].(map[string]any)
	require.Equal(t, map[string]any{"address": "0x04418AF818c2BC352F5957A35a2DC9fa22b091fd", "symbol": "USDC", "decimals": float64(6), "balance": "1000000", "known": true}, usdc)
	usdt := tokens[0].(map[string]any)
	require.Equal(t, "USDT", usdt["symbol"])
	require.Equal(t, "1000000", usdt["balance"])
	require.Equal(t, true, usdt["known"])

	pol := c.callTool("wallet_policy", map[string]any{})
	require.Equal(t, "dev", pol["structuredContent"].(map[string]any)["network_kind"])

	v := c.callTool("wallet_verify_tx", map[string]any{"tx": "0x" + strings.Repeat("1", 64)})
	require.Equal(t, false, v["structuredContent"].(map[string]any)["found"])
	bad := c.callTool("wallet_verify_tx", map[string]any{"tx": "0x12"})
	require.Equal(t, true, bad["isError"])
	require.True(t, strings.HasPrefix(text(bad), "BAD_TX: "), text(bad))
}

func TestStdioSurvivesMalformedAndOversizedMessages(t *testing.T) {
	c := startServer(t, cleanEnv(), "--dev")
	c.initialize()

	c.send(`{"jsonrpc":"2.0","id":99,"method":`) // truncated JSON
	msg := c.next()
	require.NotNil(t, msg["error"], "a parse error answers malformed JSON")

	// A 10 MB line: answered with an error at once, and the next request is
	// served at once too (no stall behind it).
	start := time.Now()
	c.send(`{"jsonrpc":"2.0","id":100,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 10<<20) + `"}}`)
	msg = c.next()
	require.NotNil(t, msg["error"], "an oversized message is dropped and answered with an error")
	require.Less(t, time.Since(start), 3*time.Second, "the oversized line is answered promptly")
	start = time.Now()
	c.callTool("wallet_address", map[string]any{})
	require.Less(t, time.Since(start), 3*time.Second, "the next request is served at once")

	// Duplicate keys in arguments reach walletgate's strict parser unharmed.
	c.nextID++
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wallet_balance","arguments":{"address":"0x00000000000000000000000000000000000000c1","address":"0x00000000000000000000000000000000000000c2"}}}`, c.nextID))
	res := c.next()["result"].(map[string]any)
	require.Equal(t, true, res["isError"])
	require.Contains(t, text(res), "BAD_ARGUMENT")

	// Still serving.
	addr := c.callTool("wallet_address", map[string]any{})
	require.Equal(t, "dev", addr["structuredContent"].(map[string]any)["signer"])
}

// Protocol versions before 2026-07-28 begin with initialize: a request of
// theirs before it is a JSON-RPC error. A 2026-07-28-era request (version and
// capabilities in _meta, no handshake) is served.
func TestStdioRequestsBeforeInitializeByEra(t *testing.T) {
	c := startServer(t, cleanEnv(), "--dev")
	for _, req := range []map[string]any{
		{"method": "tools/list", "params": map[string]any{}},
		{"method": "tools/call", "params": map[string]any{"name": "wallet_address", "arguments": map[string]any{}}},
		{"method": "tools/call", "params": map[string]any{"name": "wallet_address", "arguments": map[string]any{},
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2025-06-18"}}},
	} {
		res := c.request(req["method"].(string), req["params"])
		e, _ := res["error"].(map[string]any)
		require.NotNil(t, e, "%v before initialize must be refused: %v", req, res)
		require.Equal(t, float64(-32600), e["code"])
		require.Contains(t, e["message"], "initialize first")
		require.Nil(t, res["result"])
	}
	require.Nil(t, c.request("ping", map[string]any{})["error"], "ping is allowed before initialize")

	modern := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	list := c.request("tools/list", map[string]any{"_meta": modern})
	require.Nil(t, list["error"], "the 2026-07-28 era needs no handshake: %v", list)
	res := c.request("tools/call", map[string]any{"name": "wallet_address", "arguments": map[string]any{}, "_meta": modern})
	require.Nil(t, res["error"], "%v", res)
	require.Equal(t, "dev", res["result"].(map[string]any)["structuredContent"].(map[string]any)["signer"])

	c.initialize()
	require.Equal(t, "dev", c.callTool("wallet_address", map[string]any{})["structuredContent"].(map[string]any)["signer"])
}

// devnetProc runs `walletgate devnet` and returns what it printed.
type devnetInfo struct {
	RPC        string            `json:"rpc"`
	ChainID    uint64            `json:"chain_id"`
	DevAccount string            `json:"dev_account"`
	KeyFile    string            `json:"key_file"`
	Contracts  map[string]string `json:"contracts"`
	PriceFeeds map[string]string `json:"price_feeds"`
}

// swapTestsNeedArtifacts is what a swap test fails with when the dev chain
// came up without Uniswap (devnet.SwapTestsNeedArtifacts, which this
// package's tests do not link).
const swapTestsNeedArtifacts = "the swap tests need the Uniswap npm artifacts and the dev chain found none (it looks for testdata/node_modules upward from the test's directory, then in the user's data directory): run 'cd testdata && npm ci --omit=peer' in the walletgate source tree (./scripts/test does it), then test again"

func startDevnet(t *testing.T) devnetInfo {
	t.Helper()
	info, _ := startStoppableDevnet(t)
	return info
}

// startStoppableDevnet is startDevnet with a stop the test may call before
// its end (again is fine).
func startStoppableDevnet(t *testing.T) (devnetInfo, func()) {
	t.Helper()
	// Through `walletgate devnet` (which runs walletgate-devnet), with the
	// default key file: devnet/dev.key under the state directory.
	state := t.TempDir()
	info, stop := runDevnet(t, state)
	require.True(t, strings.HasPrefix(info.RPC, "http://127.0.0.1:"), info.RPC)
	require.Equal(t, filepath.Join(state, "devnet", "dev.key"), info.KeyFile, "the key file is at its stable default")
	st, err := os.Stat(info.KeyFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	return info, stop
}

// runDevnet runs `walletgate devnet --http 127.0.0.1:0 args…` with state as
// its state directory and returns the line it printed and a stop the test
// may call before its end (again is fine; it runs at the end anyway).
func runDevnet(t *testing.T, state string, args ...string) (devnetInfo, func()) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"devnet", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = cleanEnv("WALLETGATE_STATE_DIR=" + state)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	stop := sync.OnceFunc(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	t.Cleanup(stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "devnet stderr:\n%s", stderr.String())
	var info devnetInfo
	require.NoError(t, json.Unmarshal([]byte(line), &info), "devnet printed %q", line)
	for _, asset := range []string{"ETH", "USDC", "USDT", "DAI"} {
		require.Regexp(t, `^0x[0-9a-fA-F]{40}$`, info.PriceFeeds[asset], "the JSON line lists the %s/USD feed under price_feeds: %s", asset, line)
	}
	return info, stop
}

func TestWrongChainIDRefusesToStart(t *testing.T) {
	info := startDevnet(t)
	cmd := exec.Command(binary)
	cmd.Env = withStateDir(t, cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=11155111", "WALLETGATE_KEY_FILE="+info.KeyFile))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 2, exit.ExitCode())
	require.Empty(t, stdout.String(), "nothing but JSON-RPC on stdout, and here nothing at all")
	require.Contains(t, stderr.String(), "11155111")
	require.Contains(t, stderr.String(), "1337")
	require.Contains(t, stderr.String(), "chain id mismatch")
}

func TestSecondWalletgateOnDevnetOverHTTP(t *testing.T) {
	info := startDevnet(t)
	c := startServer(t, cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile))
	c.initialize()
	addr := c.callTool("wallet_address", map[string]any{})["structuredContent"].(map[string]any)
	require.Equal(t, info.DevAccount, addr["address"])
	require.Equal(t, "key-file", addr["signer"])
	require.Equal(t, strings.TrimSuffix(info.RPC, "/"), addr["rpc"])

	bal := c.callTool("wallet_balance", map[string]any{"tokens": []string{"USDT", info.Contracts["DAI"]}})["structuredContent"].(map[string]any)
	tokens := bal["tokens"].([]any)
	require.Equal(t, "1000000", tokens[0].(map[string]any)["balance"])
	require.Equal(t, "DAI", tokens[1].(map[string]any)["symbol"])
}

// A client that leaves before its handshake (stdin closed at once): each
// walletgate stops without an error — nothing to settle is started against
// a journal being closed — and the journal still shows each session's
// start and end, in that order.
func TestClientLeavingAtOnceStopsCleanly(t *testing.T) {
	info := startDevnet(t)
	state := t.TempDir()
	for range 3 {
		cmd := exec.Command(binary)
		cmd.Env = cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile, "WALLETGATE_STATE_DIR="+state)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), stderr.String())
		require.Empty(t, stdout.String())
		require.NotContains(t, stderr.String(), "level=ERROR")
		require.NotContains(t, stderr.String(), "level=WARN")
	}
	journal, err := os.ReadFile(filepath.Join(state, "1337-"+info.DevAccount, "journal.jsonl"))
	require.NoError(t, err)
	var kinds []string
	for _, l := range strings.Split(strings.TrimSpace(string(journal)), "\n") {
		var r struct{ Kind string }
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		kinds = append(kinds, r.Kind)
	}
	require.Equal(t, strings.Repeat("session_start session_end ", 3), strings.Join(kinds, " ")+" ")
}

// The session's start is journaled before anything is served (once the
// journal is bound to the node's chain), so it is there when initialize is
// answered, and it is the session's first record: a first tool call's
// records follow it.
func TestSessionStartIsJournaledBeforeServing(t *testing.T) {
	info := startDevnet(t)
	state := t.TempDir()
	c := startServer(t, cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile, "WALLETGATE_STATE_DIR="+state))
	kinds := func() string {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(state, "1337-"+info.DevAccount, "journal.jsonl"))
		require.NoError(t, err)
		var out []string
		for _, l := range strings.Split(string(raw), "\n") {
			if l == "" {
				continue // the end of the last line, or no record yet
			}
			var r struct{ Kind string }
			require.NoError(t, json.Unmarshal([]byte(l), &r))
			out = append(out, r.Kind)
		}
		return strings.Join(out, " ")
	}
	// initialize is answered without waiting for the node (issue 40), and
	// the journal is opened once the node's check has passed: the session's
	// start is journaled before any tool call is served, which waits for it.
	c.initialize()
	c.callTool("wallet_address", map[string]any{})
	require.Equal(t, "session_start tool_start tool_end", kinds(), "the session's start comes before the first call's records")
}

// A node that accepts the connection and never answers eth_chainId: a
// SIGTERM during the start-up check stops walletgate at once (the check
// ends with the signal), not after the check's 15 s bound; nothing is
// served.
func TestSignalDuringTheChainIDCheckStopsAtOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			select {
			case accepted <- struct{}{}:
			default:
			}
			go func() { _, _ = io.Copy(io.Discard, conn) }() // reads, never answers; ends when walletgate does
		}
	}()
	key := filepath.Join(t.TempDir(), "dev.key")
	require.NoError(t, os.WriteFile(key, []byte(strings.Repeat("ab", 32)+"\n"), 0o600))
	cmd := exec.Command(binary)
	cmd.Env = withStateDir(t, cleanEnv("WALLETGATE_RPC=http://"+l.Addr().String(), "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+key))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	t.Cleanup(func() { stdin.Close() })
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("walletgate never asked the node")
	}
	_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("walletgate went on waiting for the node after SIGTERM; stderr:\n%s", stderr.String())
	}
	// Read once it has exited, when everything it wrote is there. Since
	// initialize is answered without waiting for the node (issue 40), the
	// answer to it may be there; nothing else is: no tool ran.
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if line == "" {
			continue
		}
		var msg map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &msg), "stdout carries JSON-RPC only: %q", line)
		require.EqualValues(t, 1, msg["id"], "only the initialize was answered: %q", line)
	}
	l.Close()
}

func TestStartupRefusals(t *testing.T) {
	dir := t.TempDir()
	loose := filepath.Join(dir, "loose.key")
	require.NoError(t, os.WriteFile(loose, []byte(strings.Repeat("ab", 32)+"\n"), 0o644))
	cases := []struct {
		name string
		env  []string
		args []string
		says []string
	}{
		{"no rpc", nil, nil, []string{"WALLETGATE_RPC is not set", "--dev"}},
		{"typo variable", []string{"WALLETGATE_CAP_PERTX=ETH=1"}, []string{"--dev"}, []string{"WALLETGATE_CAP_PERTX", "WALLETGATE_CAP_PER_TX"}},
		{"bad ttl", []string{"WALLETGATE_CONFIRM_TTL=5 minutes"}, []string{"--dev"}, []string{"WALLETGATE_CONFIRM_TTL", "5 minutes"}},
		{"rpc with secret", []string{"WALLETGATE_RPC=ftp://user:s3cret-canary@example.invalid/KEY-canary"}, nil, []string{"WALLETGATE_RPC"}},
		{"group-readable key", []string{"WALLETGATE_RPC=http://127.0.0.1:1", "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE=" + loose}, nil, []string{"chmod 600"}},
		{"unknown flag", nil, []string{"--devv"}, []string{"-devv", "--help"}},
		// Every capped asset has every window (issue 25, finding 5): a
		// per-transaction list without the assets of the dev defaults.
		{"cap in one window", []string{"WALLETGATE_CAP_PER_TX=USDT=25"}, []string{"--dev"}, []string{
			"ETH is in WALLETGATE_CAP_PER_SESSION and WALLETGATE_CAP_PER_DAY but missing from WALLETGATE_CAP_PER_TX",
			"WALLETGATE_CAP_PER_TX=USDT=25,ETH=<amount>,", "USDC=<amount>", "=unlimited in a window that should not limit it"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(binary, c.args...)
			cmd.Env = withStateDir(t, cleanEnv(c.env...))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			require.Error(t, err)
			require.Empty(t, stdout.String())
			for _, s := range c.says {
				require.Contains(t, stderr.String(), s)
			}
			require.NotContains(t, stderr.String(), "canary")
		})
	}
}

func TestHelpListsEveryVariable(t *testing.T) {
	out, err := exec.Command(binary, "--help").Output()
	require.NoError(t, err)
	readme, err := os.ReadFile("../../docs/operators.md") // the operators' reference
	require.NoError(t, err)
	for _, v := range policy.Variables {
		require.Contains(t, string(out), v.Name)
		require.Contains(t, string(readme), "`"+v.Name+"`", "docs/operators.md documents %s", v.Name)
	}
	// The cap defaults: --help and the reference's variable table state the
	// table the ledger enforces.
	require.NotContains(t, string(out), "no caps")
	for i, name := range []string{policy.EnvCapPerTx, policy.EnvCapPerSession, policy.EnvCapPerDay} {
		require.Contains(t, string(out), "(default: "+policy.DefaultCaps[i]+"; on the embedded dev chain "+policy.DevCaps[i]+")", name)
		row := ""
		for _, line := range strings.Split(string(readme), "\n") {
			if strings.HasPrefix(line, "| `"+name+"` |") {
				row = line
			}
		}
		require.NotEmpty(t, row, "README's variable table has a row for %s", name)
		require.True(t, strings.HasSuffix(row, "| `"+policy.DefaultCaps[i]+"`; on the embedded dev chain `"+policy.DevCaps[i]+"` |"), "README row of %s states the default table: %s", name, row)
	}
}

func TestStdioDevOffersSendAsDestructive(t *testing.T) {
	c := startServer(t, cleanEnv(), "--dev")
	c.initialize()
	list := c.request("tools/list", map[string]any{})["result"].(map[string]any)["tools"].([]any)
	found := false
	for _, tl := range list {
		tool := tl.(map[string]any)
		if tool["name"] == "wallet_send" {
			found = true
			ann := tool["annotations"].(map[string]any)
			require.Equal(t, false, ann["readOnlyHint"])
			require.Equal(t, true, ann["destructiveHint"])
			amount := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)["amount"].(map[string]any)
			require.Contains(t, amount["description"], "counts against the caps (see wallet_policy)")
		}
	}
	require.True(t, found)
}

// TestStdioTwoStepSendOnDevnet drives the built binary over stdio against
// `walletgate devnet`, and checks the effect through the node itself.
func TestStdioTwoStepSendOnDevnet(t *testing.T) {
	info := startDevnet(t)
	c := startServer(t, cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile,
		"WALLETGATE_CAP_PER_TX=ETH=0.1,USDT=50", "WALLETGATE_CAP_PER_SESSION=ETH=0.5,USDT=80", "WALLETGATE_CAP_PER_DAY=ETH=0.5,USDT=80"))
	c.initialize()
	node, err := ethclient.Dial(info.RPC)
	require.NoError(t, err)
	defer node.Close()
	usdt := common.HexToAddress(info.Contracts["USDT"])
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e01")
	balance := func() *big.Int {
		out, err := node.CallContract(context.Background(), ethereum.CallMsg{To: &usdt, Data: append(common.FromHex("0x70a08231"), common.LeftPadBytes(to.Bytes(), 32)...)}, nil)
		require.NoError(t, err)
		return new(big.Int).SetBytes(out)
	}
	require.Zero(t, balance().Sign())

	args := map[string]any{"to": to.Hex(), "amount": "42.5", "asset": "USDT"}
	preview := c.callTool("wallet_send", args)
	sc := preview["structuredContent"].(map[string]any)
	require.Equal(t, "confirmation_required", sc["status"])
	require.Contains(t, text(preview), "PREVIEW")
	require.Zero(t, balance().Sign(), "a preview moves nothing")

	args["confirm"] = sc["confirm_token"]
	done := c.callTool("wallet_send", args)
	require.Nil(t, done["isError"], text(done))
	require.Equal(t, "confirmed", done["structuredContent"].(map[string]any)["status"])
	require.Equal(t, big.NewInt(42_500_000), balance())

	// The session cap (80) now leaves 37.5: 40 is refused, and nothing moves.
	over := c.callTool("wallet_send", map[string]any{"to": to.Hex(), "amount": "40", "asset": "USDT"})
	require.Equal(t, true, over["isError"])
	require.True(t, strings.HasPrefix(text(over), "CAP_EXCEEDED: "), text(over))
	require.Equal(t, big.NewInt(42_500_000), balance())
}

// Without the Uniswap npm artifacts (run outside the source tree), --dev
// starts all the same, says in one line how to enable swaps, and the swap
// tools answer that step as a refusal (a code, not a protocol error).
func TestDevWithoutArtifactsRefusesSwapsWithTheStep(t *testing.T) {
	// Nothing to find upward from a temporary directory, nor beside the binary.
	c := startServerIn(t, t.TempDir(), cleanEnv(), "--dev")
	c.initialize()
	require.ElementsMatch(t, []string{"wallet_address", "wallet_balance", "wallet_verify_tx", "wallet_policy", "wallet_swap_quote", "wallet_send", "wallet_swap", "wallet_allowance", "wallet_approve", "wallet_sign_typed_data", "wallet_pay_x402"}, toolNames(c))
	require.Contains(t, c.stderr.String(), "swaps are off: the dev chain found no Uniswap artifacts")
	res := c.callTool("wallet_swap_quote", map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "1"})
	require.Equal(t, true, res["isError"])
	require.True(t, strings.HasPrefix(text(res), "SWAPS_UNAVAILABLE: "), text(res))
	require.Contains(t, text(res), "walletgate-devnet install-artifacts")
}

func toolNames(c *stdioClient) []string {
	list := c.request("tools/list", map[string]any{})["result"].(map[string]any)["tools"].([]any)
	var names []string
	for _, tl := range list {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	return names
}
