package tools_test

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
)

// withJournal gives a server the journal in dir, as a process would open it.
func withJournal(t *testing.T, dir, session string, capsPerDay string) func(*tools.Deps) {
	t.Helper()
	return func(d *tools.Deps) {
		j, err := journal.Open(dir, session, time.Now)
		require.NoError(t, err)
		t.Cleanup(func() { j.Close() })
		d.Journal, d.Session = j, session
		if capsPerDay != "" {
			entries, err := policy.ParseCapList(capsPerDay)
			require.NoError(t, err)
			d.Config.CapPerDay = entries
			d.Caps, err = tools.ResolveCaps(context.Background(), d.Chain, d.Config, tools.DevCaps)
			require.NoError(t, err)
		}
	}
}

func journalRecords(t *testing.T, dir string) []records.Record {
	t.Helper()
	j, err := journal.Open(dir, "reader", time.Now)
	require.NoError(t, err)
	defer j.Close()
	rs, err := j.Records()
	require.NoError(t, err)
	return rs
}

func TestJournalRecordsEveryStepBeforeItHappens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	e := newEnv(t, withJournal(t, dir, "one", ""))
	to := addr("0x00000000000000000000000000000000000000f1")
	args := map[string]any{"to": to.Hex(), "amount": "3", "asset": "USDT"}
	p := e.preview("wallet_send", args)
	var out confirmOut
	e.ok("wallet_send", mustJSON(with(args, p.ConfirmToken)), &out)
	require.Equal(t, "confirmed", out.Status)

	var kinds []string
	var signed map[string]any
	for _, r := range journalRecords(t, dir) {
		kinds = append(kinds, r.Kind)
		if r.Kind == tools.KindSigned {
			require.NoError(t, json.Unmarshal(r.Data, &signed))
		}
	}
	order := strings.Join(kinds, " ")
	require.Contains(t, order, "tool_start preview tool_end")
	require.Contains(t, order, "cap_reserve signed broadcast receipt cap_correct tool_end", "signed before broadcast, settled after the receipt")
	require.Equal(t, out.TxHash, signed["tx"])
	require.True(t, strings.HasPrefix(signed["raw"].(string), "0x02"), "the signed bytes themselves (EIP-1559)")
	for _, r := range journalRecords(t, dir) {
		if r.Kind == tools.KindSigned {
			continue // the signed transaction's raw bytes name the recipient, as they must
		}
		require.NotContains(t, string(r.Data), to.Hex()[2:], "arguments are recorded as a digest only")
	}
	n, err := journal.Verify(filepath.Join(dir, journal.FileName))
	require.NoError(t, err)
	require.Equal(t, len(kinds), n)
}

func TestDayCapSurvivesARestart(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	dir := filepath.Join(t.TempDir(), "state")
	to := addr("0x00000000000000000000000000000000000000f2")
	args := map[string]any{"to": to.Hex(), "amount": "80", "asset": "USDT"}

	first := serverOn(t, d, withJournal(t, dir, "first", "ETH=10,USDT=100,DAI=1000,WETH=10,USDC=1000"))
	p := first.preview("wallet_send", args)
	var out confirmOut
	first.ok("wallet_send", mustJSON(with(args, p.ConfirmToken)), &out)
	require.Equal(t, "confirmed", out.Status)

	// A new process on the same state: a fresh session, the same day.
	second := serverOn(t, d, withJournal(t, dir, "second", "ETH=10,USDT=100,DAI=1000,WETH=10,USDC=1000"))
	text := second.refused("wallet_send", mustJSON(map[string]any{"to": to.Hex(), "amount": "20.000001", "asset": "USDT"}), "CAP_EXCEEDED")
	require.Contains(t, text, "the cap is 100 USDT, 80 USDT is already used (settled or reserved), so 20 USDT is left. At most 20 USDT fits now")
	second.preview("wallet_send", map[string]any{"to": to.Hex(), "amount": "20", "asset": "USDT"})
}

func TestTwoServersOnOneStateNeverPassTheDayCap(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	to := addr("0x00000000000000000000000000000000000000f3")
	for round := 0; round < 5; round++ {
		dir := filepath.Join(t.TempDir(), "state")
		a := serverOn(t, d, withJournal(t, dir, "a", "ETH=10,USDT=100,DAI=1000,WETH=10,USDC=1000"))
		b := serverOn(t, d, withJournal(t, dir, "b", "ETH=10,USDT=100,DAI=1000,WETH=10,USDC=1000"))
		args := map[string]any{"to": to.Hex(), "amount": "60", "asset": "USDT"}
		pa, pb := a.preview("wallet_send", args), b.preview("wallet_send", args)
		before := a.balanceOf(d.Contracts.USDT, to)
		var wg sync.WaitGroup
		texts := make([]string, 2)
		for i, c := range []struct {
			e   *env
			tok string
		}{{a, pa.ConfirmToken}, {b, pb.ConfirmToken}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				texts[i] = resultText(c.e.call("wallet_send", mustJSON(with(args, c.tok))))
			}()
		}
		wg.Wait()
		ok := 0
		for _, txt := range texts {
			if strings.HasPrefix(txt, "CONFIRMED") {
				ok++
			} else {
				require.True(t, strings.HasPrefix(txt, "CAP_EXCEEDED: "), txt)
			}
		}
		require.Equal(t, 1, ok, "round %d: %v", round, texts)
		require.Equal(t, new(big.Int).Add(before, big.NewInt(60_000_000)), a.balanceOf(d.Contracts.USDT, to))
	}
}

func TestBrokenJournalBlocksWritesAndKeepsReads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	j, err := journal.Open(dir, "x", time.Now)
	require.NoError(t, err)
	_, err = j.Append("note", map[string]any{"amount": "100"})
	require.NoError(t, err)
	_, err = j.Append("note", map[string]any{"amount": "200"})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	path := filepath.Join(dir, journal.FileName)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(raw), `"100"`, `"900"`, 1)), 0o600))

	_, openErr := journal.Open(dir, "y", time.Now)
	var ue *journal.UnavailableError
	require.ErrorAs(t, openErr, &ue)

	e := newEnv(t, func(d *tools.Deps) { d.JournalErr = openErr })
	before := e.state()
	text := e.refused("wallet_send", `{"to":"0x00000000000000000000000000000000000000f4","amount":"1","asset":"USDT"}`, "LEDGER_UNAVAILABLE")
	require.Contains(t, text, "reads keep working")
	require.Contains(t, text, "What to do")
	require.Equal(t, before, e.state())
	var bal balanceOut
	e.ok("wallet_balance", `{}`, &bal)

	// wallet_policy says so where the model looks, instead of "no caps".
	var pol struct {
		WritesRefused string `json:"writes_refused"`
	}
	polText := e.ok("wallet_policy", `{}`, &pol)
	require.Contains(t, pol.WritesRefused, ue.Reason)
	require.Contains(t, polText, "WRITES ARE REFUSED: the spend journal cannot be used")
	require.NotContains(t, polText, "none configured")
	_ = common.Address{}
}
