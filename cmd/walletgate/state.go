package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
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
