package pgstate

// Locking: mu serialises this process's callers and guards the cache; the
// wallet row's lock (FOR UPDATE) serialises hosts. An Update takes mu, then
// the row lock in its transaction, then catches up with what other hosts
// committed since the cache was taken. Methods ending in Locked need mu.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/records"
)

// Options say which database and wallet a Recorder keeps.
type Options struct {
	// URL is the postgres:// URL; PasswordFile, when set, holds the
	// password (its first line), which then need not be in the URL.
	URL, PasswordFile string
	ChainID           uint64
	// Genesis is the hash of the chain's genesis block, as its node says
	// it: with ChainID and Address it names the wallet's rows (the same id
	// with another genesis is another chain, with rows of its own). Open
	// refuses a zero Genesis.
	Genesis common.Hash
	Address common.Address
	// Session and Host identify this process in every record it appends
	// (Host: os.Hostname when empty).
	Session, Host string
	Now           func() time.Time // nil: time.Now
	// Timeout bounds one Update or View, including its retries (0: 10 s).
	Timeout time.Duration
	// Caps is the canonical form of this host's caps in force
	// (caps.Canonical). The wallet's row keeps the first host's; a host
	// whose Caps differ writes nothing (every Update fails with the
	// *caps.MismatchError) until they match. "": not compared (tests of
	// the records alone).
	Caps string
	// Retry, when set, lets Open return a Recorder for a database that does
	// not answer yet: each call tries again, failing with the
	// *journal.UnavailableError until it answers. A URL that cannot be read
	// or a schema newer than this binary still fails Open.
	Retry bool
	// ReadOnly opens the wallet's state for reading only (`walletgate
	// policy`): no migration, no wallet row, no record; Append and Update
	// refuse with journal.ErrReadOnly. A database without the wallet (or
	// without walletgate's schema) reads as an empty state.
	ReadOnly bool
}

// maxAttempts bounds how often an Update that failed on a serialization
// failure or a deadlock is tried.
const maxAttempts = 5

// checkpointEvery is how many records may follow the checkpoint before an
// Update stores a new one: what a starting host reads after it, and what
// storing it (the live state of the last two days) costs, amortised.
const checkpointEvery = 64

// maxPasswordFile bounds what is read of a password file.
const maxPasswordFile = 4 << 10

// Recorder is a wallet's records and live state in PostgreSQL. It is safe
// for concurrent use, and any number of processes and hosts may keep the
// same wallet. A nil *Recorder refuses every call.
type Recorder struct {
	pool    *pgxpool.Pool
	shown   string // the database, host only, for messages
	secret  string // the password, scrubbed from every error text
	chainID uint64
	chain   common.Hash // the chain's genesis block hash
	address common.Address
	first   string // the prev of the wallet's first record (firstPrev)
	caps    string // this host's caps in force (Options.Caps)
	session string
	host    string
	pid     int
	now     func() time.Time
	timeout time.Duration

	readOnly bool // Options.ReadOnly

	mu     sync.Mutex
	wallet int64   // the wallet's row id; 0 until the database has answered (-1: none, read-only)
	cache  *folded // nil: read the checkpoint at the next call
	none   bool    // read-only, and the database holds nothing of the wallet
}

// folded is the live state as of a record.
type folded struct {
	live records.Live
	seq  uint64
	hash string
}

