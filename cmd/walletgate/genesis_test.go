package main_test

// A journal belongs to one chain, and a chain is its genesis: a new dev
// chain with the same id and the same key is another chain, and walletgate
// on it starts a journal of its own instead of going on with the old one's
// nonces, pending transactions and day window.

import (
	"context"
	"encoding/json"
	"io/fs"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// stateFiles is every file under dir with its content.
func stateFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		files[p] = string(raw)
		return err
	}))
	return files
}

// journalDirs are the journal directories under a state root.
func journalDirs(t *testing.T, state string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(state, "1337-*"))
	require.NoError(t, err)
	return dirs
}

// TestANewChainWithTheSameIDGetsItsOwnJournal: walletgate sends on dev
// chain 1 (one confirmed, one left pending and counted: its broadcast never
// reached the node), stops; chain 1 stops and a new dev chain with the same
// id and dev key starts; walletgate on the same state directory says it
// uses a journal namespace of its own, counts nothing of chain 1's day,
// sends nothing of chain 1's, and its first send confirms at the new
// chain's nonce. Chain 1's journal is left as it was.
func TestANewChainWithTheSameIDGetsItsOwnJournal(t *testing.T) {
	state := t.TempDir()
	first, stopFirst := startStoppableDevnet(t)
	proxy1 := newRPCProxy(t, first.RPC)
	c := startServer(t, append(capsEnv(devnetInfo{RPC: proxy1.srv.URL, KeyFile: first.KeyFile}, state), "WALLETGATE_RECEIPT_TIMEOUT=2s"))
	c.initialize()
	view1 := newChainView(t, first)
	paid := common.HexToAddress("0x00000000000000000000000000000000000e2e61")
	held := common.HexToAddress("0x00000000000000000000000000000000000e2e62")

	confirm := func(c *stdioClient, to common.Address, amount string) map[string]any {
		return confirmUSDT(t, c, to, amount)
	}
	require.Equal(t, "confirmed", confirm(c, paid, "5")["status"])
	require.Equal(t, big.NewInt(5_000_000), view1.usdtOf(paid))
	// The next broadcast never reaches the node: pending, counted, its
	// signed bytes journaled for the next start to follow up.
	proxy1.setFault("eth_sendRawTransaction", func(json.RawMessage) *fault { return &fault{http502: true} })
	require.Equal(t, "pending", confirm(c, held, "7")["status"])
	require.Equal(t, "12", dayUsed(t, c, "USDT"))
	c.stop()
	old := journalDirs(t, state)
	require.Len(t, old, 1)
	before := stateFiles(t, old[0])
	genesis1, err := view1.node.HeaderByNumber(context.Background(), big.NewInt(0))
	require.NoError(t, err)
	stopFirst()

	second, _ := startStoppableDevnet(t)
	require.Equal(t, first.DevAccount, second.DevAccount, "the same dev key")
	require.Equal(t, first.Contracts["USDT"], second.Contracts["USDT"], "the same deployment")
	proxy2 := newRPCProxy(t, second.RPC)
	view2 := newChainView(t, second)
	nonce := view2.nonce()
	c = startServer(t, append(capsEnv(devnetInfo{RPC: proxy2.srv.URL, KeyFile: second.KeyFile}, state), "WALLETGATE_RECEIPT_TIMEOUT=2s"))
	c.initialize()
	require.Equal(t, "0", dayUsed(t, c, "USDT"), "chain 1's day does not count on chain 2")

	out := confirm(c, paid, "3")
	require.Equal(t, "confirmed", out["status"], "%v\nstderr:\n%s", out, c.stderr.String())
	require.Equal(t, big.NewInt(3_000_000), view2.usdtOf(paid))
	require.Equal(t, nonce+1, view2.nonce(), "signed at the new chain's nonce")
	c.stop() // recovery, if it had anything to do, ran or stopped
	require.Zero(t, view2.usdtOf(held).Sign(), "chain 1's pending bytes never reached chain 2")
	require.Equal(t, nonce+1, view2.nonce())
	require.Equal(t, 1, proxy2.count("eth_sendRawTransaction"), "one broadcast on chain 2: its own")

	lines := 0
	for _, l := range strings.Split(c.stderr.String(), "\n") {
		if strings.Contains(l, "is not the one of the journal in") {
			lines++
			require.Contains(t, l, "1337")
			require.Contains(t, l, old[0])
		}
	}
	require.Equal(t, 1, lines, "one line says so:\n%s", c.stderr.String())
	require.Len(t, journalDirs(t, state), 2, "a namespace of its own")
	require.Equal(t, before, stateFiles(t, old[0]), "chain 1's journal untouched")

	// The operator commands find the same namespaces: audit verify (no
	// node) every one, with the chain each belongs to; policy the one the
	// server uses on chain 2.
	env := capsEnv(devnetInfo{RPC: second.RPC, KeyFile: second.KeyFile}, state)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(binary, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	genesis2, err := view2.node.HeaderByNumber(context.Background(), big.NewInt(0))
	require.NoError(t, err)
	out2 := run("audit", "verify")
	require.Contains(t, out2, old[0]+"/journal.jsonl")
	require.Contains(t, out2, "bound to chain 1337, genesis "+genesis1.Hash().Hex())
	require.Contains(t, out2, "bound to chain 1337, genesis "+genesis2.Hash().Hex())
	require.Contains(t, run("audit", "show"), "on chain 1337 (genesis "+genesis2.Hash().Hex()+")", "the session's start names the genesis")
	require.Contains(t, run("policy"), "USDT per day: 3 / 100, 97 left")
	require.Equal(t, before, stateFiles(t, old[0]), "chain 1's journal still untouched")
}

// devChainOf is the dev chain a `walletgate --dev` started, as its log
// line names it.
func devChainOf(t *testing.T, c *stdioClient) devnetInfo {
	t.Helper()
	line := regexp.MustCompile(`msg="embedded dev chain started".*`).FindString(c.stderr.String())
	field := func(name string) string {
		m := regexp.MustCompile(` ` + name + `=(\S+)`).FindStringSubmatch(line)
		require.NotNil(t, m, "no %s in %q", name, line)
		return m[1]
	}
	return devnetInfo{RPC: field("rpc"), DevAccount: field("dev_account"), Contracts: map[string]string{"USDT": field("USDT")}}
}

// TestDevRestartedOnItsStateDirIsANewChain is the issue's own case:
// `walletgate --dev` with WALLETGATE_STATE_DIR runs a new dev chain at each
// start (same id, same key, another genesis). The second start's first
// send confirms at that chain's nonce, instead of being signed at the
// nonce the first chain's journal had reached.
func TestDevRestartedOnItsStateDirIsANewChain(t *testing.T) {
	state := t.TempDir()
	env := cleanEnv("WALLETGATE_STATE_DIR="+state, "WALLETGATE_RECEIPT_TIMEOUT=2s")
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e63")
	for round := 0; round < 2; round++ {
		c := startServer(t, env, "--dev")
		c.initialize()
		view := newChainView(t, devChainOf(t, c))
		nonce := view.nonce()
		args := map[string]any{"to": to.Hex(), "amount": "2", "asset": "USDT"}
		res := c.callTool("wallet_send", args)
		args["confirm"] = res["structuredContent"].(map[string]any)["confirm_token"]
		res = c.callTool("wallet_send", args)
		require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], "round %d: %s", round, text(res))
		require.Equal(t, big.NewInt(2_000_000), view.usdtOf(to), "round %d: this chain's send only", round)
		require.Equal(t, nonce+1, view.nonce())
		c.stop()
		if round == 1 {
			require.Contains(t, c.stderr.String(), "is not the one of the journal in")
		}
	}
	require.Len(t, journalDirs(t, state), 2)
}

