//go:build shared

package main

// The PostgreSQL backend of the shared state, linked into walletgate-shared
// only (see shared.go).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/internal/app"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/pgstate"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
)

func init() { sharedState = pgBackend{} }

// pgBackend is sharedBackend on pgstate.
type pgBackend struct{}

func (pgBackend) Open(ctx context.Context, cfg policy.Config, chainID uint64, genesis common.Hash, wallet common.Address, session, signerKind, capsInForce string, logger *slog.Logger) (app.SharedRecorder, error) {
	r, err := openShared(ctx, cfg, chainID, genesis, wallet, session, signerKind, capsInForce, logger)
	if err != nil {
		return nil, err // never a typed nil in the interface
	}
	return r, nil
}

func (pgBackend) verify(cfg policy.Config, stdout io.Writer) error {
	return auditVerifyShared(cfg, stdout)
}

func (pgBackend) View(ctx context.Context, cfg policy.Config, chainID uint64, genesis common.Hash, wallet common.Address) (app.SharedRecorder, error) {
	r, err := pgstate.Open(ctx, pgstate.Options{URL: cfg.StateURL, PasswordFile: cfg.StatePasswordFile, ChainID: chainID, Genesis: genesis, Address: wallet, ReadOnly: true})
	if err != nil {
		return nil, err // never a typed nil in the interface
	}
	return r, nil
}

// phantomAge is how old another host's reservation with nothing signed
// must be before a start releases it: the engine signs nothing past its
// confirm bound, and the margin covers hosts' clocks differing.
const phantomAge = 5 * time.Minute

// openShared opens the shared state in PostgreSQL (WALLETGATE_STATE_URL) for
// the wallet and chain (its id and genesis: another genesis with the same id
// has rows of its own), records this session, and releases the reservations
// a host that died before signing left open. Its error (a URL that cannot
// be read, a schema newer than this binary) refuses every write; a database
// that does not answer yet refuses each write until it does. Reads keep
// working. A host whose caps differ from the caps in force for the wallet
// (the first host's, kept in the database) writes nothing: one set of caps
// per shared wallet.
func openShared(ctx context.Context, cfg policy.Config, chainID uint64, genesis common.Hash, wallet common.Address, session, signerKind, capsInForce string, logger *slog.Logger) (*pgstate.Recorder, error) {
	shown := pgstate.Shown(cfg.StateURL)
	r, err := pgstate.Open(ctx, pgstate.Options{URL: cfg.StateURL, PasswordFile: cfg.StatePasswordFile, ChainID: chainID, Genesis: genesis, Address: wallet, Session: session, Caps: capsInForce, Retry: true})
	var me *caps.MismatchError
	if errors.As(err, &me) {
		logger.Error("this host's caps differ from the caps in force for the wallet in the shared state: writes are refused (CAPS_DIFFER) until they match; reads keep working. Give every host on this wallet the same WALLETGATE_CAP_PER_* and WALLETGATE_ALLOW_UNCAPPED_TOKENS (README: Shared state in PostgreSQL)",
			"state", shown, "difference", err.Error())
		return nil, err
	}
	if err != nil {
		logger.Error("the shared state database cannot be used: writes are refused until this is fixed; reads keep working", "state", shown, "err", err)
		return nil, err
	}
	if !r.Connected() {
		logger.Error("the shared state database does not answer: writes are refused until it does (each write tries again); reads keep working", "state", shown)
		return r, nil
	}
	logger.Info("caps, nonces and open transactions are shared through PostgreSQL", "state", shown, "schema", pgstate.SchemaVersion)
	_, _ = r.Append(tools.KindSessionStart, records.SessionStart{V: records.Version, Version: versionString(), PID: os.Getpid(),
		ChainID: chainID, Genesis: genesis.Hex(), Wallet: wallet.Hex(), Signer: signerKind})
	released, err := r.ReleasePhantoms(tools.ConfirmBound() + phantomAge)
	for _, o := range released {
		logger.Warn("released a phantom cap reservation: its host reserved and signed nothing in time, so nothing was sent", "reservation", o.ID, "session", o.Session, "change", o.Change)
	}
	if err != nil {
		logger.Error("releasing phantom cap reservations failed; they stay counted", "err", err)
	}
	return r, nil
}

// auditVerifyShared verifies every wallet's chain in the shared state
// database, then the local journals, if any: each host still keeps its own
// calls there.
func auditVerifyShared(cfg policy.Config, stdout io.Writer) error {
	shown := pgstate.Shown(cfg.StateURL)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	chains, err := pgstate.VerifyDatabase(ctx, pgstate.Options{URL: cfg.StateURL, PasswordFile: cfg.StatePasswordFile})
	if err != nil {
		fmt.Fprintf(stdout, "BROKEN %s: %v\n", shown, err)
		return fmt.Errorf("the shared state database %s cannot be verified", shown)
	}
	broken := 0
	for _, c := range chains {
		name := fmt.Sprintf("%s chain %d wallet %s", shown, c.ChainID, c.Address.Hex())
		if c.Err != nil {
			broken++
			fmt.Fprintf(stdout, "BROKEN %s: %v\n", name, c.Err)
			fmt.Fprintf(stdout, "       walletgate refuses writes once it reads that record. Restore the walletgate_records table from a backup.\n")
			continue
		}
		bound := "not yet bound to a genesis: the next host to open it binds it"
		if c.Genesis != (common.Hash{}) {
			bound = "genesis " + c.Genesis.Hex()
		}
		fmt.Fprintf(stdout, "ok     %s: %d records, hash chain intact (%s)\n", name, c.Records, bound)
	}
	if len(chains) == 0 {
		fmt.Fprintf(stdout, "ok     %s: no wallet recorded yet\n", shown)
	}
	if files, err := journalFiles(nil); err == nil {
		if err := auditVerify(files, stdout); err != nil {
			return err
		}
	}
	if broken > 0 {
		return fmt.Errorf("%d of %d wallet chains in %s are broken", broken, len(chains), shown)
	}
	return nil
}
