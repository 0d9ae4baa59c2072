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
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/walletgate/walletgate/internal/app"
	"github.com/walletgate/walletgate/policy"
)

// sharedState is the PostgreSQL backend: set by shared_pg.go in
// walletgate-shared, nil in walletgate.
var sharedState sharedBackend

// sharedBackend opens and verifies the shared state.
type sharedBackend interface {
	app.SharedOpener
	// verify is `audit verify` of the database (and the local journals).
	verify(cfg policy.Config, stdout io.Writer) error
}

// shared is sharedState for app.Options: nil (no interface holding a nil)
// in walletgate.
func shared() app.SharedOpener {
	if sharedState == nil {
		return nil
	}
	return sharedState
}

// envSharedExec marks a process that walletgate replaced with
// walletgate-shared: one that still has no backend was built without the tag,
// and must not replace itself again.
const envSharedExec = "_WALLETGATE_SHARED_EXEC" // outside WALLETGATE_*: not an operator setting

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
		return fmt.Errorf("WALLETGATE_STATE_URL is set, and %s was started for it, but it has no PostgreSQL client either: it was built without -tags shared; %s", app.SharedBinary(), app.BuildSharedHint("."))
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("WALLETGATE_STATE_URL is set and needs %s, but this executable's path is unknown (%v): start %s directly", app.SharedBinary(), err, app.SharedBinary())
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	dir := filepath.Dir(exe)
	p := filepath.Join(dir, app.SharedBinary())
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return usagef("WALLETGATE_STATE_URL is set: the shared state needs %s, not found beside walletgate (in %s): %s", app.SharedBinary(), dir, app.BuildSharedHint(dir))
	}
	err = execImage(p, append([]string{p}, argv...), append(os.Environ(), envSharedExec+"=1"))
	if errors.Is(err, errNoExec) {
		return usagef("WALLETGATE_STATE_URL is set: on this platform walletgate cannot become %s; start %s (in %s) instead of walletgate, with the same configuration", app.SharedBinary(), app.SharedBinary(), dir)
	}
	return fmt.Errorf("WALLETGATE_STATE_URL is set, but starting %s failed: %w", p, err)
}

// errNoExec: this platform cannot replace a process's image.
var errNoExec = errors.New("exec is not available on this platform")
