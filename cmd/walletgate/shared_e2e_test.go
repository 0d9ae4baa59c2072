package main_test

// One wallet, many hosts: walletgates with their own state directories and
// one WALLETGATE_STATE_URL (a real PostgreSQL server, started per test) on
// the dev chain.

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/internal/pgtest"
)

// sharedEnv is a host's environment: its own state directory, the shared
// database, and caps of USDT 3 per transaction and 50 per day.
func sharedEnv(t *testing.T, rpc, keyFile, stateURL string) []string {
	return cleanEnv("WALLETGATE_RPC="+rpc, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+keyFile,
		"WALLETGATE_STATE_DIR="+t.TempDir(), "WALLETGATE_STATE_URL="+stateURL,
		"WALLETGATE_CAP_PER_TX=ETH=1,USDT=11", "WALLETGATE_CAP_PER_SESSION=ETH=10,USDT=1000", "WALLETGATE_CAP_PER_DAY=ETH=10,USDT=50")
}

// dbHas reports whether the shared database holds a record of kind.
func dbHas(t *testing.T, url, kind string) bool {
	c, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer c.Close(context.Background())
	var n int
	require.NoError(t, c.QueryRow(context.Background(), `SELECT count(*) FROM walletgate_records WHERE kind = $1`, kind).Scan(&n))
	return n > 0
}

func dbExec(t *testing.T, url, sql string, args ...any) {
	c, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer c.Close(context.Background())
	_, err = c.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// Three hosts race confirms on one wallet: together they stay within the
// day cap, take no nonce twice, and every confirmed send lands once.
func TestThreeHostsSharingPostgresNeverPassTheDayCapOrShareANonce(t *testing.T) {
	info := startDevnet(t)
	pg := pgtest.Start(t)
	view := newChainView(t, info)
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e19")
	nonce := view.nonce()
	const each, amount = 8, 3 // 24 sends of 3 USDT against a day cap of 50: 16 fit
	hosts := make([]*stdioClient, 3)
	for i := range hosts {
		hosts[i] = startServer(t, sharedEnv(t, info.RPC, info.KeyFile, pg.URL))
	}
	outcomes := make([][]string, len(hosts))
	var wg sync.WaitGroup
	for i, c := range hosts {
		c.initialize()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < each; k++ {
				args := map[string]any{"to": to.Hex(), "amount": fmt.Sprint(amount), "asset": "USDT"}
				res := c.callTool("wallet_send", args)
				sc, ok := res["structuredContent"].(map[string]any)
				if !ok || res["isError"] == true {
					outcomes[i] = append(outcomes[i], refusalCode(res))
					continue
				}
				args["confirm"] = sc["confirm_token"]
				res = c.callTool("wallet_send", args)
				if sc, ok := res["structuredContent"].(map[string]any); ok && res["isError"] != true {
					outcomes[i] = append(outcomes[i], sc["status"].(string))
				} else {
					outcomes[i] = append(outcomes[i], refusalCode(res)+": "+text(res))
				}
			}
		}()
	}
	wg.Wait()
	confirmed := 0
	for i := range outcomes {
		for _, o := range outcomes[i] {
			if o == "confirmed" {
				confirmed++
				continue
			}
			require.True(t, strings.HasPrefix(o, "CAP_EXCEEDED"), "host %d: %s", i, o)
		}
	}
	t.Logf("outcomes %v", outcomes)
	require.Equal(t, 50/amount, confirmed, "every send that fits the day confirmed, no more")
	require.Equal(t, big.NewInt(int64(confirmed*amount)*1_000_000), view.usdtOf(to), "on chain: each confirmed send once, within the day cap")
	require.Equal(t, nonce+uint64(confirmed), view.nonce(), "one nonce per confirmed send: none taken twice, none lost")
	for _, c := range hosts {
		require.Equal(t, fmt.Sprint(confirmed*amount), dayUsed(t, c, "USDT"), "every host sees the shared day")
	}
}

