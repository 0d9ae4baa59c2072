package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/server"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

// dialTimeout bounds the start-up chain id check.
const dialTimeout = 15 * time.Second

func cmdServe(argv []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("walletgate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dev := fs.Bool("dev", false, "serve on an embedded dev chain")
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	cfg, err := policy.Load(os.Environ())
	if err != nil {
		return err
	}
	logger := newLogger(stderr, cfg.LogLevel)
	if cfg.Confirm == policy.ConfirmHuman {
		if err := humanModeUnavailable(); err != nil {
			return err
		}
	}

	// The node's chain id is asked for before anything else is done: the
	// round trip is the one step of a start that waits on the network, and
	// the rest of the start is built while it is in flight. A signal ends
	// the check as it ends everything else.
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n *node
	if !*dev {
		n = openNode(base, cfg)
		defer n.close()
	}
	ctx, stop := signal.NotifyContext(base, os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer context.AfterFunc(ctx, cancel)()

	var (
		deps tools.Deps
		srv  *tools.Server
		ms   *server.MCPServer
		page *approvals
	)
	cleanup, err := wireOnItsChain(ctx, cfg, *dev, n, logger, func(d tools.Deps, root string, ready func() error) error {
		deps = d
		if cfg.Confirm == policy.ConfirmHuman && deps.Signer != nil && cfg.Tools != "read" {
			if err := ready(); err != nil { // no approval page for a node on another chain
				return err
			}
			a, err := startApprovals(root, deps, logger, stderr)
			if err != nil {
				logger.Error("human approval cannot start: write tools stay off", "err", err)
			} else {
				page = a
				deps.Approvals, deps.ApprovalPage, deps.Way = a.broker, a.pageURL, a.way
			}
		}
		srv = tools.New(deps)
		ms = srv.MCP(deps.Version)
		// Built; now the node must have said it is on the configured
		// chain, and the journal's binding that it is the journal's.
		return ready()
	})
	defer cleanup()
	if page != nil {
		defer page.Close()
	}
	if err != nil {
		return err
	}
	net := policy.LookupNetwork(deps.Chain.ChainID().Uint64())
	logger.Info("serving MCP on stdio", "wallet", deps.Address.Hex(), "network", net.Name, "kind", string(net.Kind), "rpc", deps.Chain.Host())
	// What a crash or a lost connection left open is settled in the
	// background: answering initialize waits for no network work. A client
	// that leaves while it is under way stops it (a receipt awaited is not
	// awaited further; nothing is decided on a lookup cut short) before the
	// journal is closed, and the next start goes on from there.
	recovering, stopRecovery := context.WithCancel(ctx)
	defer stopRecovery()
	recovered := make(chan struct{})
	go func() {
		defer close(recovered)
		lines, err := srv.Reconcile(recovering)
		for _, l := range lines {
			logger.Warn("recovered: " + l)
		}
		switch {
		case recovering.Err() != nil:
			logger.Info("stopping before the recovery of journaled transactions finished; the next start goes on with it")
		case err != nil:
			logger.Error("recovery of journaled transactions failed; they stay pending", "err", err)
		}
	}()
	err = serveStdio(ctx, ms, os.Stdin, os.Stdout, stderr)
	stopRecovery()
	<-recovered
	// A confirm past its signature finishes before the process stops.
	if !srv.Drain(drainTimeout) {
		logger.Warn("stopping with a confirm still under way; the next start follows it up")
	}
	return err
}

// drainTimeout bounds how long a stopping walletgate waits for confirms
// under way (their broadcast and receipt).
const drainTimeout = 90 * time.Second

// parseFlags parses a subcommand's flags: -h asks for the usage text; a bad
// flag or a stray argument is a usage error.
func parseFlags(fs *flag.FlagSet, argv []string) error {
	if err := fs.Parse(argv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usagef("%v (see walletgate --help)", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (see walletgate --help)", fs.Arg(0))
	}
	return nil
}

// wireOnItsChain runs wire and then build (what uses the wired tools before
// the node's answer is waited for: build calls ready), and runs them once
// more when the journal opened while the node was being asked turns out to
// belong to another chain with the same id (ready said *otherChainError):
// the second wire knows the node's genesis and opens that chain's own
// namespace, and the first is undone having written nothing. It returns
// the cleanup of the wiring in use.
func wireOnItsChain(ctx context.Context, cfg policy.Config, dev bool, n *node, logger *slog.Logger,
	build func(deps tools.Deps, root string, ready func() error) error) (cleanup func(), err error) {
	var genesis common.Hash
	for {
		deps, root, ready, cleanup, err := wire(ctx, cfg, dev, n, logger, genesis)
		if err == nil {
			err = build(deps, root, ready)
		}
		var other *otherChainError
		if !dev && genesis == (common.Hash{}) && errors.As(err, &other) {
			cleanup()
			genesis = other.Genesis
			continue
		}
		return cleanup, err
	}
}

// wire builds everything the tools need from the configuration: the chain
// (the embedded dev chain, or the configured node after the chain-id check:
// n, opened by the caller, or opened here when n is nil),
// the key, the caps and the journal. It returns the state root in use ("" for
// a watch-only wallet). cleanup undoes it, in every case.
//
// The journal's namespace is the chain's genesis's (chooseNamespace). With
// the configured node, genesis is zero the first time: the journal of the
// first namespace is opened while the node is asked, and ready, besides
// the node's check, binds it to the node's genesis or says
// *otherChainError (the caller wires again with that genesis, see
// wireOnItsChain). On the dev chain, or with genesis set, the namespace is
// known before the journal is opened. Nothing is written to a journal
// before its binding is settled.
func wire(ctx context.Context, cfg policy.Config, dev bool, n *node, logger *slog.Logger, genesis common.Hash) (deps tools.Deps, root string, ready func() error, cleanup func(), err error) {
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	ready = func() error { return nil }
	if dev {
		d, c, err := startDev(ctx, cfg)
		if err != nil {
			return deps, root, ready, cleanup, err
		}
		undo = append(undo, d.Close, c.Close)
		deps = tools.Deps{Chain: c, Signer: signer.Dev(), Address: signer.DevAddress, SwapsOff: d.SwapsOff()}
		logger.Info("embedded dev chain started", "chain_id", devChainID, "rpc", d.Info.RPC, "devnet_pid", d.cmd.Process.Pid, "dev_account", signer.DevAddress.Hex(),
			"USDT", d.Info.Contracts["USDT"], "DAI", d.Info.Contracts["DAI"], "USDC", d.Info.Contracts["USDC"])
		if deps.SwapsOff != "" {
			logger.Warn(deps.SwapsOff)
		}
		if cfg.StateDir == "" {
			// The dev chain is new every start; so is its journal.
			tmp, err := os.MkdirTemp("", "walletgate-dev-state-")
			if err != nil {
				return deps, root, ready, cleanup, err
			}
			undo = append(undo, func() { os.RemoveAll(tmp) })
			root = tmp
		}
	} else {
		// The key, the caps, the journal and the tools are built while
		// the chain-id round trip is in flight (with the chain id the
		// operator configured, which the node must turn out to have).
		// Nothing is served before it answered. A key refused is still
		// reported before anything the node says.
		if n == nil {
			n = openNode(ctx, cfg)
			undo = append(undo, n.close)
		}
		if n.err != nil {
			return deps, root, ready, cleanup, n.err
		}
		c := n.c
		ready = n.ready
		s, addr, err := wallet(cfg)
		if err != nil {
			return deps, root, ready, cleanup, err
		}
		if cfg.ChainID == 0 { // the node's id is asked for the refusal only
			return deps, root, ready, cleanup, ready()
		}
		deps = tools.Deps{Chain: c, Signer: s, Address: addr}
	}
	deps.Config, deps.Logger, deps.Version = cfg, logger, versionString()
	defaults := tools.DefaultCaps
	if dev {
		defaults = tools.DevCaps
	}
	if deps.Caps, err = tools.ResolveCaps(ctx, deps.Chain, cfg, defaults); err != nil {
		if nerr := ready(); nerr != nil {
			return deps, root, ready, cleanup, nerr // what the node said comes first
		}
		return deps, root, ready, cleanup, usagef("%v", err)
	}
	if deps.Session == "" {
		deps.Session = newSession()
	}
	if deps.Signer != nil { // a watch-only wallet writes nothing to account for
		if root == "" {
			if root, err = stateRoot(cfg); err != nil {
				return deps, root, ready, cleanup, err
			}
		}
		chainID := deps.Chain.ChainID().Uint64()
		if dev {
			genesis = deps.Chain.Genesis()
		}
		ns, nsErr := chooseNamespace(root, chainID, deps.Address, genesis, logger)
		if nsErr != nil {
			logger.Error("the spend journal cannot be used: writes are refused until this is fixed; reads keep working", "dir", ns.dir, "err", nsErr)
			deps.JournalErr = nsErr
		} else {
			deps.Journal, deps.JournalErr = openJournal(root, ns.dir, deps.Session, logger)
			// The node's answer settles the binding: this chain's journal
			// (bound now if it was not), or another's (nothing is written
			// to it, and the caller wires again). A journal that cannot
			// be used is bound to nothing, but one bound to another
			// genesis is still another chain's: a chain of its own does
			// not inherit its refusal.
			j, checked := deps.Journal, ready
			ready = sync.OnceValue(func() error {
				if err := checked(); err != nil {
					return err
				}
				g := deps.Chain.Genesis()
				if j == nil {
					if ns.bound != (common.Hash{}) && ns.bound != g {
						return &otherChainError{Dir: ns.dir, ChainID: chainID, Bound: ns.bound, Genesis: g}
					}
					return nil
				}
				if err := bindJournal(ns, chainID, g); err != nil {
					return err
				}
				if ns.bound == (common.Hash{}) {
					logger.Info("the journal is bound to its chain: it is used on this chain only (another chain with the same id gets a journal namespace of its own)", "dir", ns.dir, "chain_id", chainID, "genesis", g.Hex())
				}
				// The session's start is the first record this session
				// writes, once the journal is known to be this chain's
				// (another chain's journal gets nothing). It is written
				// without an fsync: nothing waits on it, and the session's
				// next synced record (or Close) makes it durable.
				if _, err := j.AppendUnsynced(tools.KindSessionStart, journal.SessionStart{V: journal.Version, Version: versionString(), PID: os.Getpid(),
					ChainID: chainID, Genesis: g.Hex(), Wallet: deps.Address.Hex(), Signer: deps.Signer.Kind()}); err != nil {
					logger.Error("recording the session's start in the journal failed", "err", err)
				}
				return nil
			})
		}
		if j := deps.Journal; j != nil {
			bound := ready
			// This session's own reservations are never phantoms, and its
			// end is written after its start.
			started := make(chan struct{})
			go func() {
				defer close(started)
				if bound() != nil {
					return // not this chain's journal, or no chain at all
				}
				// A reservation whose process died before it signed sent
				// nothing: give it back, on the record.
				released, err := j.ReleasePhantoms(journal.ProcessAlive)
				for _, o := range released {
					logger.Warn("released a phantom cap reservation: its process died after reserving and before signing, so nothing was sent", "reservation", o.ID, "pid", o.PID, "change", o.Change)
				}
				if err != nil {
					logger.Error("releasing phantom cap reservations failed; they stay counted", "err", err)
				}
			}()
			undo = append(undo, func() {
				<-started
				if bound() == nil {
					_, _ = j.Append(tools.KindSessionEnd, journal.SessionEnd{V: journal.Version, PID: os.Getpid()})
					// Seal a long tail now, so that the next start reads little.
					if err := j.SealIfLonger(journal.StopTail); err != nil {
						logger.Warn("sealing the journal's segment at stop failed; the next start reads it whole", "err", err)
					}
				}
				j.Close()
			})
			if genesis != (common.Hash{}) { // known: bound before anything is written
				if err := bound(); err != nil {
					return deps, root, ready, cleanup, err
				}
			}
		}
		switch {
		case cfg.StateURL == "" || deps.JournalErr != nil:
		case sharedState == nil:
			// Never reached from run (it becomes walletgate-shared first);
			// caps kept in this host's journal alone would not be shared,
			// so every write is refused.
			deps.JournalErr = errNoSharedState()
		default:
			// The database records this session: not before the node is
			// known to be on the configured chain.
			if err := ready(); err != nil {
				return deps, root, ready, cleanup, err
			}
			r, err := sharedState.open(ctx, cfg, chainID, deps.Chain.Genesis(), deps.Address, deps.Session, deps.Signer.Kind(), deps.Caps.Canonical(cfg.AllowUncappedTokens), logger)
			if err != nil {
				deps.JournalErr = err
			} else {
				deps.Recorder = r
				undo = append(undo, func() {
					if r.Connected() { // a database that never answered is not waited for
						_, _ = r.Append(tools.KindSessionEnd, journal.SessionEnd{V: journal.Version, PID: os.Getpid()})
					}
					r.Close()
				})
			}
		}
	}
	return deps, root, ready, cleanup, nil
}

// newLogger logs to stderr at the configured level.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// startDev starts the dev chain (walletgate-devnet, as a child process) and
// connects to it over loopback JSON-RPC like to any node.
func startDev(ctx context.Context, cfg policy.Config) (*devChild, *chain.Client, error) {
	if len(cfg.RPC) > 0 {
		return nil, nil, usagef("--dev runs its own chain: unset WALLETGATE_RPC, or drop --dev to use that node")
	}
	if cfg.ChainID != 0 && cfg.ChainID != devChainID {
		return nil, nil, usagef("--dev runs chain id %d but WALLETGATE_CHAIN_ID is %d: unset it or set it to %d", devChainID, cfg.ChainID, devChainID)
	}
	if cfg.Keystore != "" || cfg.KeyFile != "" || cfg.Address != nil {
		return nil, nil, usagef("--dev signs with the public dev key: unset WALLETGATE_KEYSTORE, WALLETGATE_KEY_FILE and WALLETGATE_ADDRESS, or drop --dev")
	}
	d, err := startDevChild(ctx, cfg.DevArtifacts, os.Stderr)
	if err != nil {
		return nil, nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := chain.Dial(dctx, []string{d.Info.RPC})
	if err != nil {
		d.Close()
		return nil, nil, fmt.Errorf("dev chain: %w", err)
	}
	if got := c.ChainID(); !got.IsUint64() || got.Uint64() != devChainID {
		c.Close()
		d.Close()
		return nil, nil, fmt.Errorf("dev chain: the node at %s reports chain id %s, not %d", c.Host(), got, devChainID)
	}
	return d, c, nil
}

// node is the configured node, its chain-id check under way.
type node struct {
	c     *chain.Client // nil when err is set
	ready func() error  // the check's outcome, waited for once
	err   error         // not opened: no RPC configured, or it cannot be dialled
}

// openNode opens the configured node and starts the chain-id check, which
// ready waits for (or for ctx to end).
func openNode(ctx context.Context, cfg policy.Config) *node {
	if len(cfg.RPC) == 0 {
		return &node{err: usagef("%s", noNodeHint())}
	}
	c, err := chain.Open(ctx, cfg.RPC, new(big.Int).SetUint64(cfg.ChainID))
	if err != nil {
		return &node{err: fmt.Errorf("cannot reach the node: %w", err)}
	}
	c.SetCallTimeout(cfg.RPCTimeout)
	c.SetBatchLimit(cfg.RPCBatchLimit)
	checked := make(chan error, 1)
	go func() { checked <- checkChain(ctx, c, cfg) }()
	return &node{c: c, ready: sync.OnceValue(func() error { return <-checked })}
}

// noNodeHint says what to do when no node is configured. --dev is
// suggested only where it can run: with walletgate-devnet beside walletgate
// or on PATH (a bundle holds walletgate alone, and its form has the node's
// field).
func noNodeHint() string {
	if _, err := findDevnet(); err == nil {
		return "WALLETGATE_RPC is not set: set it to your node's URL (and WALLETGATE_CHAIN_ID to its chain id), or run walletgate --dev for the embedded dev chain"
	}
	return "WALLETGATE_RPC is not set: set it to your node's URL, and WALLETGATE_CHAIN_ID to its chain id (in Claude Desktop's extension settings: Node URL and Chain id)"
}

// close closes the node's client, if it was opened.
func (n *node) close() {
	if n.c != nil {
		n.c.Close()
	}
}

// checkChain asks the node behind c (opened with the configured chain id)
// for its chain id and refuses one other than the configured, or, with no
// WALLETGATE_CHAIN_ID, names the node's in the refusal.
func checkChain(ctx context.Context, c *chain.Client, cfg policy.Config) error {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	got, err := c.CheckChainID(dctx)
	if err != nil {
		return fmt.Errorf("cannot reach the node: %w", err)
	}
	switch {
	case cfg.ChainID == 0:
		return usagef("WALLETGATE_CHAIN_ID is not set: the node at %s reports chain id %s (%s); set WALLETGATE_CHAIN_ID=%s if that is the chain you mean",
			c.Host(), got, policy.LookupNetwork(got.Uint64()).Name, got)
	case !got.IsUint64() || got.Uint64() != cfg.ChainID:
		return usagef("chain id mismatch: WALLETGATE_CHAIN_ID is %d (%s) but the node at %s reports %s (%s); refusing to start. Point WALLETGATE_RPC at the right node or correct WALLETGATE_CHAIN_ID",
			cfg.ChainID, policy.LookupNetwork(cfg.ChainID).Name, c.Host(), got, policy.LookupNetwork(got.Uint64()).Name)
	}
	return nil
}

// wallet opens the configured key source, or the watch-only address.
func wallet(cfg policy.Config) (signer.Signer, common.Address, error) {
	switch {
	case cfg.Keystore != "":
		s, err := signer.FromKeystore(cfg.Keystore, cfg.PasswordFile)
		if err != nil {
			return nil, common.Address{}, err
		}
		return s, s.Address(), nil
	case cfg.KeyFile != "":
		s, err := signer.FromKeyFile(cfg.KeyFile)
		if err != nil {
			return nil, common.Address{}, err
		}
		return s, s.Address(), nil
	case cfg.Address != nil:
		return nil, *cfg.Address, nil
	}
	return nil, common.Address{}, usagef("no wallet configured: set WALLETGATE_KEYSTORE and WALLETGATE_PASSWORD_FILE, or WALLETGATE_KEY_FILE, or WALLETGATE_ADDRESS for a watch-only wallet (read tools only)")
}