// Open connects, applies the schema's migrations, makes sure the wallet's
// row exists, and reads its state. Its errors are *journal.UnavailableError.
func Open(ctx context.Context, o Options) (*Recorder, error) {
	shown := Shown(o.URL)
	cfg, err := pgxpool.ParseConfig(o.URL)
	if err != nil {
		return nil, &journal.UnavailableError{Path: shown, Reason: "WALLETGATE_STATE_URL cannot be read as a PostgreSQL URL",
			Fix: "correct WALLETGATE_STATE_URL (postgres://user@host:port/database)"}
	}
	secret := cfg.ConnConfig.Password
	if o.PasswordFile != "" {
		pw, err := readPassword(o.PasswordFile)
		if err != nil {
			return nil, &journal.UnavailableError{Path: shown, Reason: err.Error(), Fix: "correct WALLETGATE_STATE_PASSWORD_FILE"}
		}
		cfg.ConnConfig.Password, secret = pw, pw
	}
	cfg.MaxConns = 4
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	r := &Recorder{shown: shown, secret: secret, session: o.Session, host: o.Host, pid: os.Getpid(), now: o.Now, timeout: o.Timeout,
		chainID: o.ChainID, chain: o.Genesis, address: o.Address, first: firstPrev(o.ChainID, o.Address), caps: o.Caps, readOnly: o.ReadOnly}
	if o.Genesis == (common.Hash{}) {
		return nil, &journal.UnavailableError{Path: shown, Reason: "no genesis hash for the chain: the shared state is kept per chain, and a chain is its genesis",
			Fix: "this is a bug in the caller: pgstate.Options.Genesis must be the node's genesis block hash"}
	}
	if r.host == "" {
		r.host, _ = os.Hostname()
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.timeout <= 0 {
		r.timeout = 10 * time.Second
	}
	if r.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, r.unavailable("connect", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	err = r.connectLocked(ctx)
	if err == nil && r.caps != "" {
		// The caps in force, compared at the start so that a host whose
		// caps differ says so at once (the first write records this
		// host's when none are; every write compares them again). A
		// database that cannot answer this now is tried by each write.
		var stored string
		cctx, cancel := context.WithTimeout(ctx, r.timeout)
		qerr := r.pool.QueryRow(cctx, `SELECT caps FROM walletgate_wallets WHERE id = $1`, r.wallet).Scan(&stored)
		cancel()
		if qerr == nil && stored != "" {
			err = caps.Compare(stored, r.caps, r.shown)
		}
	}
	var (
		ne *NewerSchemaError
		me *caps.MismatchError
	)
	switch {
	case err == nil:
		return r, nil
	case o.Retry && !errors.As(err, &ne) && !errors.As(err, &me):
		return r, nil // every call tries again; Connected says it has not yet
	}
	r.pool.Close()
	return nil, err
}

// Connected reports whether the database has answered: the schema is
// applied and the wallet's row known.
func (r *Recorder) Connected() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wallet != 0
}

// connectLocked applies the migrations, registers the wallet and reads its
// state, once; until it succeeds every call runs it first.
func (r *Recorder) connectLocked(ctx context.Context) error {
	if r.wallet != 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if r.readOnly {
		return r.connectReadOnlyLocked(ctx)
	}
	if err := migrate(ctx, r.pool); err != nil {
		var ne *NewerSchemaError
		if errors.As(err, &ne) {
			return &journal.UnavailableError{Path: r.shown, Reason: ne.Error(),
				Fix: "run a walletgate at least as new as the one that upgraded the database; this one never writes to a schema it does not know"}
		}
		return r.unavailable("apply the schema", err)
	}
	addr := strings.ToLower(r.address.Hex())
	chainID := new(big.Int).SetUint64(r.chainID).String()
	genesis := strings.ToLower(r.chain.Hex())
	var id int64
	err := r.pool.QueryRow(ctx, `SELECT id FROM walletgate_wallets WHERE chain_id = $1::numeric AND address = $2 AND genesis = $3`, chainID, addr, genesis).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) { // the wallet's first host on this chain
		err = pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
			// A wallet row from before the genesis was kept (genesis '')
			// is adopted by the first host that opens it: bound to its
			// chain, as it was used on it. Any other chain with the same
			// id gets a row of its own.
			if _, err := tx.Exec(ctx, `UPDATE walletgate_wallets SET genesis = $3 WHERE chain_id = $1::numeric AND address = $2 AND genesis = ''
				AND NOT EXISTS (SELECT 1 FROM walletgate_wallets WHERE chain_id = $1::numeric AND address = $2 AND genesis = $3)`, chainID, addr, genesis); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO walletgate_wallets (chain_id, address, genesis, last_hash) VALUES ($1::numeric, $2, $3, $4)
				ON CONFLICT (chain_id, address, genesis) DO NOTHING`, chainID, addr, genesis, r.first); err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, `SELECT id FROM walletgate_wallets WHERE chain_id = $1::numeric AND address = $2 AND genesis = $3`, chainID, addr, genesis).Scan(&id); err != nil {
				return err
			}
			empty, _ := json.Marshal(records.Live{})
			_, err := tx.Exec(ctx, `INSERT INTO walletgate_checkpoints (wallet, seq, hash, live) VALUES ($1, 0, $2, $3)
				ON CONFLICT (wallet) DO NOTHING`, id, r.first, string(empty))
			return err
		})
	}
	if err != nil {
		return r.unavailable("register the wallet", err)
	}
	r.wallet = id
	if err := r.viewLocked(ctx); err != nil {
		r.wallet = 0
		return err
	}
	return nil
}

// Shown is a state URL as it may be printed: scheme://host[:port]/database,
// never the user's password or the query.
func Shown(raw string) string {
	cfg, err := pgconn.ParseConfig(raw)
	if err != nil || cfg.Host == "" {
		return "postgres://<redacted>"
	}
	host := cfg.Host
	if !strings.HasPrefix(host, "/") {
		host = fmt.Sprintf("%s:%d", host, cfg.Port)
	} else {
		host = "unix:" + host
	}
	return "postgres://" + host + "/" + cfg.Database
}

// Describe is where the state is kept, for messages.
func (r *Recorder) Describe() string { return r.shown }

// Close closes the connections.
func (r *Recorder) Close() {
	if r != nil && r.pool != nil {
		r.pool.Close()
	}
}

func readPassword(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("the state database's password file cannot be read: %w", err)
	}
	defer f.Close()
	buf := make([]byte, maxPasswordFile+1)
	n, _ := f.Read(buf)
	if n > maxPasswordFile {
		return "", fmt.Errorf("the state database's password file %s is longer than %d bytes", path, maxPasswordFile)
	}
	pw, _, _ := strings.Cut(string(buf[:n]), "\n")
	pw = strings.TrimSuffix(pw, "\r")
	if pw == "" {
		return "", fmt.Errorf("the state database's password file %s is empty", path)
	}
	return pw, nil
}

// row is one record as it is hashed: the journal's record with the host.
type row struct {
	Seq     uint64          `json:"seq"`
	Time    time.Time       `json:"time"`
	PID     int             `json:"pid"`
	Session string          `json:"session"`
	Host    string          `json:"host"`
	Kind    string          `json:"kind"`
	Data    json.RawMessage `json:"data,omitempty"`
	Prev    string          `json:"prev"`
}

// hash is the hex SHA-256 of the row's JSON: what the next row's prev holds.
func (w row) hash() string {
	b, _ := json.Marshal(w)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// record is the row as the live state folds it: with PID 0 (see doc.go).
func (w row) record() records.Record {
	return records.Record{Seq: w.Seq, Time: w.Time, Session: w.Session, Kind: w.Kind, Data: w.Data, Prev: w.Prev}
}

// firstPrev is the prev of a wallet's first record: it binds the chain of
// records to the wallet and chain id, so rows moved from another wallet do
// not verify. (Not the chain's genesis: rows adopted from before it was
// kept began with this, so every wallet row does.)
func firstPrev(chainID uint64, addr common.Address) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("walletgate pgstate v1 %d %s", chainID, strings.ToLower(addr.Hex()))))
	return hex.EncodeToString(sum[:])
}

// Append appends one record.
func (r *Recorder) Append(kind string, data any) (rec records.Record, err error) {
	err = r.Update(func(_ *records.Live, appendRecord records.AppendFunc) error {
		rec, err = appendRecord(kind, data)
		return err
	})
	return rec, err
}

// Update runs fn with the live state in one database transaction that holds
// the wallet's row lock; fn's appends commit with it, or not at all. A
// serialization failure or deadlock is retried, up to maxAttempts.
func (r *Recorder) Update(fn func(live *records.Live, appendRecord records.AppendFunc) error) error {
	if r == nil || r.pool == nil {
		return &journal.UnavailableError{Path: "postgres", Reason: "the state database is not open", Fix: "check WALLETGATE_STATE_URL and restart walletgate"}
	}
	if r.readOnly {
		return journal.ErrReadOnly
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	if err := r.connectLocked(ctx); err != nil {
		return err
	}
	var err error
	for attempt := 1; ; attempt++ {
		err = r.updateLocked(ctx, fn)
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(attempt) * 5 * time.Millisecond)
	}
	var de *dbError
	if errors.As(err, &de) {
		return r.unavailable(de.op, de.err)
	}
	return err
}

func (r *Recorder) updateLocked(ctx context.Context, fn func(*records.Live, records.AppendFunc) error) (err error) {
	defer func() {
		if err != nil {
			r.cache = nil // fn or a failed commit may have folded what was not committed
		}
	}()
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return &dbError{"begin a transaction", err}
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var lastSeq, cpSeq uint64
	var lastHash, stored string
	if err := tx.QueryRow(ctx, `SELECT w.last_seq, w.last_hash, c.seq, w.caps FROM walletgate_wallets w JOIN walletgate_checkpoints c ON c.wallet = w.id
		WHERE w.id = $1 FOR UPDATE OF w`, r.wallet).Scan(&lastSeq, &lastHash, &cpSeq, &stored); err != nil {
		return &dbError{"lock the wallet's row", err}
	}
	// One set of caps per shared wallet: the first host's, under the row
	// lock; a host whose caps differ writes nothing.
	claim := false
	switch {
	case r.caps == "":
	case stored == "":
		if _, err := tx.Exec(ctx, `UPDATE walletgate_wallets SET caps = $2 WHERE id = $1`, r.wallet, r.caps); err != nil {
			return &dbError{"record the caps in force", err}
		}
		claim = true
	default:
		if err := caps.Compare(stored, r.caps, r.shown); err != nil {
			return err
		}
	}
	if err := r.catchUpLocked(ctx, tx, lastSeq, lastHash); err != nil {
		return err
	}
	f := r.cache
	appended := false
	appendRecord := func(kind string, data any) (records.Record, error) {
		if kind == "" {
			return records.Record{}, errors.New("pgstate: empty record kind")
		}
		raw, err := json.Marshal(data)
		if err != nil {
			return records.Record{}, fmt.Errorf("pgstate: %s record: %w", kind, err)
		}
		w := row{Seq: f.seq + 1, Time: r.now().UTC().Truncate(time.Microsecond), PID: r.pid, Session: r.session, Host: r.host, Kind: kind, Data: raw, Prev: f.hash}
		h := w.hash()
		if _, err := tx.Exec(ctx, `INSERT INTO walletgate_records (wallet, seq, time, pid, session, host, kind, data, prev, hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, r.wallet, int64(w.Seq), w.Time, w.PID, w.Session, w.Host, w.Kind, string(w.Data), w.Prev, h); err != nil {
			return records.Record{}, &dbError{"append a record", err}
		}
		rec := w.record()
		if err := f.live.Apply(rec); err != nil {
			return records.Record{}, err
		}
		f.seq, f.hash, appended = w.Seq, h, true
		rec.PID = w.PID
		return rec, nil
	}
	if err := fn(&f.live, appendRecord); err != nil {
		return err
	}
	if !appended {
		if claim {
			if err := tx.Commit(ctx); err != nil {
				return &dbError{"commit", err}
			}
		}
		return nil // otherwise rolled back: it only read
	}
	if f.seq-cpSeq >= checkpointEvery {
		snap, err := f.live.Snapshot()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE walletgate_checkpoints SET seq = $2, hash = $3, live = $4 WHERE wallet = $1`, r.wallet, int64(f.seq), f.hash, string(snap)); err != nil {
			return &dbError{"store the checkpoint", err}
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE walletgate_wallets SET last_seq = $2, last_hash = $3 WHERE id = $1`, r.wallet, int64(f.seq), f.hash); err != nil {
		return &dbError{"advance the wallet's chain", err}
	}
	if err := tx.Commit(ctx); err != nil {
		return &dbError{"commit", err}
	}
	return nil
}

