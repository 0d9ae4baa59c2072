package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"time"
)

// proc is a child process whose Wait runs exactly once, in the background.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func startProc(cmd *exec.Cmd) (*proc, error) {
	setParentDeath(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop asks the process to end (by the signal, or, for nil, by closing its
// stdin first), waits up to grace, then kills it. It is safe to call twice.
func (p *proc) stop(sig os.Signal, closeStdin io.Closer, grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	if closeStdin != nil {
		_ = closeStdin.Close()
	}
	if sig != nil {
		_ = p.cmd.Process.Signal(sig)
	}
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// tailBuffer keeps the last max bytes written to it: a child's stderr, for
// error messages, without growing with a long run.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// cleanEnv is the environment without any WALLETGATE_* variable, plus extra.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "WALLETGATE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// ---- walletgate devnet ----

type devnetInfo struct {
	RPC        string            `json:"rpc"`
	ChainID    uint64            `json:"chain_id"`
	DevAccount string            `json:"dev_account"`
	KeyFile    string            `json:"key_file"`
	Contracts  map[string]string `json:"contracts"`
	Swaps      string            `json:"swaps"`
}

// startDevnet starts the dev chain with its key file at keyFile (never the
// user's state directory).
func startDevnet(ctx context.Context, bin, keyFile string, extra ...string) (*proc, devnetInfo, *tailBuffer, error) {
	args := append([]string{"--http", "127.0.0.1:0", "--key-file", keyFile}, extra...)
	if !strings.HasPrefix(filepath.Base(bin), "walletgate-devnet") {
		args = append([]string{"devnet"}, args...) // an older walletgate with the chain inside
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv()
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, devnetInfo{}, nil, err
	}
	p, err := startProc(cmd)
	if err != nil {
		return nil, devnetInfo{}, nil, fmt.Errorf("start devnet: %w", err)
	}
	type lineOrErr struct {
		line string
		err  error
	}
	ch := make(chan lineOrErr, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, err := r.ReadString('\n')
		ch <- lineOrErr{line, err}
		_, _ = io.Copy(io.Discard, r)
	}()
	var got lineOrErr
	select {
	case got = <-ch:
	case <-time.After(3 * time.Minute):
		got.err = errors.New("no line within 3 minutes")
	case <-ctx.Done():
		got.err = ctx.Err()
	}
	fail := func(err error) (*proc, devnetInfo, *tailBuffer, error) {
		p.stop(os.Interrupt, nil, 10*time.Second)
		return nil, devnetInfo{}, nil, fmt.Errorf("devnet: %w; its stderr:\n%s", err, stderr.String())
	}
	if got.err != nil {
		return fail(got.err)
	}
	var info devnetInfo
	if err := json.Unmarshal([]byte(got.line), &info); err != nil {
		return fail(fmt.Errorf("printed %q: %w", got.line, err))
	}
	if !strings.HasPrefix(info.RPC, "http://127.0.0.1:") {
		return fail(fmt.Errorf("serves on %s, not on 127.0.0.1", info.RPC))
	}
	return p, info, stderr, nil
}

// ---- MCP over stdio ----

type stdoutLine struct {
	b []byte
	t time.Time // when it was read
}

// mcpClient is a minimal line-level JSON-RPC client for walletgate on stdio.
type mcpClient struct {
	p      *proc
	stdin  io.WriteCloser
	lines  chan stdoutLine
	stderr *tailBuffer
	nextID int
}

func spawnWalletgate(bin string, env []string) (*mcpClient, time.Time, error) {
	return spawnWith(bin, nil, env)
}

// spawnWith starts bin with args as an MCP server on stdio.
func spawnWith(bin string, args, env []string) (*mcpClient, time.Time, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, time.Time{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, time.Time{}, err
	}
	c := &mcpClient{stdin: stdin, lines: make(chan stdoutLine, 256), stderr: &tailBuffer{max: 64 << 10}}
	cmd.Stderr = c.stderr
	t0 := time.Now()
	p, err := startProc(cmd)
	if err != nil {
		return nil, t0, fmt.Errorf("start walletgate: %w", err)
	}
	c.p = p
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 32<<20)
		for sc.Scan() {
			c.lines <- stdoutLine{append([]byte(nil), sc.Bytes()...), time.Now()}
		}
		close(c.lines)
	}()
	return c, t0, nil
}

func (c *mcpClient) close() { c.p.stop(nil, c.stdin, 10*time.Second) }

// notify writes one notification line.
func (c *mcpClient) notify(method string) error {
	_, err := io.WriteString(c.stdin, `{"jsonrpc":"2.0","method":"`+method+`"}`+"\n")
	return err
}

type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// request sends one request and waits for its answer (skipping
// notifications), at most timeout. It returns the result and the time the
// request was written and the answer read.
func (c *mcpClient) request(ctx context.Context, method string, params any, timeout time.Duration) (json.RawMessage, time.Time, time.Time, error) {
	c.nextID++
	id := c.nextID
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	sent := time.Now()
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		return nil, sent, time.Time{}, fmt.Errorf("%s: write to walletgate: %w; its stderr:\n%s", method, err, c.stderr.String())
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	want := strconv.Itoa(id)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				return nil, sent, time.Time{}, fmt.Errorf("%s: walletgate closed stdout; its stderr:\n%s", method, c.stderr.String())
			}
			var a rpcAnswer
			if err := json.Unmarshal(l.b, &a); err != nil || a.JSONRPC != "2.0" {
				return nil, sent, l.t, fmt.Errorf("%s: walletgate wrote a line that is not JSON-RPC 2.0: %.200q", method, l.b)
			}
			if string(a.ID) != want {
				continue // a notification, or a late answer
			}
			if a.Error != nil {
				return nil, sent, l.t, fmt.Errorf("%s: JSON-RPC error %d: %s", method, a.Error.Code, a.Error.Message)
			}
			return a.Result, sent, l.t, nil
		case <-deadline.C:
			return nil, sent, time.Time{}, fmt.Errorf("%s: no answer within %s; walletgate's stderr:\n%s", method, timeout, c.stderr.String())
		case <-ctx.Done():
			return nil, sent, time.Time{}, ctx.Err()
		}
	}
}

