package app

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// dialTimeout bounds the start-up chain id check.
const dialTimeout = 15 * time.Second

// startDev starts the dev chain (walletgate-devnet, as a child process) and
// connects to it over loopback JSON-RPC like to any node.
func startDev(ctx context.Context, cfg policy.Config) (*devChild, *chain.Client, error) {
	if len(cfg.RPC) > 0 {
		return nil, nil, usagef("--dev runs its own chain: unset WALLETGATE_RPC, or drop --dev to use that node")
	}
	if cfg.ChainID != 0 && cfg.ChainID != DevChainID {
		return nil, nil, usagef("--dev runs chain id %d but WALLETGATE_CHAIN_ID is %d: unset it or set it to %d", DevChainID, cfg.ChainID, DevChainID)
	}
	if cfg.Keystore != "" || cfg.KeyFile != "" || cfg.Address != nil {
		return nil, nil, usagef("--dev signs with the public dev key: unset WALLETGATE_KEYSTORE, WALLETGATE_KEY_FILE and WALLETGATE_ADDRESS, or drop --dev")
	}
	d, err := startDevChild(ctx, cfg.DevArtifacts, os.Stderr)
	if err != nil {
		return nil, nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := chain.Dial(dctx, []string{d.Info.RPC})
	if err != nil {
		d.Close()
		return nil, nil, fmt.Errorf("dev chain: %w", err)
	}
	if got := c.ChainID(); !got.IsUint64() || got.Uint64() != DevChainID {
		c.Close()
		d.Close()
		return nil, nil, fmt.Errorf("dev chain: the node at %s reports chain id %s, not %d", c.Host(), got, DevChainID)
	}
	return d, c, nil
}

// Node is the configured node, its chain-id check under way. OpenNode
// opens it; Close closes it.
type Node struct {
	c     *chain.Client // nil when err is set
	ready func() error  // the check's outcome, waited for once
	err   error         // not opened: no RPC configured, or it cannot be dialled
}

// OpenNode opens the configured node and starts the chain-id check, which
// New waits for (or for ctx to end). A start opens it first of all, so that
// the round trip overlaps the rest of the start.
func OpenNode(ctx context.Context, cfg policy.Config) *Node {
	if len(cfg.RPC) == 0 {
		return &Node{err: usagef("%s", noNodeHint())}
	}
	c, err := chain.Open(ctx, cfg.RPC, new(big.Int).SetUint64(cfg.ChainID))
	if err != nil {
		return &Node{err: fmt.Errorf("cannot reach the node: %w", err)}
	}
	c.SetCallTimeout(cfg.RPCTimeout)
	c.SetBatchLimit(cfg.RPCBatchLimit)
	checked := make(chan error, 1)
	go func() { checked <- checkChain(ctx, c, cfg) }()
	return &Node{c: c, ready: sync.OnceValue(func() error { return <-checked })}
}

// noNodeHint says what to do when no node is configured. --dev is
// suggested only where it can run: with walletgate-devnet beside walletgate
// or on PATH (a bundle holds walletgate alone, and its form has the node's
// field).
func noNodeHint() string {
	if _, err := FindDevnet(); err == nil {
		return "WALLETGATE_RPC is not set: set it to your node's URL (and WALLETGATE_CHAIN_ID to its chain id), or run walletgate --dev for the embedded dev chain"
	}
	return "WALLETGATE_RPC is not set: set it to your node's URL, and WALLETGATE_CHAIN_ID to its chain id (in Claude Desktop's extension settings: Node URL and Chain id)"
}

// Close closes the node's client, if it was opened.
func (n *Node) Close() {
	if n.c != nil {
		n.c.Close()
	}
}

// checkChain asks the node behind c (opened with the configured chain id)
// for its chain id and refuses one other than the configured, or, with no
// WALLETGATE_CHAIN_ID, names the node's in the refusal.
func checkChain(ctx context.Context, c *chain.Client, cfg policy.Config) error {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	got, err := c.CheckChainID(dctx)
	if err != nil {
		return fmt.Errorf("cannot reach the node: %w", err)
	}
	switch {
	case cfg.ChainID == 0:
		return usagef("WALLETGATE_CHAIN_ID is not set: the node at %s reports chain id %s (%s); set WALLETGATE_CHAIN_ID=%s if that is the chain you mean",
			c.Host(), got, policy.LookupNetwork(got.Uint64()).Name, got)
	case !got.IsUint64() || got.Uint64() != cfg.ChainID:
		return usagef("chain id mismatch: WALLETGATE_CHAIN_ID is %d (%s) but the node at %s reports %s (%s); refusing to start. Point WALLETGATE_RPC at the right node or correct WALLETGATE_CHAIN_ID",
			cfg.ChainID, policy.LookupNetwork(cfg.ChainID).Name, c.Host(), got, policy.LookupNetwork(got.Uint64()).Name)
	}
	return nil
}

// wallet opens the configured key source, or the watch-only address.
func wallet(cfg policy.Config) (signer.Signer, common.Address, error) {
	switch {
	case cfg.Keystore != "":
		s, err := signer.FromKeystore(cfg.Keystore, cfg.PasswordFile)
		if err != nil {
			return nil, common.Address{}, err
		}
		return s, s.Address(), nil
	case cfg.KeyFile != "":
		s, err := signer.FromKeyFile(cfg.KeyFile)
		if err != nil {
			return nil, common.Address{}, err
		}
		return s, s.Address(), nil
	case cfg.Address != nil:
		return nil, *cfg.Address, nil
	}
	return nil, common.Address{}, usagef("no wallet configured: set WALLETGATE_KEYSTORE and WALLETGATE_PASSWORD_FILE, or WALLETGATE_KEY_FILE, or WALLETGATE_ADDRESS for a watch-only wallet (read tools only)")
}
