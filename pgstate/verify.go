package pgstate

// The audit of a wallet's chain in the database, and the start-up release
// of reservations whose host died before signing.

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/records"
)

// ChainError is the first record of a wallet's chain that does not verify.
type ChainError struct {
	Seq    uint64
	Reason string
}

func (e *ChainError) Error() string { return fmt.Sprintf("record seq %d: %s", e.Seq, e.Reason) }

// Verify checks the wallet's whole chain: seq 1, 2, 3 … with no gap, each
// row's hash its content's, each prev the hash before it, and the wallet
// row's end the last row's. It returns how many records verified, and a
// *ChainError naming the first one that does not.
func (r *Recorder) Verify(ctx context.Context) (uint64, error) {
	tx, err := r.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, r.unavailable("begin a transaction", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var lastSeq uint64
	var lastHash string
	if err := tx.QueryRow(ctx, `SELECT last_seq, last_hash FROM walletgate_wallets WHERE id = $1`, r.wallet).Scan(&lastSeq, &lastHash); err != nil {
		return 0, r.unavailable("read the wallet's row", err)
	}
	rows, err := tx.Query(ctx, `SELECT seq, time, pid, session, host, kind, data, prev, hash FROM walletgate_records WHERE wallet = $1 ORDER BY seq`, r.wallet)
	if err != nil {
		return 0, r.unavailable("read records", err)
	}
	defer rows.Close()
	seq, prev := uint64(0), r.first
	for rows.Next() {
		w, stored, err := scanRow(rows)
		if err != nil {
			return seq, r.unavailable("read records", err)
		}
		switch {
		case w.Seq != seq+1:
			return seq, &ChainError{Seq: seq + 1, Reason: fmt.Sprintf("missing: the next row is seq %d", w.Seq)}
		case w.hash() != stored:
			return seq, &ChainError{Seq: w.Seq, Reason: "its content does not match its hash: the row was changed after it was written"}
		case w.Prev != prev:
			return seq, &ChainError{Seq: w.Seq, Reason: "its prev is not the hash of the record before it: a row before it was changed or replaced"}
		}
		seq, prev = w.Seq, stored
	}
	if err := rows.Err(); err != nil {
		return seq, r.unavailable("read records", err)
	}
	if seq != lastSeq || prev != lastHash {
		return seq, &ChainError{Seq: seq + 1, Reason: fmt.Sprintf("the chain ends at seq %d but the wallet's row says %d: records were deleted or the last one changed", seq, lastSeq)}
	}
	return seq, nil
}

// ReleasePhantoms releases every open reservation, made by another session,
// older than olderThan: its process signed nothing in time, and the engine
// signs nothing once its confirm bound has passed, so nothing was sent for
// it. A host's process ids mean nothing on another host, so age is the only
// test; olderThan must exceed the engine's confirm bound plus the clock
// difference between hosts. Each release is a cap_correct record negating
// the reservation, dated like it, with Reason records.ReasonPhantom, and a
// nonce_free record for each nonce it still holds (records.FreeNonces).
func (r *Recorder) ReleasePhantoms(olderThan time.Duration) ([]records.OpenReservation, error) {
	var released []records.OpenReservation
	err := r.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
		released = released[:0]
		var gone []records.OpenReservation
		for _, o := range live.Reservations {
			if o.Session != r.session && r.now().Sub(o.At) > olderThan {
				gone = append(gone, o)
			}
		}
		for _, o := range gone {
			if _, _, err := records.ReleaseReservation(live, appendRecord, o.ID, records.ReasonPhantom); err != nil {
				return err
			}
			if err := records.FreeNonces(live, appendRecord, o.ID, r.now().UTC()); err != nil {
				return err
			}
			released = append(released, o)
		}
		return nil
	})
	return released, err
}

// WalletChain is one wallet's chain as VerifyDatabase found it.
type WalletChain struct {
	ChainID uint64
	Genesis common.Hash // the chain's genesis block hash; zero for a row no host has opened since it was kept
	Address common.Address
	Records uint64 // how many verified
	Err     error  // nil, a *ChainError, or a *journal.UnavailableError
}

// VerifyDatabase verifies the chain of every wallet in the database that
// o.URL names (o's wallet and chain are not used). It writes nothing: the
// schema is not migrated, only its version checked.
func VerifyDatabase(ctx context.Context, o Options) ([]WalletChain, error) {
	r := &Recorder{shown: Shown(o.URL)}
	cfg, err := pgxpool.ParseConfig(o.URL)
	if err != nil {
		return nil, &journal.UnavailableError{Path: r.shown, Reason: "WALLETGATE_STATE_URL cannot be read as a PostgreSQL URL", Fix: "correct WALLETGATE_STATE_URL"}
	}
	r.secret = cfg.ConnConfig.Password
	if o.PasswordFile != "" {
		pw, err := readPassword(o.PasswordFile)
		if err != nil {
			return nil, &journal.UnavailableError{Path: r.shown, Reason: err.Error(), Fix: "correct WALLETGATE_STATE_PASSWORD_FILE"}
		}
		cfg.ConnConfig.Password, r.secret = pw, pw
	}
	if r.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, r.unavailable("connect", err)
	}
	defer r.pool.Close()
	have, err := schemaVersion(ctx, r.pool)
	switch {
	case err != nil:
		return nil, r.unavailable("read the schema version", err)
	case have == 0:
		return nil, nil
	case have > SchemaVersion:
		return nil, &journal.UnavailableError{Path: r.shown, Reason: (&NewerSchemaError{have, SchemaVersion}).Error(), Fix: "verify with a walletgate at least as new as the database's schema"}
	}
	rows, err := r.pool.Query(ctx, `SELECT id, chain_id::text, address, genesis FROM walletgate_wallets ORDER BY chain_id, address, genesis`)
	if err != nil {
		return nil, r.unavailable("list the wallets", err)
	}
	type w struct {
		id      int64
		chainID string
		address string
		genesis string
	}
	var ws []w
	for rows.Next() {
		var x w
		if err := rows.Scan(&x.id, &x.chainID, &x.address, &x.genesis); err != nil {
			rows.Close()
			return nil, r.unavailable("list the wallets", err)
		}
		ws = append(ws, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, r.unavailable("list the wallets", err)
	}
	out := make([]WalletChain, 0, len(ws))
	for _, x := range ws {
		id, ok := new(big.Int).SetString(x.chainID, 10)
		if !ok || !id.IsUint64() || !common.IsHexAddress(x.address) || len(x.address) != 42 || (x.genesis != "" && (len(x.genesis) != 66 || !strings.HasPrefix(x.genesis, "0x"))) {
			out = append(out, WalletChain{Err: fmt.Errorf("wallet row %d is malformed (chain id %q, address %q, genesis %q)", x.id, x.chainID, x.address, x.genesis)})
			continue
		}
		wc := WalletChain{ChainID: id.Uint64(), Address: common.HexToAddress(x.address)}
		if x.genesis != "" {
			wc.Genesis = common.HexToHash(x.genesis)
		}
		one := &Recorder{pool: r.pool, shown: r.shown, secret: r.secret, wallet: x.id, first: firstPrev(wc.ChainID, wc.Address)}
		wc.Records, wc.Err = one.Verify(ctx)
		out = append(out, wc)
	}
	return out, nil
}