// A host killed mid-confirm, after its broadcast and before the receipt:
// another host's next start settles it, never sends it twice, and keeps it
// counted. audit verify passes on the database's chain, and names a row
// edited afterwards.
func TestHostKilledMidConfirmIsSettledByAnotherHost(t *testing.T) {
	info := startDevnet(t)
	pg := pgtest.Start(t)
	proxy := newRPCProxy(t, info.RPC)
	view := newChainView(t, info)
	a := startServer(t, sharedEnv(t, proxy.srv.URL, info.KeyFile, pg.URL))
	a.initialize()
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e1a")
	args := map[string]any{"to": to.Hex(), "amount": "11", "asset": "USDT"}
	args["confirm"] = a.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	nonce := view.nonce()

	proxy.hold("eth_getTransactionReceipt")
	go func() {
		b, _ := jsonMarshal(map[string]any{"jsonrpc": "2.0", "id": 999, "method": "tools/call", "params": map[string]any{"name": "wallet_send", "arguments": args}})
		a.stdin.Write(append(b, '\n'))
	}()
	waitFor(t, "the broadcast record in the database", func() bool { return dbHas(t, pg.URL, "broadcast") })
	require.NoError(t, a.cmd.Process.Kill()) // SIGKILL
	_ = a.cmd.Wait()
	proxy.unhold()
	require.False(t, dbHas(t, pg.URL, "receipt"))

	envB := sharedEnv(t, info.RPC, info.KeyFile, pg.URL)
	b := startServer(t, envB)
	b.initialize()
	waitFor(t, "the receipt in the database", func() bool { return dbHas(t, pg.URL, "receipt") })
	recoveryFinished(t, b)
	require.Equal(t, nonce+1, view.pendingNonce(), "exactly one transaction, none other in the node's pool")
	require.Equal(t, big.NewInt(11_000_000), view.usdtOf(to), "exactly one transfer")
	require.Equal(t, nonce+1, view.nonce(), "exactly one transaction")
	require.Equal(t, "11", dayUsed(t, b, "USDT"), "the killed host's send still counts")

	args = map[string]any{"to": to.Hex(), "amount": "5", "asset": "USDT"}
	args["confirm"] = b.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	res := b.callTool("wallet_send", args)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	require.Equal(t, nonce+2, view.nonce())
	b.stop()

	verify := func() (string, error) {
		cmd := exec.Command(binary, "audit", "verify")
		cmd.Env = envB
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	out, err := verify()
	require.NoError(t, err, out)
	require.Contains(t, out, "chain 1337 wallet "+info.DevAccount)
	require.Contains(t, out, "hash chain intact")
	require.NotContains(t, out, "BROKEN")

	dbExec(t, pg.URL, `UPDATE walletgate_records SET data = replace(data, '"11000000"', '"1000000"') WHERE kind = 'cap_reserve' AND data LIKE '%"11000000"%'`)
	var seq int64
	c, err := pgx.Connect(context.Background(), pg.URL)
	require.NoError(t, err)
	require.NoError(t, c.QueryRow(context.Background(), `SELECT seq FROM walletgate_records WHERE kind = 'cap_reserve' AND data LIKE '%"1000000"%'`).Scan(&seq))
	c.Close(context.Background())
	out, err = verify()
	require.Error(t, err, out)
	require.Contains(t, out, fmt.Sprintf("BROKEN postgres://unix:%s/postgres chain 1337 wallet %s: record seq %d: its content does not match its hash", pg.Dir, info.DevAccount, seq))
}

// The database going away under a running host, or absent at its start:
// writes are refused with LEDGER_UNAVAILABLE naming the database host-only,
// reads keep working, and nothing is sent.
func TestUnreachableStateDatabaseRefusesWritesAndKeepsReads(t *testing.T) {
	info := startDevnet(t)
	pg := pgtest.Start(t)
	view := newChainView(t, info)
	dbExec(t, pg.URL, `ALTER ROLE walletgate PASSWORD 'hunter2hunter2'`)
	url := strings.Replace(pg.URL, "walletgate@", "walletgate:hunter2hunter2@", 1)
	env := sharedEnv(t, info.RPC, info.KeyFile, url)
	c := startServer(t, env)
	c.initialize()
	pol := c.callTool("wallet_policy", map[string]any{})
	require.Contains(t, text(pol), "kept in the PostgreSQL database postgres://unix:"+pg.Dir+"/postgres")
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e1b")
	args := map[string]any{"to": to.Hex(), "amount": "2", "asset": "USDT"}
	args["confirm"] = c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	nonce := view.nonce()

	pg.Stop(t)
	res := c.callTool("wallet_send", args)
	require.Equal(t, "LEDGER_UNAVAILABLE", refusalCode(res), text(res))
	t.Logf("refused: %s", text(res))
	require.Contains(t, text(res), "postgres://unix:"+pg.Dir+"/postgres")
	require.Contains(t, text(res), "reachable")
	require.NotContains(t, text(res), "hunter2")
	bal := c.callTool("wallet_balance", map[string]any{})
	require.NotEqual(t, true, bal["isError"], text(bal))
	require.Equal(t, nonce, view.nonce(), "nothing sent")
	c.stop()

	// A start with the database down: reads work, writes are refused.
	c2 := startServer(t, env)
	c2.initialize()
	bal = c2.callTool("wallet_balance", map[string]any{})
	require.NotEqual(t, true, bal["isError"], text(bal))
	res = c2.callTool("wallet_send", map[string]any{"to": to.Hex(), "amount": "2", "asset": "USDT"})
	require.Equal(t, "LEDGER_UNAVAILABLE", refusalCode(res), text(res))
	require.NotContains(t, text(res), "hunter2")
	t.Logf("refused at start: %s", text(res))
	pol = c2.callTool("wallet_policy", map[string]any{})
	require.Contains(t, text(pol), "postgres://unix:"+pg.Dir)
	require.NotContains(t, text(pol), "hunter2")

	// The database is back: the same process writes again, no restart.
	pg.Resume(t)
	args = map[string]any{"to": to.Hex(), "amount": "2", "asset": "USDT"}
	args["confirm"] = c2.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	res = c2.callTool("wallet_send", args)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	require.Equal(t, big.NewInt(2_000_000), view.usdtOf(to))
	require.Equal(t, nonce+1, view.nonce())
}

// One set of caps per shared wallet (issue 25, finding 6): host A, with a
// day cap of 0.05 ETH, sends 0.03; host B on the same wallet and database,
// configured with a day cap of 1 ETH, is refused every write with
// CAPS_DIFFER naming the difference, and nothing more moves on chain; a
// host with A's caps writes.
func TestHostWithOtherCapsOnASharedWalletWritesNothing(t *testing.T) {
	info := startDevnet(t)
	pg := pgtest.Start(t)
	view := newChainView(t, info)
	env := func(dayETH string) []string {
		return cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile,
			"WALLETGATE_STATE_DIR="+t.TempDir(), "WALLETGATE_STATE_URL="+pg.URL,
			"WALLETGATE_CAP_PER_TX=ETH=0.04", "WALLETGATE_CAP_PER_SESSION=ETH=1", "WALLETGATE_CAP_PER_DAY=ETH="+dayETH)
	}
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e27")
	ethOf := func() *big.Int {
		b, err := view.node.BalanceAt(context.Background(), to, nil)
		require.NoError(t, err)
		return b
	}
	args := map[string]any{"to": to.Hex(), "amount": "0.03", "asset": "ETH"}
	a := startServer(t, env("0.05"))
	a.initialize()
	confirm := map[string]any{"to": to.Hex(), "amount": "0.03", "asset": "ETH"}
	confirm["confirm"] = a.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	res := a.callTool("wallet_send", confirm)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	nonce := view.nonce()

	b := startServer(t, env("1"))
	b.initialize()
	res = b.callTool("wallet_send", args)
	require.Equal(t, "CAPS_DIFFER", refusalCode(res), text(res))
	require.Contains(t, text(res), "per day ETH: 0.05 ETH there, 1 ETH here (WALLETGATE_CAP_PER_DAY)")
	pol := b.callTool("wallet_policy", map[string]any{})["structuredContent"].(map[string]any)
	require.Contains(t, pol["writes_refused"], "per day ETH: 0.05 ETH there, 1 ETH here")
	require.Equal(t, big.NewInt(3e16), ethOf(), "on chain: A's send only")
	require.Equal(t, nonce, view.nonce(), "B sent nothing")

	c := startServer(t, env("0.05"))
	c.initialize()
	pol = c.callTool("wallet_policy", map[string]any{})["structuredContent"].(map[string]any)
	require.Empty(t, pol["writes_refused"], "the same caps: writes work")
	res = c.callTool("wallet_send", map[string]any{"to": to.Hex(), "amount": "0.03", "asset": "ETH"})
	require.Equal(t, "CAP_EXCEEDED", refusalCode(res), "the shared day holds A's send: %s", text(res))
}

