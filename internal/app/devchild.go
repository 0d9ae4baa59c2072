package app

// The dev chain as a child process: `walletgate --dev`, `walletgate demo` and
// `walletgate devnet` run walletgate-devnet, so this binary — which holds keys
// — links no Ethereum node.
//
// Rules of this file:
//   - The child is found beside this executable, else on PATH; a missing one
//     is an error naming the command that builds it.
//   - It is started with --stop-with-stdin and a pipe as its stdin: when this
//     process ends, however it ends, the pipe closes and the chain stops. No
//     orphan, on every platform, without signals.
//   - It is a node like any other: it is dialled over loopback JSON-RPC and
//     its chain id is checked like a configured node's.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// DevChainID is the dev chain's id (walletgate-devnet's devnet.ChainID,
// repeated so that this binary need not link the chain to know it).
const DevChainID = 1337

// devStartTimeout bounds the child's start, Uniswap deployment included
// (about a second; minutes only on a machine that is swapping).
const devStartTimeout = 60 * time.Second

// devnetBinary is the dev chain's executable name on this platform.
func devnetBinary() string {
	if runtime.GOOS == "windows" {
		return "walletgate-devnet.exe"
	}
	return "walletgate-devnet"
}

// buildDevnetHint is the exact command that builds the missing dev chain.
func buildDevnetHint(dir string) string {
	return fmt.Sprintf("build it beside walletgate with 'go build -o %s ./cmd/walletgate-devnet' in the walletgate source tree (or put it on PATH)",
		filepath.Join(dir, devnetBinary()))
}

// FindDevnet finds walletgate-devnet beside this executable, else on PATH.
func FindDevnet() (string, error) {
	dir := "."
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dir = filepath.Dir(exe)
		p := filepath.Join(dir, devnetBinary())
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(devnetBinary()); err == nil {
		return p, nil
	}
	return "", usagef("the dev chain needs %s, found neither beside walletgate (in %s) nor on PATH: %s", devnetBinary(), dir, buildDevnetHint(dir))
}

// devnetInfo is the JSON line walletgate-devnet prints on stdout.
type devnetInfo struct {
	RPC        string            `json:"rpc"`
	ChainID    uint64            `json:"chain_id"`
	DevAccount string            `json:"dev_account"`
	KeyFile    string            `json:"key_file"`
	Contracts  map[string]string `json:"contracts"`
	Swaps      string            `json:"swaps"`
}

// devChild is a running walletgate-devnet. Close stops it.
type devChild struct {
	cmd    *exec.Cmd
	stdin  io.Closer
	done   chan struct{}
	keyDir string
	Info   devnetInfo
}

// startDevChild starts walletgate-devnet on a free loopback port with its dev
// key in a private temporary directory (this process signs with the dev key
// in memory; the file is only for the chain's own report), and waits for its
// JSON line. artifacts, when set, is passed on as --artifacts.
func startDevChild(ctx context.Context, artifacts string, stderr io.Writer) (*devChild, error) {
	bin, err := FindDevnet()
	if err != nil {
		return nil, err
	}
	keyDir, err := os.MkdirTemp("", "walletgate-devnet-key-")
	if err != nil {
		return nil, fmt.Errorf("dev chain: key directory: %w", err)
	}
	args := []string{"--http", "127.0.0.1:0", "--key-file", filepath.Join(keyDir, "dev.key"), "--stop-with-stdin"}
	if artifacts != "" {
		args = append(args, "--artifacts", artifacts)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = stderr
	setChildAttrs(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		os.RemoveAll(keyDir)
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(keyDir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(keyDir)
		return nil, fmt.Errorf("dev chain: start %s: %w", bin, err)
	}
	c := &devChild{cmd: cmd, stdin: stdin, done: make(chan struct{}), keyDir: keyDir}
	type lineOrErr struct {
		line string
		err  error
	}
	first := make(chan lineOrErr, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, err := r.ReadString('\n')
		first <- lineOrErr{line, err}
		_, _ = io.Copy(io.Discard, r) // nothing more is expected; never block the child
		_ = cmd.Wait()
		close(c.done)
	}()
	var got lineOrErr
	select {
	case got = <-first:
	case <-ctx.Done():
		c.Close()
		return nil, ctx.Err()
	case <-time.After(devStartTimeout):
		c.Close()
		return nil, fmt.Errorf("dev chain: %s printed nothing within %s", bin, devStartTimeout)
	}
	if got.err != nil {
		c.Close()
		return nil, fmt.Errorf("dev chain: %s stopped before it was ready (its error is above)", bin)
	}
	if err := json.Unmarshal([]byte(got.line), &c.Info); err != nil {
		c.Close()
		return nil, fmt.Errorf("dev chain: %s printed %q, not its JSON line: %w", bin, strings.TrimSpace(got.line), err)
	}
	if c.Info.ChainID != DevChainID || !strings.HasPrefix(c.Info.RPC, "http://127.0.0.1:") {
		c.Close()
		return nil, fmt.Errorf("dev chain: %s reported chain id %d at %q; expected chain id %d on http://127.0.0.1", bin, c.Info.ChainID, c.Info.RPC, DevChainID)
	}
	return c, nil
}

// SwapsOff is why the dev chain has no swaps, or "".
func (c *devChild) SwapsOff() string {
	if c.Info.Swaps == "on" {
		return ""
	}
	if c.Info.Swaps == "" {
		return "swaps are off: the dev chain did not say whether it deployed Uniswap"
	}
	return c.Info.Swaps
}

// Close stops the child: its stdin closes (it stops on that), and if it has
// not stopped within a few seconds it is killed. Safe to call more than once.
func (c *devChild) Close() {
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	_ = os.RemoveAll(c.keyDir)
}
