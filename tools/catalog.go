package tools

import (
	"context"
	"math/big"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// CatalogChainID is the chain the catalogue describes a server on: a
// testnet with a Uniswap deployment walletgate knows, so that every tool
// is offered.
const CatalogChainID = 11155111

// Catalog is the tool list of a server with a key and every opt-in
// (wallet_call included) on a testnet walletgate knows, built without a
// node: what a bundle's manifest lists. Descriptions that depend on the
// caps are those of the default caps.
func Catalog() ([]mcp.Tool, error) {
	cfg, err := policy.Load([]string{policy.EnvAllowCalls + "=any", policy.EnvChainID + "=11155111"})
	if err != nil {
		return nil, err
	}
	c := chain.Offline(big.NewInt(CatalogChainID))
	defer c.Close()
	caps, err := ResolveCaps(context.Background(), c, cfg, DefaultCaps)
	if err != nil {
		return nil, err
	}
	// The dev key stands in for a key: it signs for chain 1337 only, and
	// nothing is signed here.
	s := New(Deps{Chain: c, Signer: signer.Dev(), Address: signer.DevAddress, Config: cfg, Caps: caps})
	var out []mcp.Tool
	for _, t := range s.Tools() {
		out = append(out, t.Tool)
	}
	return out, nil
}
