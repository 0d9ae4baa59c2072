package engine

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/policy"
)

// Asset is a resolved asset: ETH, or an ERC-20 token by address. Symbols are
// display only; the address is the identity.
type Asset struct {
	Native   bool
	Address  common.Address // zero for ETH
	Symbol   string         // the table's symbol when Known, else the contract's, inert
	Decimals uint8
	Known    bool // ETH, or in the known-token table of this chain
}

// ETH is the chain's native asset.
var ETH = Asset{Native: true, Symbol: policy.NativeSymbol, Decimals: 18, Known: true}

// KnownAsset is the asset of a known-token table entry.
func KnownAsset(t policy.Token) Asset {
	return Asset{Address: t.Address, Symbol: t.Symbol, Decimals: t.Decimals, Known: true}
}

// ID is "ETH" or the token address: how results name an asset.
func (a Asset) ID() string {
	if a.Native {
		return policy.NativeSymbol
	}
	if a.Address == policy.USDAsset {
		return policy.USDSymbol
	}
	return a.Address.Hex()
}

// Marked is the symbol as every line that names the asset shows it: an
// asset outside the known-token table is marked UNVERIFIED.
func (a Asset) Marked() string {
	if a.Native || a.Known {
		return a.Symbol
	}
	return a.Symbol + " (UNVERIFIED)"
}

// Format renders an amount of a in its units.
func (a Asset) Format(v *big.Int) string { return policy.FormatAmount(v, a.Decimals) }
