package main

// `walletgate policy`: what an assistant connected with this environment
// may do right now. Rules: it opens nothing for writing — no journal is
// created, appended to, repaired or sealed, no chain binding written — and
// reads the wallet's journal as the server would find it (journal.Snapshot),
// or the shared state in PostgreSQL read-only, so that the caps it shows as
// used are the server's.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

// cmdPolicy explains in plain text what an assistant connected with the
// current environment may do right now.
func cmdPolicy(argv []string, stdout, stderr io.Writer) error {
	dev := len(argv) == 1 && argv[0] == "--dev"
	if len(argv) > 0 && !dev {
		return usagef("usage: walletgate policy [--dev]")
	}
	cfg, err := policy.Load(os.Environ())
	if err != nil {
		return err
	}
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var deps tools.Deps
	cleanup, err := policyDeps(ctx, cfg, dev, logger, &deps)
	defer cleanup()
	if err != nil {
		return err
	}
	text, err := tools.New(deps).PolicyText(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, text) // it says so when writes are refused for an unusable journal
	return nil
}

// policyDeps builds what the policy reads, as wire does for the server, but
// with the journal read once (journal.ReadSnapshot) in the namespace of the
// node's chain, or the shared state opened read-only, and nothing written.
func policyDeps(ctx context.Context, cfg policy.Config, dev bool, logger *slog.Logger, deps *tools.Deps) (cleanup func(), err error) {
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	root := cfg.StateDir
	if dev {
		d, c, err := startDev(ctx, cfg)
		if err != nil {
			return cleanup, err
		}
		undo = append(undo, d.Close, c.Close)
		*deps = tools.Deps{Chain: c, Signer: signer.Dev(), Address: signer.DevAddress, SwapsOff: d.SwapsOff()}
	} else {
		n := openNode(ctx, cfg)
		undo = append(undo, n.close)
		if n.err != nil {
			return cleanup, n.err
		}
		s, addr, err := wallet(cfg)
		if err != nil {
			return cleanup, err
		}
		if err := n.ready(); err != nil {
			return cleanup, err
		}
		*deps = tools.Deps{Chain: n.c, Signer: s, Address: addr}
		if root == "" {
			if root, err = stateRoot(cfg); err != nil {
				return cleanup, err
			}
		}
	}
	deps.Config, deps.Logger, deps.Version = cfg, logger, versionString()
	defaults := tools.DefaultCaps
	if dev {
		defaults = tools.DevCaps
	}
	if deps.Caps, err = tools.ResolveCaps(ctx, deps.Chain, cfg, defaults); err != nil {
		return cleanup, usagef("%v", err)
	}
	deps.Session = newSession()
	if deps.Signer == nil {
		return cleanup, nil // a watch-only wallet keeps no journal
	}
	if cfg.StateURL != "" {
		// The caps, nonces and open transactions are the database's (the
		// local journal keeps only this host's calls).
		if sharedState == nil {
			deps.JournalErr = errNoSharedState()
			return cleanup, nil
		}
		r, err := sharedState.view(ctx, cfg, deps.Chain.ChainID().Uint64(), deps.Chain.Genesis(), deps.Address)
		if err != nil {
			deps.JournalErr = err
			return cleanup, nil
		}
		undo = append(undo, r.Close)
		deps.Recorder = r
		return cleanup, nil
	}
	if root == "" {
		// The dev chain without a state directory is new, and so is its
		// (temporary) journal.
		return cleanup, nil
	}
	ns, err := chooseNamespace(root, deps.Chain.ChainID().Uint64(), deps.Address, deps.Chain.Genesis(), logger)
	if err != nil {
		deps.JournalErr = err
		return cleanup, nil
	}
	snap, err := journal.ReadSnapshot(ns.dir)
	if err != nil {
		deps.JournalErr = err
		return cleanup, nil
	}
	deps.Recorder, deps.JournalPath = snap, snap.Path()
	return cleanup, nil
}