// connectReadOnlyLocked finds the wallet's row, writing nothing: a
// database without walletgate's schema or without the wallet holds an
// empty state.
func (r *Recorder) connectReadOnlyLocked(ctx context.Context) error {
	have, err := schemaVersion(ctx, r.pool)
	switch {
	case err != nil:
		return r.unavailable("read the schema's version", err)
	case have > SchemaVersion:
		return &journal.UnavailableError{Path: r.shown, Reason: (&NewerSchemaError{Database: have, Binary: SchemaVersion}).Error(),
			Fix: "run a walletgate at least as new as the one that upgraded the database"}
	case have == 0:
		r.none, r.wallet = true, -1
		return nil
	case have < SchemaVersion:
		return &journal.UnavailableError{Path: r.shown, Reason: fmt.Sprintf("the database has walletgate's schema %d, older than this walletgate's %d, and a read-only look does not upgrade it", have, SchemaVersion),
			Fix: "start a walletgate server on it once (it upgrades the schema), then ask again"}
	}
	var id int64
	err = r.pool.QueryRow(ctx, `SELECT id FROM walletgate_wallets WHERE chain_id = $1::numeric AND address = $2 AND genesis = $3`,
		new(big.Int).SetUint64(r.chainID).String(), strings.ToLower(r.address.Hex()), strings.ToLower(r.chain.Hex())).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		r.none, r.wallet = true, -1
		return nil
	}
	if err != nil {
		return r.unavailable("find the wallet", err)
	}
	r.wallet = id
	if err := r.viewLocked(ctx); err != nil {
		r.wallet = 0
		return err
	}
	return nil
}

