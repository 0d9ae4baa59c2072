// Package pgstate keeps a wallet's records and live state in PostgreSQL, so
// that walletgates on several hosts share one wallet's caps, nonces and
// audit chain.
//
// Rules of this package:
//
//   - A Recorder is the engine's Recorder (engine.Recorder) for one wallet
//     and chain: a row in walletgate_wallets, an append-only, SHA-256
//     hash-chained table of its records, and a checkpoint of the records.Live
//     folded from them.
//   - Every Update is one database transaction that first locks the
//     wallet's row (SELECT … FOR UPDATE), folds what other hosts appended
//     since this one last looked, runs fn (its appends are rows inserted in
//     the same transaction), stores the checkpoint and commits. So the
//     day-cap check, the reservation and its nonce are serialised across
//     every host, and a reservation is committed before Update returns —
//     before anything is signed with it.
//   - It fails closed: an unreachable, read-only or broken database is an
//     *journal.UnavailableError that names the database (host only, never a
//     password) and what to do; the engine refuses writes with
//     LEDGER_UNAVAILABLE and reads keep working. The next call tries again.
//   - Records are folded into the live state with PID 0: a process id of
//     another host says nothing here, so whether a signing process may still
//     be at work is decided by the engine's time bound alone.
package pgstate
