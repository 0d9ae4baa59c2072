package app

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// SharedOpener opens the shared state in PostgreSQL (WALLETGATE_STATE_URL):
// walletgate-shared, the command built with the tag "shared", has one;
// walletgate, which links no PostgreSQL client, has none.
type SharedOpener interface {
	// Open opens the wallet's shared state on the chain (its id and
	// genesis hash) for this session, records its start and releases the
	// reservations of hosts that died before signing; an error refuses
	// every write. capsInForce is this host's caps (caps.Canonical): the
	// wallet's first host's are the wallet's, and a host whose caps differ
	// writes nothing.
	Open(ctx context.Context, cfg policy.Config, chainID uint64, genesis common.Hash, wallet common.Address, session, signerKind, capsInForce string, logger *slog.Logger) (SharedRecorder, error)
	// View opens the wallet's shared state on the chain for reading only
	// (`walletgate policy`): nothing is written to the database.
	View(ctx context.Context, cfg policy.Config, chainID uint64, genesis common.Hash, wallet common.Address) (SharedRecorder, error)
}

// SharedRecorder is the engine's recorder on the shared state.
type SharedRecorder interface {
	engine.Recorder
	Connected() bool // whether the database has answered
	Close()
}

// SharedBinary is walletgate-shared's executable name on this platform.
func SharedBinary() string {
	if runtime.GOOS == "windows" {
		return "walletgate-shared.exe"
	}
	return "walletgate-shared"
}

// BuildSharedHint is the exact command that builds walletgate-shared in dir.
func BuildSharedHint(dir string) string {
	return fmt.Sprintf("build it beside walletgate with 'go build -tags shared -o %s ./cmd/walletgate' in the walletgate source tree",
		filepath.Join(dir, SharedBinary()))
}

// errNoSharedState is why a walletgate without the backend refuses writes
// when WALLETGATE_STATE_URL is set.
var errNoSharedState = usagef("WALLETGATE_STATE_URL is set, but this binary has no PostgreSQL client (it is walletgate, not walletgate-shared): %s, and start that, or walletgate beside it",
	BuildSharedHint("."))
