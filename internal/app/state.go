package app

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
)

// StateRoot is WALLETGATE_STATE_DIR, or the user's state directory.
func StateRoot(cfg policy.Config) (string, error) {
	if cfg.StateDir != "" {
		return cfg.StateDir, nil
	}
	dir, err := journal.DefaultDir()
	if err != nil {
		return "", usagef("no state directory: %v; set WALLETGATE_STATE_DIR", err)
	}
	return dir, nil
}

// journalDir is where one wallet's journal on one chain id lives first: caps
// are per wallet and chain, so two walletgates on the same wallet and chain
// (Claude Desktop and Cursor, say) share it, and nothing else does. A chain
// is its genesis: the directory's binding (bindingName) names the genesis
// it belongs to, and another chain with the same id has a namespace of its
// own beside it (genesisDir).
func journalDir(root string, chainID uint64, wallet common.Address) string {
	return filepath.Join(root, fmt.Sprintf("%d-%s", chainID, wallet.Hex()))
}

// genesisDir is the journal directory of a wallet on the chain with this
// genesis when the first directory (journalDir) belongs to another chain
// with the same id. It is a sibling, so that every journal is still one
// level under the state root (audit finds it as it finds the others).
func genesisDir(root string, chainID uint64, wallet common.Address, genesis common.Hash) string {
	return journalDir(root, chainID, wallet) + "-" + genesis.Hex()
}

// bindingName is the file in a journal directory that names the chain the
// journal belongs to: its chain id and its genesis block's hash. It is
// written once, atomically, and never replaced. A journal directory without
// one (written by a walletgate before the binding existed, or new) is bound
// to the chain of the first start that uses it: an old journal is adopted
// by the chain it is used on, as it always was.
const bindingName = "chain.json"

// maxBinding bounds what is read of a binding file.
const maxBinding = 4 << 10

// ChainBinding is the content of a binding file.
type ChainBinding struct {
	V       int         `json:"v"`
	ChainID uint64      `json:"chain_id"`
	Genesis common.Hash `json:"genesis"`
}

// namespace is the journal directory chosen for a wallet on a chain, and
// the genesis its binding names (zero: none yet; bindJournal writes it).
type namespace struct {
	dir   string
	bound common.Hash
}

// otherChainError is a journal directory bound to another genesis than the
// node's: the journal of another chain with the same id.
type otherChainError struct {
	Dir     string
	ChainID uint64
	Bound   common.Hash // the journal's
	Genesis common.Hash // the node's
}

func (e *otherChainError) Error() string {
	return fmt.Sprintf("this chain (id %d, genesis %s) is not the one of the journal in %s (genesis %s)", e.ChainID, e.Genesis.Hex(), e.Dir, e.Bound.Hex())
}

// readBinding is the genesis a journal directory is bound to; zero when it
// has no binding (or does not exist). A binding that cannot be read, or that
// names another chain id, is an error: the journal is not used.
func readBinding(dir string, chainID uint64) (common.Hash, error) {
	b, err := LoadBinding(dir)
	if err != nil || b == nil {
		return common.Hash{}, err
	}
	if b.ChainID != chainID {
		return common.Hash{}, bindingUnavailable(dir, fmt.Sprintf("it names chain id %d, not %d", b.ChainID, chainID))
	}
	return b.Genesis, nil
}

// LoadBinding is a journal directory's binding, nil when it has none.
func LoadBinding(dir string) (*ChainBinding, error) {
	f, err := os.Open(filepath.Join(dir, bindingName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, bindingUnavailable(dir, err.Error())
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxBinding))
	if err != nil {
		return nil, bindingUnavailable(dir, err.Error())
	}
	var b ChainBinding
	if err := json.Unmarshal(raw, &b); err != nil || b.V != 1 || b.Genesis == (common.Hash{}) {
		return nil, bindingUnavailable(dir, "it is not a chain binding this walletgate reads")
	}
	return &b, nil
}

