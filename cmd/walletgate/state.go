package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/pgstate"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
)

// stateRoot is WALLETGATE_STATE_DIR, or the user's state directory.
func stateRoot(cfg policy.Config) (string, error) {
	if cfg.StateDir != "" {
		return cfg.StateDir, nil
	}
	dir, err := journal.DefaultDir()
	if err != nil {
		return "", usagef("no state directory: %v; set WALLETGATE_STATE_DIR", err)
	}
	return dir, nil
}

// journalDir is where one wallet's journal on one chain lives: caps are per
// wallet and chain, so two walletgates on the same wallet and chain (Claude
// Desktop and Cursor, say) share it, and nothing else does.
func journalDir(root string, chainID uint64, wallet common.Address) string {
	return filepath.Join(root, fmt.Sprintf("%d-%s", chainID, wallet.Hex()))
}

// newSession is a random id for this process's journal records.
func newSession() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("p%d", os.Getpid())
	}
	return hex.EncodeToString(b[:])
}

// openJournal opens the wallet's journal. A journal that cannot be trusted is
// not an error for the process — reads keep working — but it is for every
// write: the error is returned for tools.Deps.JournalErr, and logged.
func openJournal(root string, chainID uint64, wallet common.Address, session string, logger *slog.Logger) (*journal.Journal, error) {
	dir := journalDir(root, chainID, wallet)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("state directory %s: %w", root, err)
	}
	j, err := journal.Open(dir, session, time.Now)
	if err != nil {
		logger.Error("the spend journal cannot be used: writes are refused until this is fixed; reads keep working", "dir", dir, "err", err)
		return nil, err
	}
	return j, nil
}

// phantomAge is how old another host's reservation with nothing signed
// must be before a start releases it: the engine signs nothing past its
// confirm bound, and the margin covers hosts' clocks differing.
const phantomAge = 5 * time.Minute

// openShared opens the shared state in PostgreSQL (WALLETGATE_STATE_URL) for
// the wallet and chain, records this session, and releases the reservations
// a host that died before signing left open. Its error (a URL that cannot
// be read, a schema newer than this binary) refuses every write; a database
// that does not answer yet refuses each write until it does. Reads keep
// working.
func openShared(ctx context.Context, cfg policy.Config, chainID uint64, wallet common.Address, session, signerKind string, logger *slog.Logger) (*pgstate.Recorder, error) {
	shown := pgstate.Shown(cfg.StateURL)
	r, err := pgstate.Open(ctx, pgstate.Options{URL: cfg.StateURL, PasswordFile: cfg.StatePasswordFile, ChainID: chainID, Address: wallet, Session: session, Retry: true})
	if err != nil {
		logger.Error("the shared state database cannot be used: writes are refused until this is fixed; reads keep working", "state", shown, "err", err)
		return nil, err
	}
	if !r.Connected() {
		logger.Error("the shared state database does not answer: writes are refused until it does (each write tries again); reads keep working", "state", shown)
		return r, nil
	}
	logger.Info("caps, nonces and open transactions are shared through PostgreSQL", "state", shown, "schema", pgstate.SchemaVersion)
	_, _ = r.Append(tools.KindSessionStart, journal.SessionStart{V: journal.Version, Version: versionString(), PID: os.Getpid(),
		ChainID: chainID, Wallet: wallet.Hex(), Signer: signerKind})
	released, err := r.ReleasePhantoms(engine.DefaultBounds.Confirm + phantomAge)
	for _, o := range released {
		logger.Warn("released a phantom cap reservation: its host reserved and signed nothing in time, so nothing was sent", "reservation", o.ID, "session", o.Session, "change", o.Change)
	}
	if err != nil {
		logger.Error("releasing phantom cap reservations failed; they stay counted", "err", err)
	}
	return r, nil
}
