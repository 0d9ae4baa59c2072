package pgstate

// The schema and its migrations. Rules: migrations are applied at Open, in
// one transaction under an advisory lock (two hosts starting at once apply
// each migration once); a database whose schema version is newer than this
// binary's is refused, never written; a migration, once released, is never
// edited — a change is a new one appended.

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema's versions, in order: migrations[i] takes the
// database to version i+1.
var migrations = []string{
	// 1: the wallets, their records and their checkpoints.
	`CREATE TABLE walletgate_wallets (
		id        bigserial PRIMARY KEY,
		chain_id  numeric(20) NOT NULL,
		address   text NOT NULL,
		last_seq  bigint NOT NULL DEFAULT 0,
		last_hash text NOT NULL,
		created   timestamptz NOT NULL DEFAULT now(),
		UNIQUE (chain_id, address)
	);
	CREATE TABLE walletgate_records (
		wallet  bigint NOT NULL REFERENCES walletgate_wallets (id),
		seq     bigint NOT NULL,
		time    timestamptz NOT NULL,
		pid     integer NOT NULL,
		session text NOT NULL,
		host    text NOT NULL,
		kind    text NOT NULL,
		data    text NOT NULL,
		prev    text NOT NULL,
		hash    text NOT NULL,
		PRIMARY KEY (wallet, seq)
	);
	CREATE TABLE walletgate_checkpoints (
		wallet bigint PRIMARY KEY REFERENCES walletgate_wallets (id),
		seq    bigint NOT NULL,
		hash   text NOT NULL,
		live   jsonb NOT NULL
	);`,
	// 2: a wallet's rows are per chain genesis too: the same chain id with
	// another genesis block is another chain, with a row of its own. Rows
	// from version 1 have genesis '' until the first host opens them, which
	// binds them to its chain's genesis.
	`ALTER TABLE walletgate_wallets ADD COLUMN genesis text NOT NULL DEFAULT '';
	ALTER TABLE walletgate_wallets DROP CONSTRAINT walletgate_wallets_chain_id_address_key;
	ALTER TABLE walletgate_wallets ADD CONSTRAINT walletgate_wallets_chain_genesis_address_key UNIQUE (chain_id, address, genesis);`,
	// 3: the caps in force for a wallet (caps.Canonical), written by the
	// first host that writes and compared by every later one: one set of
	// caps per shared wallet. '' until a host writes it.
	`ALTER TABLE walletgate_wallets ADD COLUMN caps text NOT NULL DEFAULT '';`,
}

// SchemaVersion is the schema version this binary writes.
var SchemaVersion = len(migrations)

// migrationLock is the advisory lock key that serialises migrations.
const migrationLock = 0x77676d31 // "wgm1"

// NewerSchemaError is a database whose schema is newer than this binary.
type NewerSchemaError struct{ Database, Binary int }

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("the database's walletgate schema is version %d, newer than this walletgate's %d", e.Database, e.Binary)
}

// migrate brings the schema to SchemaVersion.
func migrate(ctx context.Context, conn interface {
	Begin(context.Context) (pgx.Tx, error)
}) error {
	// Up to date: nothing to write (a read-only database still opens, and
	// only its writes are refused).
	if have, err := schemaVersion(ctx, conn); err != nil {
		return err
	} else if have > SchemaVersion {
		return &NewerSchemaError{Database: have, Binary: SchemaVersion}
	} else if have == SchemaVersion {
		return nil
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS walletgate_schema (
		version integer PRIMARY KEY,
		applied timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	var have int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM walletgate_schema`).Scan(&have); err != nil {
		return err
	}
	if have > SchemaVersion {
		return &NewerSchemaError{Database: have, Binary: SchemaVersion}
	}
	for v := have; v < SchemaVersion; v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return fmt.Errorf("schema migration %d: %w", v+1, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO walletgate_schema (version) VALUES ($1)`, v+1); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// schemaVersion reads the applied version without a lock (0: none).
func schemaVersion(ctx context.Context, conn interface {
	Begin(context.Context) (pgx.Tx, error)
}) (int, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('walletgate_schema') IS NOT NULL`).Scan(&exists); err != nil || !exists {
		return 0, err
	}
	var have int
	err = tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM walletgate_schema`).Scan(&have)
	return have, err
}
