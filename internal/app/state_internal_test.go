package app

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/journal"
)

// How a journal's namespace is chosen and bound: a directory with no
// binding (an earlier build's journal, or none) is adopted by the chain
// that uses it; one bound to genesis A is never B's, whose own directory is
// beside it; a binding that cannot be read refuses the journal; of two
// starts binding one directory to two chains, the second learns it lost.
func TestJournalNamespaceFollowsTheGenesis(t *testing.T) {
	root := t.TempDir()
	wallet := common.HexToAddress("0x00000000000000000000000000000000000a11ce")
	a := common.HexToHash("0xaa")
	b := common.HexToHash("0xbb")
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	base := journalDir(root, 1337, wallet)

	// An earlier build's journal: no binding. Adopted by A.
	require.NoError(t, os.MkdirAll(base, 0o700))
	for _, g := range []common.Hash{{}, a} { // the node not asked yet, or asked
		ns, err := chooseNamespace(root, 1337, wallet, g, logger)
		require.NoError(t, err)
		require.Equal(t, namespace{dir: base}, ns)
	}
	require.NoError(t, bindJournal(namespace{dir: base}, 1337, a))
	got, err := readBinding(base, 1337)
	require.NoError(t, err)
	require.Equal(t, a, got)
	require.Empty(t, logs.String(), "nothing to say: the journal is this chain's")

	// Bound to A: A's, and the guess while the node is asked.
	for _, g := range []common.Hash{{}, a} {
		ns, err := chooseNamespace(root, 1337, wallet, g, logger)
		require.NoError(t, err)
		require.Equal(t, namespace{dir: base, bound: a}, ns)
	}
	var other *otherChainError
	require.ErrorAs(t, bindJournal(namespace{dir: base, bound: a}, 1337, b), &other, "the guess was wrong: B is not A")
	require.Equal(t, otherChainError{Dir: base, ChainID: 1337, Bound: a, Genesis: b}, *other)

	// B: its own directory, said in one line.
	ns, err := chooseNamespace(root, 1337, wallet, b, logger)
	require.NoError(t, err)
	require.Equal(t, namespace{dir: genesisDir(root, 1337, wallet, b)}, ns)
	require.Equal(t, 1, strings.Count(logs.String(), "\n"), logs.String())
	require.Contains(t, logs.String(), "is not the one of the journal in "+base)
	require.Contains(t, logs.String(), b.Hex())
	j, err := journal.Open(ns.dir, "s", nil)
	require.NoError(t, err)
	j.Close()
	require.NoError(t, bindJournal(ns, 1337, b))
	ns, err = chooseNamespace(root, 1337, wallet, b, logger)
	require.NoError(t, err)
	require.Equal(t, namespace{dir: genesisDir(root, 1337, wallet, b), bound: b}, ns)

	// Two starts bind a new directory at once, on two chains: one wins.
	fresh := filepath.Join(root, "fresh")
	require.NoError(t, os.MkdirAll(fresh, 0o700))
	require.NoError(t, bindJournal(namespace{dir: fresh}, 1337, a))
	require.ErrorAs(t, bindJournal(namespace{dir: fresh}, 1337, b), &other)
	require.NoError(t, bindJournal(namespace{dir: fresh}, 1337, a), "the same chain twice is fine")

	// A binding that is not one, or names another chain id: refused.
	for name, content := range map[string]string{
		"garbage":  "{",
		"chain id": `{"v":1,"chain_id":1,"genesis":"` + a.Hex() + `"}`,
		"version":  `{"v":2,"chain_id":1337,"genesis":"` + a.Hex() + `"}`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(base, bindingName), []byte(content), 0o600))
		_, err := chooseNamespace(root, 1337, wallet, a, logger)
		var ue *journal.UnavailableError
		require.ErrorAs(t, err, &ue, name)
	}
}