// TestABrokenJournalOfAnotherChainDoesNotRefuseThisOne: chain 1's journal
// is edited (walletgate refuses writes with it, on chain 1); on a new chain
// with the same id the journal is not that one, so nothing of its refusal
// applies there either.
func TestABrokenJournalOfAnotherChainDoesNotRefuseThisOne(t *testing.T) {
	state := t.TempDir()
	first, stopFirst := startStoppableDevnet(t)
	c := startServer(t, capsEnv(first, state))
	c.initialize()
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e64")
	args := map[string]any{"to": to.Hex(), "amount": "4", "asset": "USDT"}
	args["confirm"] = c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	require.Equal(t, "confirmed", c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["status"])
	c.stop()
	files, _ := filepath.Glob(filepath.Join(state, "*", "journal.jsonl"))
	require.Len(t, files, 1)
	raw, err := os.ReadFile(files[0])
	require.NoError(t, err)
	edited := strings.Replace(string(raw), `"4000000"`, `"400000"`, 1)
	require.NotEqual(t, string(raw), edited)
	require.NoError(t, os.WriteFile(files[0], []byte(edited), 0o600))
	stopFirst()

	second, _ := startStoppableDevnet(t)
	view := newChainView(t, second)
	c = startServer(t, capsEnv(second, state))
	c.initialize()
	delete(args, "confirm")
	res := c.callTool("wallet_send", args)
	sc, ok := res["structuredContent"].(map[string]any)
	require.True(t, ok, text(res))
	args["confirm"] = sc["confirm_token"]
	res = c.callTool("wallet_send", args)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	require.Equal(t, big.NewInt(4_000_000), view.usdtOf(to))
}

// TestAnEarlierBuildsJournalIsAdoptedByItsChain: a journal with no chain
// binding (as an earlier walletgate left it) keeps working on the chain it
// is used on: its day still counts, and the start binds it to that chain's
// genesis.
func TestAnEarlierBuildsJournalIsAdoptedByItsChain(t *testing.T) {
	info := startDevnet(t)
	state := t.TempDir()
	env := capsEnv(info, state)
	c := startServer(t, env)
	c.initialize()
	args := map[string]any{"to": "0x00000000000000000000000000000000000e2e65", "amount": "9", "asset": "USDT"}
	args["confirm"] = c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	require.Equal(t, "confirmed", c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["status"])
	c.stop()
	dirs := journalDirs(t, state)
	require.Len(t, dirs, 1)
	binding := filepath.Join(dirs[0], "chain.json")
	require.NoError(t, os.Remove(binding)) // as an earlier build left it

	c = startServer(t, env)
	c.initialize()
	require.Equal(t, "9", dayUsed(t, c, "USDT"), "the same journal, adopted")
	c.stop()
	require.Equal(t, dirs, journalDirs(t, state))
	raw, err := os.ReadFile(binding)
	require.NoError(t, err)
	g, err := newChainView(t, info).node.HeaderByNumber(context.Background(), big.NewInt(0))
	require.NoError(t, err)
	require.JSONEq(t, `{"v":1,"chain_id":1337,"genesis":"`+g.Hash().Hex()+`"}`, string(raw))
	require.Contains(t, c.stderr.String(), "the journal is bound to its chain")
}
