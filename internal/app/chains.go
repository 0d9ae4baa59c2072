package app

import (
	"context"
	"fmt"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

// openedKey is the wallet opened once for every chain: a keystore is
// decrypted once, not once per chain.
type openedKey struct {
	s    signer.Signer
	addr common.Address
	err  error
}

// open is the opened wallet, or, without one (a single chain), wallet(cfg).
func (k *openedKey) open(cfg policy.Config) (signer.Signer, common.Address, error) {
	if k == nil {
		return wallet(cfg)
	}
	return k.s, k.addr, k.err
}

// newChains is New with several chains: one App per chain, built as a
// single chain's is (its node's id checked, its journal namespace, its caps
// from the items that name it), sharing the key, the session and the
// approval page. The nodes are all opened first, so that their chain-id
// checks run at once: a second chain adds no round trip in sequence.
func newChains(ctx context.Context, o Options) (*App, error) {
	o.Early = false // each chain's check is waited for (newChain)
	cfg := o.Config
	if o.Dev {
		return nil, usagef("--dev runs one chain, but WALLETGATE_CHAIN_ID lists %d: unset it, or drop --dev and give each chain's node in WALLETGATE_RPC", len(cfg.ChainIDs()))
	}
	ids := cfg.ChainIDs()
	// all closes, after every chain's part, the nodes it opened (the
	// default chain's, when the caller opened it, is the caller's) and the
	// approval page the chains share.
	var opened []*Node
	all := &App{cleanup: func() {
		for _, n := range opened {
			n.Close()
		}
	}}
	nodes := make([]*Node, len(ids))
	for i, id := range ids {
		if nodes[i] = o.Node; i > 0 || o.Node == nil {
			nodes[i] = OpenNode(ctx, cfg.ForChain(id))
			opened = append(opened, nodes[i])
		}
	}
	key := &openedKey{}
	key.s, key.addr, key.err = wallet(cfg)
	var once sync.Once
	var sharedErr error
	session := NewSession()
	for i, id := range ids {
		oi := o
		oi.Config, oi.Node, oi.key, oi.session = cfg.ForChain(id), nodes[i], key, session
		if o.Approvals != nil {
			// One page and one terminal for every chain: the first chain
			// starts them, the rest join them.
			oi.Approvals = func(root string, deps tools.Deps) (*Approvals, error) {
				once.Do(func() { all.approvals, sharedErr = o.Approvals(root, deps) })
				if sharedErr != nil || all.approvals == nil {
					return nil, sharedErr
				}
				joined := *all.approvals
				joined.Close = nil // closed once, by all
				return &joined, nil
			}
		}
		part, err := newChain(ctx, oi)
		if err != nil {
			all.Close()
			return nil, fmt.Errorf("chain %s (%d): %w", policy.NetworkSlug(id), id, err)
		}
		all.parts = append(all.parts, part)
	}
	all.deps = all.parts[0].deps
	servers := make([]*tools.Server, len(all.parts))
	for i, p := range all.parts {
		servers[i] = p.server
	}
	all.server, all.chains = servers[0], tools.ChainsOf(servers...)
	return all, nil
}