// bindingUnavailable is a binding file that refuses the journal's use.
func bindingUnavailable(dir, why string) *journal.UnavailableError {
	return &journal.UnavailableError{Path: filepath.Join(dir, bindingName), Reason: "the journal's chain binding cannot be used: " + why,
		Fix: fmt.Sprintf("restore %s from a backup (it names the chain id and genesis hash the journal belongs to), or move the directory aside to start anew (which resets the per-day caps)", filepath.Join(dir, bindingName))}
}

// chooseNamespace is the journal directory of the wallet on the chain with
// this genesis: the first directory when it is bound to it or not bound
// yet, else the genesis's own, which the start says in one line. With a
// zero genesis (the node not yet asked) it is the first directory:
// bindJournal then finds out whether that was right.
func chooseNamespace(root string, chainID uint64, wallet common.Address, genesis common.Hash, logger *slog.Logger) (namespace, error) {
	base := journalDir(root, chainID, wallet)
	bound, err := readBinding(base, chainID)
	if err != nil {
		return namespace{dir: base}, err
	}
	if bound == (common.Hash{}) || genesis == (common.Hash{}) || bound == genesis {
		return namespace{dir: base, bound: bound}, nil
	}
	dir := genesisDir(root, chainID, wallet, genesis)
	own, err := readBinding(dir, chainID)
	if err != nil {
		return namespace{dir: dir}, err
	}
	if own != (common.Hash{}) && own != genesis {
		return namespace{dir: dir}, bindingUnavailable(dir, fmt.Sprintf("it names genesis %s, not %s as its directory's name says", own.Hex(), genesis.Hex()))
	}
	logger.Warn((&otherChainError{Dir: base, ChainID: chainID, Bound: bound, Genesis: genesis}).Error() + "; using the journal namespace " + dir + " for it (its own caps' day window, nonces and pending transactions)")
	return namespace{dir: dir, bound: own}, nil
}

// bindJournal binds the namespace's directory to genesis if it is not bound
// yet, and returns *otherChainError if it is bound to another. The binding
// is written to a temporary file, synced, and linked into place, never over
// one there: of two starts binding at once, on two chains, one wins and the
// other learns it is not the journal's chain.
func bindJournal(ns namespace, chainID uint64, genesis common.Hash) error {
	if ns.bound == genesis {
		return nil
	}
	if ns.bound != (common.Hash{}) {
		return &otherChainError{Dir: ns.dir, ChainID: chainID, Bound: ns.bound, Genesis: genesis}
	}
	raw, err := json.Marshal(ChainBinding{V: 1, ChainID: chainID, Genesis: genesis})
	if err != nil {
		return err
	}
	final := filepath.Join(ns.dir, bindingName)
	tmp, err := os.CreateTemp(ns.dir, bindingName+".*.tmp")
	if err != nil {
		return fmt.Errorf("bind the journal to its chain: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(raw, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), final)
	}
	if errors.Is(err, os.ErrExist) {
		bound, rerr := readBinding(ns.dir, chainID)
		if rerr != nil {
			return rerr
		}
		return bindJournal(namespace{dir: ns.dir, bound: bound}, chainID, genesis)
	}
	if err != nil {
		return fmt.Errorf("bind the journal to its chain: %w", err)
	}
	return syncDir(ns.dir)
}

// syncDir makes a new name in dir durable (where the platform can).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("bind the journal to its chain: sync %s: %w", dir, err)
	}
	return nil
}

// NewSession is a random id for this process's journal records.
func NewSession() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("p%d", os.Getpid())
	}
	return hex.EncodeToString(b[:])
}

// openJournal opens the wallet's journal in the namespace's directory. A
// journal that cannot be trusted is not an error for the process — reads
// keep working — but it is for every write: the error is returned for
// tools.Deps.JournalErr, and logged.
func openJournal(root, dir, session string, logger *slog.Logger) (*journal.Journal, error) {
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
