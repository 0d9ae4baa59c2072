package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/walletgate/walletgate/internal/app"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
)

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
	// the rest of the start is built and served while it is in flight
	// (initialize and tools/list say nothing the node decides); tool calls
	// wait for it (app.Options.Early). A signal ends the check as it ends
	// everything else.
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n *app.Node
	if !*dev {
		n = app.OpenNode(base, cfg)
		defer n.Close()
	}
	ctx, stop := signal.NotifyContext(base, os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer context.AfterFunc(ctx, cancel)()

	a, err := app.New(ctx, app.Options{Config: cfg, Dev: *dev, Node: n, Logger: logger, Version: versionString(), Shared: shared(), Early: true,
		Approvals: func(root string, deps tools.Deps) (*app.Approvals, error) {
			p, err := startApprovals(root, deps, logger, stderr)
			if err != nil {
				return nil, err
			}
			return &app.Approvals{Hub: p.hub, Page: p.pageURL, Way: p.way, Close: p.Close}, nil
		}})
	if err != nil {
		return err
	}
	defer a.Close()
	a.Hold()
	deps := a.Deps()
	ms := a.Server().MCP(deps.Version)
	for i, d := range a.AllDeps() {
		net := policy.LookupNetwork(d.Chain.ChainID().Uint64())
		logger.Info("serving MCP on stdio", "wallet", d.Address.Hex(), "network", net.Name, "kind", string(net.Kind), "rpc", d.Chain.Host(), "default", i == 0)
	}
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
		if err := a.Ready(recovering); err != nil {
			if recovering.Err() == nil {
				logger.Error("the node's start-up check failed: every tool call is refused (NODE_CHECK_FAILED) until this is fixed and walletgate restarted", "err", err)
			}
			return
		}
		lines, err := a.Server().Reconcile(recovering)
		for _, l := range lines {
			logger.Warn("recovered: " + l)
		}
		switch {
		case recovering.Err() != nil:
			logger.Info("stopping before the recovery of journaled transactions finished; the next start goes on with it")
		case err != nil:
			logger.Error("recovery of journaled transactions failed; they stay pending", "err", err)
		default:
			// The line tests wait for before they assert that recovery sent
			// nothing more: everything it does is done by now.
			logger.Info("recovery of journaled transactions finished", "transactions", len(lines))
		}
	}()
	err = serveStdio(ctx, ms, os.Stdin, os.Stdout, stderr)
	stopRecovery()
	<-recovered
	// A confirm past its signature finishes before the process stops.
	if !a.Server().Drain(drainTimeout) {
		logger.Warn("stopping with a confirm still under way; the next start follows it up")
	}
	if err == nil && ctx.Err() == nil {
		// A node check that failed is the exit status, as it was when
		// nothing was served before it passed.
		err = a.Ready(ctx)
	}
	return err
}

// drainTimeout bounds how long a stopping walletgate waits for confirms
// under way (their broadcast and receipt).
const drainTimeout = 90 * time.Second

// parseFlags parses a subcommand's flags: -h asks for the usage text; a bad
// flag or a stray argument is a command-line error (its level's usage on
// stderr).
func parseFlags(fs *flag.FlagSet, argv []string) error {
	if err := fs.Parse(argv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return cmdLinef(fs.Name(), "%v (see walletgate --help)", err)
	}
	if fs.NArg() > 0 {
		return cmdLinef(fs.Name(), "unexpected argument %q (see walletgate --help)", fs.Arg(0))
	}
	return nil
}

// newLogger logs to stderr at the configured level.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
