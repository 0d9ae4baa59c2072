package app

import (
	"context"
	"os"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/journal"

	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

// wire builds everything the tools need from the configuration: the chain
// (the embedded dev chain, or the configured node after the chain-id check:
// o.Node, or one opened here when it is nil), the key, the caps, the journal
// and the shared state. It returns the state root in use ("" for
// a watch-only wallet). cleanup undoes it, in every case.
//
// The journal's namespace is the chain's genesis's (chooseNamespace). With
// the configured node, genesis is zero the first time: the journal of the
// first namespace is opened while the node is asked, and ready, besides
// the node's check, binds it to the node's genesis or says
// *otherChainError (New wires again with that genesis). On the dev chain, or with genesis set, the namespace is
// known before the journal is opened. Nothing is written to a journal
// before its binding is settled.
func wire(ctx context.Context, o Options, genesis common.Hash) (deps tools.Deps, root string, ready func() error, cleanup func(), err error) {
	cfg, dev, n, logger := o.Config, o.Dev, o.Node, o.Logger
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
		logger.Info("embedded dev chain started", "chain_id", DevChainID, "rpc", d.Info.RPC, "devnet_pid", d.cmd.Process.Pid, "dev_account", signer.DevAddress.Hex(),
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
			n = OpenNode(ctx, cfg)
			undo = append(undo, n.Close)
		}
		if n.err != nil {
			return deps, root, ready, cleanup, n.err
		}
		c := n.c
		ready = n.ready
		s, addr, err := o.key.open(cfg)
		if err != nil {
			return deps, root, ready, cleanup, err
		}
		if cfg.ChainID == 0 { // the node's id is asked for the refusal only
			return deps, root, ready, cleanup, ready()
		}
		deps = tools.Deps{Chain: c, Signer: s, Address: addr}
	}
	deps.Config, deps.Logger, deps.Version = cfg, logger, o.Version
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
	if deps.Session = o.session; deps.Session == "" {
		deps.Session = NewSession()
	}
	if deps.Signer != nil { // a watch-only wallet writes nothing to account for
		if root == "" {
			if root, err = StateRoot(cfg); err != nil {
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
				if _, err := j.AppendUnsynced(tools.KindSessionStart, records.SessionStart{V: records.Version, Version: o.Version, PID: os.Getpid(),
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
					_, _ = j.Append(tools.KindSessionEnd, records.SessionEnd{V: records.Version, PID: os.Getpid()})
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
		case o.Shared == nil:
			// Never reached from run (it becomes walletgate-shared first);
			// caps kept in this host's journal alone would not be shared,
			// so every write is refused.
			deps.JournalErr = errNoSharedState
		default:
			// The database records this session: not before the node is
			// known to be on the configured chain.
			if err := ready(); err != nil {
				return deps, root, ready, cleanup, err
			}
			r, err := o.Shared.Open(ctx, cfg, chainID, deps.Chain.Genesis(), deps.Address, deps.Session, deps.Signer.Kind(), deps.Caps.Canonical(cfg.AllowUncappedTokens), logger)
			if err != nil {
				deps.JournalErr = err
			} else {
				deps.Recorder = r
				undo = append(undo, func() {
					if r.Connected() { // a database that never answered is not waited for
						_, _ = r.Append(tools.KindSessionEnd, records.SessionEnd{V: records.Version, PID: os.Getpid()})
					}
					r.Close()
				})
			}
		}
	}
	return deps, root, ready, cleanup, nil
}
