package main

// The shared state in PostgreSQL (WALLETGATE_STATE_URL) lives in
// walletgate-shared: this command built with the tag "shared"
//
//	go build -tags shared -o walletgate-shared ./cmd/walletgate
//
// so that walletgate, the binary most people run, links no PostgreSQL
// client: 4 MB of code mapped into every process that holds a key, ~1 ms of
// every start (BENCHMARKS.md). A walletgate started with
// WALLETGATE_STATE_URL set becomes walletgate-shared, found beside it, with
// the same arguments and environment, before it reads a key or opens
// anything: one client configuration works with either binary.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// sharedState is the PostgreSQL backend: set by shared_pg.go in
// walletgate-shared, nil in walletgate.
var sharedState sharedBackend

// sharedBackend opens and verifies the shared state.
type sharedBackend interface {
	// open opens the wallet's shared state on the chain (its id and
	// genesis hash) for this session, records its start and releases the
	// reservations of hosts that died before signing; an error refuses
	// every write. capsInForce is this host's caps (caps.Canonical): the
	// wallet's first host's are the wallet's, and a host whose caps differ
	// writes nothing.
	open(ctx context.Context, cfg policy.Config, chainID uint64, genesis common.Hash, wallet common.Address, session, signerKind, capsInForce string, logger *slog.Logger) (sharedRecorder, error)
	// verify is `audit verify` of the database (and the local journals).
	verify(cfg policy.Config, stdout io.Writer) error
	// view opens the wallet's shared state on the chain for reading only
	// (`walletgate policy`): nothing is written to the database.
	view(ctx context.Context, cfg policy.Config, chainID uint64, genesis common.Hash, wallet common.Address) (sharedRecorder, error)
}

// sharedRecorder is the engine's recorder on the shared state.
type sharedRecorder interface {
	engine.Recorder
	Connected() bool // whether the database has answered
	Close()
}

// envSharedExec marks a process that walletgate replaced with
// walletgate-shared: one that still has no backend was built without the tag,
// and must not replace itself again.
const envSharedExec = "_WALLETGATE_SHARED_EXEC" // outside WALLETGATE_*: not an operator setting

// sharedBinary is walletgate-shared's executable name on this platform.
func sharedBinary() string {
	if runtime.GOOS == "windows" {
		return "walletgate-shared.exe"
	}
	return "walletgate-shared"
}

// buildSharedHint is the exact command that builds walletgate-shared.
func buildSharedHint(dir string) string {
	return fmt.Sprintf("build it beside walletgate with 'go build -tags shared -o %s ./cmd/walletgate' in the walletgate source tree",
		filepath.Join(dir, sharedBinary()))
}

// errNoSharedState is why a walletgate without the backend refuses writes
// when WALLETGATE_STATE_URL is set.
func errNoSharedState() error {
	return usagef("WALLETGATE_STATE_URL is set, but this binary has no PostgreSQL client (it is walletgate, not walletgate-shared): %s, and start that, or walletgate beside it",
		buildSharedHint("."))
}

// needsShared reports whether cmd, with this environment, must run as
// walletgate-shared.
func needsShared(cmd string) bool {
	return sharedState == nil && (cmd == "serve" || cmd == "audit" || cmd == "policy") && os.Getenv("WALLETGATE_STATE_URL") != ""
}

// becomeShared replaces this process with walletgate-shared beside the
// executable (never one found on PATH: this process holds a key), with
// argv and the environment. It returns only why it could not.
func becomeShared(argv []string) error {
	if os.Getenv(envSharedExec) != "" {
		return fmt.Errorf("WALLETGATE_STATE_URL is set, and %s was started for it, but it has no PostgreSQL client either: it was built without -tags shared; %s", sharedBinary(), buildSharedHint("."))
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("WALLETGATE_STATE_URL is set and needs %s, but this executable's path is unknown (%v): start %s directly", sharedBinary(), err, sharedBinary())
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	dir := filepath.Dir(exe)
	p := filepath.Join(dir, sharedBinary())
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return usagef("WALLETGATE_STATE_URL is set: the shared state needs %s, not found beside walletgate (in %s): %s", sharedBinary(), dir, buildSharedHint(dir))
	}
	err = execImage(p, append([]string{p}, argv...), append(os.Environ(), envSharedExec+"=1"))
	if errors.Is(err, errNoExec) {
		return usagef("WALLETGATE_STATE_URL is set: on this platform walletgate cannot become %s; start %s (in %s) instead of walletgate, with the same configuration", sharedBinary(), sharedBinary(), dir)
	}
	return fmt.Errorf("WALLETGATE_STATE_URL is set, but starting %s failed: %w", p, err)
}

// errNoExec: this platform cannot replace a process's image.
var errNoExec = errors.New("exec is not available on this platform")
