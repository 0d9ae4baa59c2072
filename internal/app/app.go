// Package app builds walletgate's server from its configuration — chain,
// key, caps, journal, shared state, approvals, tools — and returns one value
// that holds it until Close.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
	"github.com/walletgate/walletgate/tools/confirm"
)

// Options are what New builds from. Config is the operator's; the rest is
// the command's.
type Options struct {
	Config policy.Config
	// Dev serves on the embedded dev chain (walletgate-devnet, run as a
	// child process) instead of the configured node.
	Dev bool
	// Node is the configured node, opened by OpenNode as early as the
	// command can (its chain-id round trip overlaps the rest of the start);
	// nil: New opens it. Unused with Dev. The caller closes it.
	Node *Node
	// Logger logs to stderr; nil discards.
	Logger *slog.Logger
	// Version is the build's version, for the journal and the MCP server.
	Version string
	// Shared opens the shared state in PostgreSQL (WALLETGATE_STATE_URL):
	// set in walletgate-shared, nil in walletgate, which then refuses every
	// write when the variable is set.
	Shared SharedOpener
	// Approvals starts the person's approval page and terminal, for a
	// human-mode server with a key and write tools; nil starts none. Its
	// error leaves the write tools off (logged), not the server, unless
	// ApprovalsRequired.
	Approvals func(root string, deps tools.Deps) (*Approvals, error)
	// ApprovalsRequired makes an error of Approvals stop the start (the
	// service's passkey page: no write that needs the person is served
	// without the person's page).
	ApprovalsRequired bool
	// Service marks a server run as a system service (tools.Deps.Service).
	Service bool
	// Early lets New return before the configured node answered its
	// chain-id check, with one chain: the server can answer initialize and
	// tools/list from the configuration while the start-up batch is in
	// flight, and its tool calls wait for Ready (tools.Chains.Hold). Without
	// it (several chains, the dev chain, shared state or no
	// WALLETGATE_CHAIN_ID, which wait anyway), New waits.
	Early bool

	// With several chains: the key opened once for all of them, and the
	// one session they share (chains.go).
	key     *openedKey
	session string
}

// Approvals is a started approval page: the broker the tools ask, where
// the page is, and how to stop it.
type Approvals struct {
	Hub   *confirm.Approvals
	Page  string          // tools.Deps.ApprovalPage: "" keeps the page's address from clients
	Way   tools.PersonWay // how the person reaches the page
	Close func()
}

// App is a built server: its dependencies and the tools' state, ready to
// serve once New returned. Close undoes what New opened. It is safe for
// concurrent use as the tools' Server is; Close is called once.
type App struct {
	deps      tools.Deps
	server    *tools.Server
	approvals *Approvals
	cleanup   func()
	// parts are the chains' Apps with several chains (chains.go), the
	// default first; chains serves them all (or server alone).
	parts  []*App
	chains *tools.Chains
	// ready, with Options.Early, is the node's check still under way
	// (Ready); rebuilt is the App built in this one's place when the
	// journal opened turned out to be another chain's.
	ready   func() error
	rebuilt atomic.Pointer[App]
}

// New builds the server. It waits for the node's chain-id check (started by
// OpenNode) before it returns: nothing is served from a node on another
// chain. When the journal opened while the node was being asked belongs to
// another chain with the same id, it is undone, having written nothing, and
// the node's genesis's own namespace is opened instead. On error everything
// opened is closed.
func New(ctx context.Context, o Options) (*App, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if len(o.Config.ChainIDs()) > 1 {
		return newChains(ctx, o)
	}
	a, err := newChain(ctx, o)
	if err != nil {
		return nil, err
	}
	a.chains = tools.ChainsOf(a.server)
	return a, nil
}

// newChain is New of one chain.
func newChain(ctx context.Context, o Options) (*App, error) {
	if o.Early && !o.Dev {
		return newEarly(ctx, o)
	}
	o.Early = false
	var genesis common.Hash
	for {
		a, err := build(ctx, o, genesis)
		var other *otherChainError
		if !o.Dev && genesis == (common.Hash{}) && errors.As(err, &other) {
			a.Close()
			genesis = other.Genesis
			continue
		}
		if err != nil {
			a.Close()
			return nil, err
		}
		return a, nil
	}
}

