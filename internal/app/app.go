// Package app builds walletgate's server from its configuration — chain,
// key, caps, journal, shared state, approvals, tools — and returns one value
// that holds it until Close.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

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
		if err := ready(); err != nil { // no approval page for a node on another chain
			return a, err
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
	// Built; now the node must have said it is on the configured chain,
	// and the journal's binding that it is the journal's.
	return a, ready()
}

// Deps is what the default chain's server was built from (the chain, the
// key, the caps, the journal, the approvals).
func (a *App) Deps() tools.Deps { return a.deps }

// AllDeps is what every chain's server was built from, the default first:
// a session of a service builds its own tools' state from them.
func (a *App) AllDeps() []tools.Deps {
	if len(a.parts) == 0 {
		return []tools.Deps{a.deps}
	}
	var all []tools.Deps
	for _, p := range a.parts {
		all = append(all, p.deps)
	}
	return all
}

// Server is the tools' state New built: every chain's.
func (a *App) Server() *tools.Chains { return a.chains }

// Close stops the approval page, writes the session's end to the journal
// (and the shared state) and closes them, the key's chain client and the dev
// chain. A nil App closes nothing.
func (a *App) Close() error {
	if a == nil {
		return nil
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
	return nil
}

// UsageError is a configuration the operator must change (the message says
// how); the command exits with its usage status.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }
