package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

// ReadOnly builds the server as New does, for reading only (`walletgate
// policy`): it opens nothing for writing — no journal is created, appended
// to, repaired or sealed, no chain binding written — and reads the wallet's
// journal as the server would find it (journal.ReadSnapshot), or the shared
// state in PostgreSQL read-only, so that the caps it shows as used are the
// server's. o.Node, o.Approvals and o.Service are not used.
func ReadOnly(ctx context.Context, o Options) (*App, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ids := o.Config.ChainIDs()
	if len(ids) > 1 && o.Dev {
		return nil, usagef("--dev runs one chain, but WALLETGATE_CHAIN_ID lists %d: unset it, or drop --dev", len(ids))
	}
	all := &App{}
	var servers []*tools.Server
	for _, id := range ids {
		cfg := o.Config
		if len(ids) > 1 {
			cfg = o.Config.ForChain(id)
		}
		var deps tools.Deps
		cleanup, err := readOnlyDeps(ctx, cfg, o.Dev, o.Shared, o.Logger, o.Version, &deps)
		part := &App{cleanup: cleanup, deps: deps}
		if err != nil {
			part.Close()
			all.Close()
			if len(ids) > 1 {
				err = fmt.Errorf("chain %s (%d): %w", policy.NetworkSlug(id), id, err)
			}
			return nil, err
		}
		part.server = tools.New(deps)
		all.parts = append(all.parts, part)
		servers = append(servers, part.server)
	}
	all.deps, all.server = all.parts[0].deps, servers[0]
	all.chains = tools.ChainsOf(servers...)
	return all, nil
}

// readOnlyDeps builds what the policy reads, as wire does for the server, but
// with the journal read once (journal.ReadSnapshot) in the namespace of the
// node's chain, or the shared state opened read-only, and nothing written.
func readOnlyDeps(ctx context.Context, cfg policy.Config, dev bool, shared SharedOpener, logger *slog.Logger, version string, deps *tools.Deps) (cleanup func(), err error) {
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
		n := OpenNode(ctx, cfg)
		undo = append(undo, n.Close)
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
			if root, err = StateRoot(cfg); err != nil {
				return cleanup, err
			}
		}
	}
	deps.Config, deps.Logger, deps.Version = cfg, logger, version
	defaults := tools.DefaultCaps
	if dev {
		defaults = tools.DevCaps
	}
	if deps.Caps, err = tools.ResolveCaps(ctx, deps.Chain, cfg, defaults); err != nil {
		return cleanup, usagef("%v", err)
	}
	deps.Session = NewSession()
	if deps.Signer == nil {
		return cleanup, nil // a watch-only wallet keeps no journal
	}
	if cfg.StateURL != "" {
		// The caps, nonces and open transactions are the database's (the
		// local journal keeps only this host's calls).
		if shared == nil {
			deps.JournalErr = errNoSharedState
			return cleanup, nil
		}
		r, err := shared.View(ctx, cfg, deps.Chain.ChainID().Uint64(), deps.Chain.Genesis(), deps.Address)
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