// dbRows is every row walletgate keeps in the shared database, as text: what
// a read-only command must leave as it was. An empty database has none (and
// no tables).
func dbRows(t *testing.T, url string) string {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer c.Close(context.Background())
	var exists bool
	require.NoError(t, c.QueryRow(context.Background(), `SELECT to_regclass('walletgate_schema') IS NOT NULL`).Scan(&exists))
	if !exists {
		return ""
	}
	var all string
	for _, table := range []string{"walletgate_schema", "walletgate_wallets", "walletgate_records", "walletgate_checkpoints"} {
		var rows string
		require.NoError(t, c.QueryRow(context.Background(), `SELECT coalesce(string_agg(t::text, E'\n' ORDER BY t::text), '') FROM `+table+` t`).Scan(&rows))
		all += table + ":\n" + rows + "\n"
	}
	return all
}

// `walletgate policy` on the shared state reads the day from the database
// and writes nothing to it: not on an empty database (no schema is made),
// not after a host's send (no session, no wallet row, no checkpoint).
func TestPolicyWritesNothingToTheSharedState(t *testing.T) {
	info := startDevnet(t)
	pg := pgtest.Start(t)
	env := sharedEnv(t, info.RPC, info.KeyFile, pg.URL)
	policy := func() string { return runPolicy(t, env) }
	require.Contains(t, policy(), "USDT per day: 0 / 50, 50 left")
	require.Empty(t, dbRows(t, pg.URL), "policy made no schema in an empty database")

	c := startServer(t, env)
	c.initialize()
	args := map[string]any{"to": "0x00000000000000000000000000000000000e2e21", "amount": "3", "asset": "USDT"}
	args["confirm"] = c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	require.Equal(t, "confirmed", c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["status"])
	c.stdin.Close()
	require.NoError(t, c.cmd.Wait())

	before := dbRows(t, pg.URL)
	require.NotEmpty(t, before)
	out := policy()
	require.Contains(t, out, "USDT per day: 3 / 50, 47 left", "the day is read from the database")
	require.Contains(t, out, "PostgreSQL database")
	require.Equal(t, before, dbRows(t, pg.URL), "policy wrote nothing to the database")
}