// View runs fn with the live state as of the latest committed record.
func (r *Recorder) View(fn func(live *records.Live) error) error {
	if r == nil || r.pool == nil {
		return &journal.UnavailableError{Path: "postgres", Reason: "the state database is not open", Fix: "check WALLETGATE_STATE_URL and restart walletgate"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	if r.wallet == 0 {
		if err := r.connectLocked(ctx); err != nil {
			return err
		}
	} else if !r.none {
		if err := r.viewLocked(ctx); err != nil {
			return err
		}
	}
	if r.none {
		return fn(&records.Live{})
	}
	return fn(&r.cache.live)
}

// viewLocked catches the cache up with the committed records.
func (r *Recorder) viewLocked(ctx context.Context) error {
	err := func() error {
		tx, err := r.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return &dbError{"begin a transaction", err}
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		var lastSeq uint64
		var lastHash string
		if err := tx.QueryRow(ctx, `SELECT last_seq, last_hash FROM walletgate_wallets WHERE id = $1`, r.wallet).Scan(&lastSeq, &lastHash); err != nil {
			return &dbError{"read the wallet's row", err}
		}
		if err := r.catchUpLocked(ctx, tx, lastSeq, lastHash); err != nil {
			r.cache = nil
			return err
		}
		return nil
	}()
	var de *dbError
	if errors.As(err, &de) {
		return r.unavailable(de.op, de.err)
	}
	return err
}

// catchUpLocked brings the cache to lastSeq: from the cache, or the
// checkpoint, and the records after it, each checked against the chain.
func (r *Recorder) catchUpLocked(ctx context.Context, tx pgx.Tx, lastSeq uint64, lastHash string) error {
	if r.cache != nil && r.cache.seq == lastSeq && r.cache.hash == lastHash {
		return nil
	}
	if r.cache == nil || r.cache.seq > lastSeq {
		var f folded
		var raw string
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT seq, hash, live::text FROM walletgate_checkpoints WHERE wallet = $1`, r.wallet).Scan(&seq, &f.hash, &raw); err != nil {
			return &dbError{"read the checkpoint", err}
		}
		live, err := records.ReadState(json.RawMessage(raw))
		if err != nil {
			return r.broken(uint64(seq), "the checkpoint cannot be read ("+err.Error()+")")
		}
		f.live = live
		f.seq = uint64(seq)
		r.cache = &f
	}
	f := r.cache
	rows, err := tx.Query(ctx, `SELECT seq, time, pid, session, host, kind, data, prev, hash FROM walletgate_records
		WHERE wallet = $1 AND seq > $2 AND seq <= $3 ORDER BY seq`, r.wallet, int64(f.seq), int64(lastSeq))
	if err != nil {
		return &dbError{"read records", err}
	}
	defer rows.Close()
	for rows.Next() {
		w, stored, err := scanRow(rows)
		if err != nil {
			return &dbError{"read records", err}
		}
		if w.Seq != f.seq+1 || w.Prev != f.hash || w.hash() != stored {
			return r.broken(w.Seq, "it does not match the hash chain")
		}
		if err := f.live.Apply(w.record()); err != nil {
			return r.broken(w.Seq, err.Error())
		}
		f.seq, f.hash = w.Seq, stored
	}
	if err := rows.Err(); err != nil {
		return &dbError{"read records", err}
	}
	if f.seq != lastSeq || f.hash != lastHash {
		return r.broken(f.seq+1, "the records end before the wallet's chain does (a record was deleted)")
	}
	return nil
}

func scanRow(rows pgx.Rows) (row, string, error) {
	var w row
	var seq int64
	var data, stored string
	if err := rows.Scan(&seq, &w.Time, &w.PID, &w.Session, &w.Host, &w.Kind, &data, &w.Prev, &stored); err != nil {
		return row{}, "", err
	}
	w.Seq, w.Time = uint64(seq), w.Time.UTC()
	if data != "" {
		w.Data = json.RawMessage(data)
	}
	return w, stored, nil
}

// dbError is a failed database operation, as opposed to fn's own error.
type dbError struct {
	op  string
	err error
}

func (e *dbError) Error() string { return e.op + ": " + e.err.Error() }
func (e *dbError) Unwrap() error { return e.err }

// retryable reports a serialization failure or a deadlock.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// unavailable explains a failed database operation to the operator.
func (r *Recorder) unavailable(op string, err error) *journal.UnavailableError {
	var pe *pgconn.PgError
	reason := fmt.Sprintf("the state database %s could not %s (%s)", r.shown, op, r.scrub(err.Error()))
	fix := "check that PostgreSQL at " + r.shown + " is running and reachable from this host, and that WALLETGATE_STATE_URL (and WALLETGATE_STATE_PASSWORD_FILE) are right; writes resume by themselves once it answers"
	switch {
	case errors.As(err, &pe) && pe.Code == "25006":
		reason = fmt.Sprintf("the state database %s is read-only (a standby, or default_transaction_read_only)", r.shown)
		fix = "point WALLETGATE_STATE_URL at the primary; writes resume by themselves once it accepts them"
	case errors.As(err, &pe) && (pe.Code == "42501" || strings.HasPrefix(pe.Code, "28")):
		fix = "grant the database user what README's \"Shared state in PostgreSQL\" lists, or correct its password"
	}
	return &journal.UnavailableError{Path: r.shown, Reason: reason, Fix: fix}
}

// broken is a record that does not verify: nothing more is written until an
// operator looks.
func (r *Recorder) broken(seq uint64, why string) *journal.UnavailableError {
	return &journal.UnavailableError{Path: r.shown, Reason: fmt.Sprintf("record seq %d of this wallet in the state database %s cannot be trusted: %s", seq, r.shown, why),
		Fix: "run `walletgate audit verify` with the same WALLETGATE_STATE_URL to see what is wrong, and restore the walletgate_records table from a backup"}
}

// scrub removes the password from a driver's message.
func (r *Recorder) scrub(s string) string {
	if r.secret != "" {
		s = strings.ReplaceAll(s, r.secret, "<password>")
	}
	return s
}