func (c *mcpClient) initialize(ctx context.Context) (time.Time, error) {
	_, _, at, err := c.request(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "walletgate-bench", "version": "1"},
	}, 60*time.Second)
	if err != nil {
		return at, err
	}
	return at, c.notify("notifications/initialized")
}

// toolResult is the part of a tools/call result the bench reads.
type toolResult struct {
	IsError    bool            `json:"isError"`
	Structured json.RawMessage `json:"structuredContent"`
	Content    []struct {
		Text string `json:"text"`
	} `json:"content"`
}

func (r toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// callTool calls a tool and returns its result and timing. A result with
// isError is returned as is; the caller decides.
func (c *mcpClient) callTool(ctx context.Context, name string, args map[string]any, timeout time.Duration) (toolResult, time.Time, time.Time, error) {
	raw, sent, recv, err := c.request(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, timeout)
	if err != nil {
		return toolResult{}, sent, recv, err
	}
	var r toolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, sent, recv, fmt.Errorf("tools/call %s: result is not a tool result: %w", name, err)
	}
	return r, sent, recv, nil
}

// ---- memory ----

type memInfo struct {
	VmRSSKiB   int64 `json:"vm_rss_kib"`
	VmHWMKiB   int64 `json:"vm_hwm_kib"`
	RssAnonKiB int64 `json:"rss_anon_kib"`
	RssFileKiB int64 `json:"rss_file_kib"`
}

// readMem reads VmRSS (resident now), VmHWM (peak resident) and the split of
// VmRSS into anonymous memory (heap, stacks: what the process allocated) and
// file-backed pages (the mapped binary, which the kernel may count in 2 MiB
// pieces when the page cache holds the file in large folios).
func readMem(pid int) (memInfo, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memInfo{}, err
	}
	var m memInfo
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.VmRSSKiB = n
		case "VmHWM:":
			m.VmHWMKiB = n
		case "RssAnon:":
			m.RssAnonKiB = n
		case "RssFile:":
			m.RssFileKiB = n
		}
	}
	if m.VmRSSKiB == 0 {
		return m, errors.New("no VmRSS in /proc/PID/status")
	}
	return m, nil
}