// Two hosts on two chains sharing one database: each chain's day window is
// its own rows (a wallet row per chain), shared by both hosts on that chain
// only.
func TestTwoChainsShareTheirStateChainByChain(t *testing.T) {
	state := t.TempDir()
	a, _ := runDevnet(t, state)
	b, _ := runDevnet(t, state, "--chain-id", "31337")
	pg := pgtest.Start(t)
	usdtB := common.HexToAddress(b.Contracts["USDT"])
	env := func() []string {
		return cleanEnv("WALLETGATE_RPC="+a.RPC+","+b.RPC, "WALLETGATE_CHAIN_ID=1337,31337", "WALLETGATE_KEY_FILE="+a.KeyFile,
			"WALLETGATE_STATE_DIR="+t.TempDir(), "WALLETGATE_STATE_URL="+pg.URL,
			"WALLETGATE_CAP_PER_TX=ETH=1,USDT=10,31337:ETH=1,31337:"+usdtB.Hex()+"=10", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=100,31337:ETH=1,31337:"+usdtB.Hex()+"=100",
			"WALLETGATE_CAP_PER_DAY=ETH=1,USDT=50,31337:ETH=1,31337:"+usdtB.Hex()+"=12")
	}
	h1, h2 := startServer(t, env()), startServer(t, env())
	h1.initialize()
	h2.initialize()
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e34")
	onB := map[string]any{"to": to.Hex(), "amount": "8", "asset": usdtB.Hex(), "network": "31337"}
	require.Equal(t, "confirmed", statusOf(previewAndConfirm(t, h1, "wallet_send", onB)))
	refusedWith(t, h2.callTool("wallet_send", onB), "CAP_EXCEEDED") // 31337's day: 8 of 12, shared by both hosts
	require.Equal(t, "confirmed", statusOf(previewAndConfirm(t, h2, "wallet_send", map[string]any{"to": to.Hex(), "amount": "8", "asset": "USDT"})),
		"1337's day is its own")
	require.Equal(t, "8/12", chainCaps(t, h2, 31337)[strings.ToLower(usdtB.Hex())+" per day"])
	require.Equal(t, "8/50", chainCaps(t, h1, 1337)[strings.ToLower(a.Contracts["USDT"])+" per day"])

	c, err := pgx.Connect(context.Background(), pg.URL)
	require.NoError(t, err)
	defer c.Close(context.Background())
	var chains []string
	rows, err := c.Query(context.Background(), `SELECT chain_id::text FROM walletgate_wallets ORDER BY chain_id`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		chains = append(chains, id)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"1337", "31337"}, chains, "one wallet row per chain")
}