// build wires once (see wire), starts the approvals and builds the tools
// while the node's answer is awaited, then waits for it.
func build(ctx context.Context, o Options, genesis common.Hash) (*App, error) {
	deps, root, ready, cleanup, err := wire(ctx, o, genesis)
	a := &App{cleanup: cleanup}
	if err != nil {
		return a, err
	}
	cfg := o.Config
	if o.Approvals != nil && cfg.Confirm == policy.ConfirmHuman && deps.Signer != nil && cfg.Tools != "read" {
		// No approval page for a node on another chain. Early, the page
		// starts while the node is asked (it needs only the configuration:
		// the wallet and the chain id configured), and no preview reaches
		// it before the check passed: every tool call waits for it.
		if !o.Early {
			if err := ready(); err != nil {
				return a, err
			}
		}
		p, err := o.Approvals(root, deps)
		if err != nil && o.ApprovalsRequired {
			return a, err
		}
		if err != nil {
			o.Logger.Error("human approval cannot start: write tools stay off", "err", err)
		} else {
			a.approvals = p
			deps.Approvals, deps.ApprovalPage, deps.Way = p.Hub, p.Page, p.Way
		}
	}
	deps.Service = o.Service
	a.deps = deps
	a.server = tools.New(deps)
	if o.Early {
		a.ready = ready // Ready waits
		return a, nil
	}
	// Built; now the node must have said it is on the configured chain,
	// and the journal's binding that it is the journal's.
	return a, ready()
}

// newEarly is newChain that returns before the node's answer (Options.Early).
// Ready waits for it; when it says that the journal opened belongs to
// another chain with the same id, the App is built again with the node's
// genesis (waiting, this time) and the first one's tool calls go to the
// second's (tools.Chains.Hold).
func newEarly(ctx context.Context, o Options) (*App, error) {
	a, err := build(ctx, o, common.Hash{})
	if err != nil {
		a.Close()
		return nil, err
	}
	pending := a.ready
	a.ready = sync.OnceValue(func() error {
		err := pending()
		var other *otherChainError
		if !errors.As(err, &other) {
			return err
		}
		// Nothing was written to the first journal: undo what the first
		// build opened (its tools stay registered, and forward), its
		// approval page included (the second build starts its own).
		if a.approvals != nil && a.approvals.Close != nil {
			a.approvals.Close()
		}
		first := a.cleanup
		a.approvals, a.cleanup = nil, nil
		first()
		o.Early = false
		b, err := build(ctx, o, other.Genesis)
		if err != nil {
			b.Close()
			return err
		}
		b.chains = tools.ChainsOf(b.server)
		a.rebuilt.Store(b)
		return nil
	})
	return a, nil
}

// Ready waits for the node's start-up check of an App built with
// Options.Early (at once for any other) and says its outcome. After it
// returned nil, Deps, AllDeps and Server are the ones that serve. Safe for
// concurrent use; ctx ends the wait only, not the check.
func (a *App) Ready(ctx context.Context) error {
	if a.ready == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- a.ready() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hold makes the tool calls of the MCP server built from Server wait for
// Ready, and go to the rebuilt App's chain when there is one. Nothing to
// hold without Options.Early.
func (a *App) Hold() {
	if a.ready == nil {
		return
	}
	a.chains.Hold(func(ctx context.Context) (*tools.Chains, error) {
		if err := a.Ready(ctx); err != nil {
			return nil, err
		}
		if b := a.rebuilt.Load(); b != nil {
			return b.chains, nil
		}
		return nil, nil
	})
}

// live is the App that serves: the rebuilt one, once Ready built one. It
// does not wait.
func (a *App) live() *App {
	if b := a.rebuilt.Load(); b != nil {
		return b
	}
	return a
}

// Deps is what the default chain's server was built from (the chain, the
// key, the caps, the journal, the approvals).
func (a *App) Deps() tools.Deps { return a.live().deps }

// AllDeps is what every chain's server was built from, the default first:
// a session of a service builds its own tools' state from them.
func (a *App) AllDeps() []tools.Deps {
	if len(a.parts) == 0 {
		return []tools.Deps{a.live().deps}
	}
	var all []tools.Deps
	for _, p := range a.parts {
		all = append(all, p.deps)
	}
	return all
}

// Server is the tools' state New built: every chain's.
func (a *App) Server() *tools.Chains { return a.live().chains }

// Close stops the approval page, writes the session's end to the journal
// (and the shared state) and closes them, the key's chain client and the dev
// chain. A nil App closes nothing.
func (a *App) Close() error {
	if a == nil {
		return nil
	}
	if a.ready != nil {
		_ = a.ready() // a check under way (it ends with its context) may still rebuild: after it
	}
	if a.approvals != nil && a.approvals.Close != nil {
		a.approvals.Close()
	}
	for _, p := range a.parts {
		p.Close()
	}
	if a.cleanup != nil {
		a.cleanup()
	}
	a.rebuilt.Load().Close()
	return nil
}

// UsageError is a configuration the operator must change (the message says
// how); the command exits with its usage status.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }
