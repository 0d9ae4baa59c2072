package pgstate_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/internal/pgtest"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/pgstate"
)

var wallet = common.HexToAddress("0x00000000000000000000000000000000000a11ce")

// chainGenesis stands for the genesis block hash of the chain the tests keep
// the wallet on.
var chainGenesis = common.HexToHash("0x1111111111111111111111111111111111111111111111111111111111111111")

func open(t *testing.T, url, session string) *pgstate.Recorder {
	t.Helper()
	r, err := pgstate.Open(context.Background(), pgstate.Options{URL: url, ChainID: 1337, Genesis: chainGenesis, Address: wallet, Session: session, Host: "host-" + session})
	require.NoError(t, err)
	t.Cleanup(r.Close)
	return r
}

func exec(t *testing.T, url, sql string, args ...any) {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer c.Close(context.Background())
	_, err = c.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// reserve is a day-cap check and a nonce allocation in one Update, as the
// engine's store makes them: it reserves 1 unit if the day's total stays
// within limit, with the lowest nonce no allocation holds.
func reserve(r reserver, id string, limit int64) (nonce uint64, ok bool, err error) {
	err = r.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
		sum := new(big.Int)
		for _, c := range live.Caps {
			v, _ := new(big.Int).SetString(c.Change["ETH"], 10)
			sum.Add(sum, v)
		}
		if sum.Int64()+1 > limit {
			return nil
		}
		held := map[uint64]bool{}
		for _, a := range live.Allocs {
			held[a.Nonce] = true
		}
		for held[nonce] {
			nonce++
		}
		n := nonce
		_, err := appendRecord(records.KindCapReserve, records.CapChange{V: records.Version, ID: id, At: time.Now().UTC(), Change: map[string]string{"ETH": "1"}, Nonce: &n})
		ok = err == nil
		return err
	})
	return nonce, ok, err
}

// Three hosts race reservations on one wallet: the day's limit holds and no
// nonce is taken twice.
func TestHostsRacingReservationsNeverPassTheLimitOrShareANonce(t *testing.T) {
	pg := pgtest.Start(t)
	hosts := []*pgstate.Recorder{open(t, pg.URL, "a"), open(t, pg.URL, "b"), open(t, pg.URL, "c")}
	const limit, each = 90, 20
	var mu sync.Mutex
	nonces := map[uint64]string{}
	var wg sync.WaitGroup
	for h, r := range hosts {
		for g := 0; g < 2; g++ { // two callers in each process, too
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; k < each; k++ {
					id := fmt.Sprintf("%d-%d-%d", h, g, k)
					n, ok, err := reserve(r, id, limit)
					require.NoError(t, err)
					if ok {
						mu.Lock()
						require.NotContains(t, nonces, n, "nonce %d taken twice", n)
						nonces[n] = id
						mu.Unlock()
					}
				}
			}()
		}
	}
	wg.Wait()
	require.Len(t, nonces, limit)
	for n := uint64(0); n < limit; n++ {
		require.Contains(t, nonces, n)
	}
	// A host that starts now folds the same state from the checkpoint.
	late := open(t, pg.URL, "d")
	require.NoError(t, late.View(func(l *records.Live) error {
		require.Len(t, l.Caps, limit)
		require.Len(t, l.Allocs, limit)
		return nil
	}))
	n, err := late.Verify(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(limit), n)
}

func TestVerifyNamesTheEditedRow(t *testing.T) {
	pg := pgtest.Start(t)
	r := open(t, pg.URL, "a")
	for i := 0; i < 5; i++ {
		_, err := r.Append(records.KindToolStart, map[string]any{"i": i})
		require.NoError(t, err)
	}
	n, err := r.Verify(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(5), n)

	exec(t, pg.URL, `UPDATE walletgate_records SET data = '{"i":9}' WHERE seq = 3`)
	_, err = r.Verify(context.Background())
	var ce *pgstate.ChainError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, uint64(3), ce.Seq)
	require.Contains(t, ce.Reason, "changed")
}

func TestVerifyFindsADeletedLastRow(t *testing.T) {
	pg := pgtest.Start(t)
	r := open(t, pg.URL, "a")
	for i := 0; i < 3; i++ {
		_, err := r.Append(records.KindToolStart, map[string]any{"i": i})
		require.NoError(t, err)
	}
	exec(t, pg.URL, `DELETE FROM walletgate_records WHERE seq = 3`)
	_, err := r.Verify(context.Background())
	var ce *pgstate.ChainError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, uint64(3), ce.Seq)
}

func TestANewerSchemaIsRefused(t *testing.T) {
	pg := pgtest.Start(t)
	open(t, pg.URL, "a")
	exec(t, pg.URL, `INSERT INTO walletgate_schema (version) VALUES ($1)`, pgstate.SchemaVersion+1)
	_, err := pgstate.Open(context.Background(), pgstate.Options{URL: pg.URL, ChainID: 1337, Genesis: chainGenesis, Address: wallet, Session: "b"})
	var ue *journal.UnavailableError
	require.ErrorAs(t, err, &ue)
	require.Contains(t, ue.Reason, fmt.Sprintf("version %d, newer than this walletgate's %d", pgstate.SchemaVersion+1, pgstate.SchemaVersion))
}

// A read-only database: the state is still read, writes are refused with
// what to do.
func TestReadOnlyDatabaseRefusesWritesAndKeepsReads(t *testing.T) {
	pg := pgtest.Start(t)
	_, err := open(t, pg.URL, "a").Append(records.KindCapReserve, records.CapChange{V: records.Version, ID: "r1", At: time.Now().UTC(), Change: map[string]string{"ETH": "7"}})
	require.NoError(t, err)
	exec(t, pg.URL, `ALTER DATABASE postgres SET default_transaction_read_only = on`)
	r := open(t, pg.URL, "b")
	require.NoError(t, r.View(func(l *records.Live) error {
		require.Len(t, l.Caps, 1)
		return nil
	}))
	_, err = r.Append(records.KindToolStart, map[string]any{})
	var ue *journal.UnavailableError
	require.ErrorAs(t, err, &ue)
	require.Contains(t, ue.Reason, "is read-only")
	require.Contains(t, ue.Fix, "primary")
}

// The database going away: writes refused with the host and what to do,
// never the password.
func TestUnreachableDatabaseIsUnavailableWithTheHost(t *testing.T) {
	pg := pgtest.Start(t)
	exec(t, pg.URL, `ALTER ROLE walletgate PASSWORD 'hunter2hunter2'`)
	url := strings.Replace(pg.URL, "walletgate@", "walletgate:hunter2hunter2@", 1)
	r := open(t, url, "a")
	_, err := r.Append(records.KindToolStart, map[string]any{})
	require.NoError(t, err)
	pg.Stop(t)
	_, err = r.Append(records.KindToolStart, map[string]any{})
	var ue *journal.UnavailableError
	require.ErrorAs(t, err, &ue)
	require.Contains(t, ue.Reason, "the state database postgres://unix:"+pg.Dir)
	require.Contains(t, ue.Fix, "is running and reachable")
	require.NotContains(t, err.Error(), "hunter2")
	require.True(t, errors.As(r.View(func(*records.Live) error { return nil }), &ue))

	_, err = pgstate.Open(context.Background(), pgstate.Options{URL: url, ChainID: 1337, Genesis: chainGenesis, Address: wallet, Session: "b"})
	require.ErrorAs(t, err, &ue)
	require.NotContains(t, err.Error(), "hunter2")
}

func TestShownHidesThePassword(t *testing.T) {
	require.Equal(t, "postgres://db.internal:6432/wg", pgstate.Shown("postgres://u:secret@db.internal:6432/wg?sslmode=require"))
	require.Equal(t, "postgres://unix:/run/pg/wg", pgstate.Shown("postgres://u:secret@localhost/wg?host=/run/pg"))
	require.NotContains(t, pgstate.Shown("postgres://u:secret@[bad"), "secret")
}

// The grants README lists are enough, once the schema is applied: no
// DELETE, no TRUNCATE, no CREATE.
func TestTheREADMEGrantsAreEnough(t *testing.T) {
	pg := pgtest.Start(t)
	open(t, pg.URL, "owner")
	exec(t, pg.URL, `CREATE ROLE wgapp LOGIN`)
	exec(t, pg.URL, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`)
	exec(t, pg.URL, `GRANT SELECT, INSERT, UPDATE ON walletgate_schema, walletgate_wallets, walletgate_records, walletgate_checkpoints TO wgapp`)
	exec(t, pg.URL, `GRANT USAGE ON SEQUENCE walletgate_wallets_id_seq TO wgapp`)
	app := strings.Replace(pg.URL, "walletgate@", "wgapp@", 1)
	other := common.HexToAddress("0x00000000000000000000000000000000000b0b00")
	for _, w := range []common.Address{wallet, other} { // an existing wallet, and a new one
		r, err := pgstate.Open(context.Background(), pgstate.Options{URL: app, ChainID: 1337, Genesis: chainGenesis, Address: w, Session: "app"})
		require.NoError(t, err)
		for i := 0; i < 70; i++ { // past a checkpoint
			_, _, err := reserve(r, fmt.Sprint(i), 1000)
			require.NoError(t, err)
		}
		_, err = r.ReleasePhantoms(0)
		require.NoError(t, err)
		r.Close()
	}
	chains, err := pgstate.VerifyDatabase(context.Background(), pgstate.Options{URL: app})
	require.NoError(t, err)
	require.Len(t, chains, 2)
	for _, c := range chains {
		require.NoError(t, c.Err)
	}
}

// With Retry, a database that is down at Open is tried again by each call.
func TestRetryOpensOnceTheDatabaseAnswers(t *testing.T) {
	pg := pgtest.Start(t)
	pg.Stop(t)
	r, err := pgstate.Open(context.Background(), pgstate.Options{URL: pg.URL, ChainID: 1337, Genesis: chainGenesis, Address: wallet, Session: "a", Retry: true})
	require.NoError(t, err)
	defer r.Close()
	require.False(t, r.Connected())
	_, err = r.Append(records.KindToolStart, map[string]any{})
	var ue *journal.UnavailableError
	require.ErrorAs(t, err, &ue)
	pg.Resume(t)
	_, err = r.Append(records.KindToolStart, map[string]any{})
	require.NoError(t, err)
	require.True(t, r.Connected())
	_, err = pgstate.Open(context.Background(), pgstate.Options{URL: pg.URL, ChainID: 1337, Genesis: chainGenesis, Address: wallet, Session: "b"})
	require.NoError(t, err)
}

// A reservation another host made and signed nothing for is released once
// it is older than the bound, never sooner, and never this session's own.
func TestReleasePhantomsGoesByAgeAcrossHosts(t *testing.T) {
	pg := pgtest.Start(t)
	a := open(t, pg.URL, "a")
	now := time.Now().UTC()
	for id, at := range map[string]time.Time{"old": now.Add(-10 * time.Minute), "young": now.Add(-time.Minute)} {
		_, err := a.Append(records.KindCapReserve, records.CapChange{V: records.Version, ID: id, At: at, Change: map[string]string{"ETH": "5"}})
		require.NoError(t, err)
	}
	released, err := a.ReleasePhantoms(6 * time.Minute)
	require.NoError(t, err)
	require.Empty(t, released, "a session's own reservations are its own to settle")

	b := open(t, pg.URL, "b")
	released, err = b.ReleasePhantoms(6 * time.Minute)
	require.NoError(t, err)
	require.Len(t, released, 1)
	require.Equal(t, "old", released[0].ID)
	require.NoError(t, b.View(func(l *records.Live) error {
		require.Len(t, l.Reservations, 1)
		require.Equal(t, "young", l.Reservations[0].ID)
		sum := new(big.Int)
		for _, c := range l.Caps {
			v, _ := new(big.Int).SetString(c.Change["ETH"], 10)
			sum.Add(sum, v)
		}
		require.Equal(t, int64(5), sum.Int64(), "only the young one still counts")
		return nil
	}))
}

// The same chain id and wallet on another genesis is another chain: its
// rows are its own (no day spent there counts here, no nonce is shared),
// a zero genesis is refused, and a wallet row from before the genesis was
// kept is adopted by the first chain that opens it, and by no other.
func TestAnotherGenesisHasRowsOfItsOwn(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	openOn := func(g common.Hash) *pgstate.Recorder {
		t.Helper()
		r, err := pgstate.Open(ctx, pgstate.Options{URL: pg.URL, ChainID: 1337, Genesis: g, Address: wallet, Session: "s"})
		require.NoError(t, err)
		t.Cleanup(r.Close)
		return r
	}
	dayOf := func(r *pgstate.Recorder) (n int) {
		t.Helper()
		require.NoError(t, r.View(func(live *records.Live) error { n = len(live.Caps); return nil }))
		return n
	}
	a := openOn(chainGenesis)
	_, ok, err := reserve(a, "a1", 10)
	require.NoError(t, err)
	require.True(t, ok)

	other := common.HexToHash("0x2222222222222222222222222222222222222222222222222222222222222222")
	b := openOn(other)
	require.Zero(t, dayOf(b), "chain A's day does not count on chain B")
	nonce, ok, err := reserve(b, "b1", 10)
	require.NoError(t, err)
	require.True(t, ok)
	require.Zero(t, nonce, "chain A's nonce is not chain B's")
	require.Equal(t, 1, dayOf(openOn(chainGenesis)))

	_, err = pgstate.Open(ctx, pgstate.Options{URL: pg.URL, ChainID: 1337, Address: wallet, Session: "s"})
	var ue *journal.UnavailableError
	require.ErrorAs(t, err, &ue, "no genesis: refused")

	// A row from before: the first chain to open it adopts it.
	legacy := common.HexToAddress("0x00000000000000000000000000000000000001d0")
	old, err := pgstate.Open(ctx, pgstate.Options{URL: pg.URL, ChainID: 1337, Genesis: chainGenesis, Address: legacy, Session: "s"})
	require.NoError(t, err)
	_, _, err = reserve(old, "old", 10)
	require.NoError(t, err)
	old.Close()
	exec(t, pg.URL, `UPDATE walletgate_wallets SET genesis = '' WHERE address = $1`, strings.ToLower(legacy.Hex()))
	third := common.HexToHash("0x3333333333333333333333333333333333333333333333333333333333333333")
	for _, g := range []common.Hash{third, chainGenesis} {
		r, err := pgstate.Open(ctx, pgstate.Options{URL: pg.URL, ChainID: 1337, Genesis: g, Address: legacy, Session: "s"})
		require.NoError(t, err)
		want := 0
		if g == third {
			want = 1 // adopted, with its day
		}
		require.Equal(t, want, dayOf(r), "genesis %s", g.Hex())
		r.Close()
	}
	chains, err := pgstate.VerifyDatabase(ctx, pgstate.Options{URL: pg.URL})
	require.NoError(t, err)
	require.Len(t, chains, 4)
	for _, c := range chains {
		require.NoError(t, c.Err)
		require.NotZero(t, c.Genesis)
	}
}

// One set of caps per shared wallet: the first host's caps are the wallet's;
// a host whose caps differ is refused at Open (with Retry too) and writes
// nothing, a host with the same caps opens; caps changed in the database
// under a running host stop its writes; cleared, the next host to write
// records its own.
func TestHostsWithOtherCapsWriteNothing(t *testing.T) {
	pg := pgtest.Start(t)
	limits := func(day int64) string {
		return caps.Canonical(caps.Limits{PerTx: map[common.Address]*big.Int{{}: big.NewInt(1)}, PerDay: map[common.Address]*big.Int{{}: big.NewInt(day)}}, false, nil)
	}
	opts := func(session, c string, retry bool) pgstate.Options {
		return pgstate.Options{URL: pg.URL, ChainID: 1337, Genesis: chainGenesis, Address: wallet, Session: session, Caps: c, Retry: retry}
	}
	a, err := pgstate.Open(context.Background(), opts("a", limits(50), false))
	require.NoError(t, err)
	defer a.Close()
	_, err = a.Append(records.KindToolStart, map[string]any{})
	require.NoError(t, err)
	rowCount := func() int {
		c, err := pgx.Connect(context.Background(), pg.URL)
		require.NoError(t, err)
		defer c.Close(context.Background())
		var n int
		require.NoError(t, c.QueryRow(context.Background(), `SELECT count(*) FROM walletgate_records`).Scan(&n))
		return n
	}
	before := rowCount()

	for _, retry := range []bool{false, true} {
		_, err = pgstate.Open(context.Background(), opts("b", limits(1000), retry))
		var me *caps.MismatchError
		require.ErrorAs(t, err, &me, "retry=%v", retry)
		require.Equal(t, []caps.LimitDiff{{Window: caps.PerDay, Asset: common.Address{}, Theirs: big.NewInt(50), Ours: big.NewInt(1000), Decimals: 18}}, me.Diffs)
		require.Contains(t, err.Error(), "per day ETH")
	}
	require.Equal(t, before, rowCount(), "the refused host wrote nothing")
	same, err := pgstate.Open(context.Background(), opts("c", limits(50), false))
	require.NoError(t, err)
	same.Close()

	// The caps in the database changed under a running host.
	exec(t, pg.URL, `UPDATE walletgate_wallets SET caps = $1`, limits(10))
	_, err = a.Append(records.KindToolStart, map[string]any{})
	var me *caps.MismatchError
	require.ErrorAs(t, err, &me)
	require.Equal(t, before, rowCount())

	// Cleared: the next host to write records its own.
	exec(t, pg.URL, `UPDATE walletgate_wallets SET caps = ''`)
	b, err := pgstate.Open(context.Background(), opts("b", limits(1000), false))
	require.NoError(t, err)
	defer b.Close()
	_, err = b.Append(records.KindToolStart, map[string]any{})
	require.NoError(t, err)
	_, err = a.Append(records.KindToolStart, map[string]any{})
	require.ErrorAs(t, err, &me, "b's caps are now the wallet's")
}

// A checkpoint of a live state in a format newer than this walletgate's
// (another host runs a later build) is refused, not half read; one without
// a format (written before formats were named) is read.
func TestACheckpointOfANewerStateFormatIsRefused(t *testing.T) {
	pg := pgtest.Start(t)
	r := open(t, pg.URL, "a")
	_, ok, err := reserve(r, "r1", 10)
	require.NoError(t, err)
	require.True(t, ok)
	exec(t, pg.URL, `UPDATE walletgate_checkpoints SET live = '{"caps":null,"pending":null,"reservations":null,"sessions":null,"latest":"0001-01-01T00:00:00Z"}'`)
	_, err = pgstate.Open(context.Background(), pgstate.Options{URL: pg.URL, ChainID: 1337, Genesis: chainGenesis, Address: wallet, Session: "b"})
	require.NoError(t, err, "an unversioned state is read")
	exec(t, pg.URL, `UPDATE walletgate_checkpoints SET live = jsonb_set(live, '{v}', to_jsonb($1::int))`, records.StateVersion+1)
	_, err = pgstate.Open(context.Background(), pgstate.Options{URL: pg.URL, ChainID: 1337, Genesis: chainGenesis, Address: wallet, Session: "c"})
	var ue *journal.UnavailableError
	require.ErrorAs(t, err, &ue)
	require.Contains(t, ue.Reason, fmt.Sprintf("checkpoint state has format %d; this walletgate reads formats up to %d: upgrade walletgate", records.StateVersion+1, records.StateVersion))
}
