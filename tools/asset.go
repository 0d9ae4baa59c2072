package tools

import (
	"context"
	"strings"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// asset is a resolved asset: ETH, or an ERC-20 token by address (the
// engine's Asset).
type asset = engine.Asset

var ethAsset = engine.ETH

func knownAsset(t policy.Token) asset { return engine.KnownAsset(t) }

// resolveAsset resolves "ETH", a known symbol or a token address.
func (s *Server) resolveAsset(ctx context.Context, in string) (asset, *Refusal) {
	if strings.EqualFold(in, policy.NativeSymbol) {
		return ethAsset, nil
	}
	as, ref := s.resolveToken(in)
	if ref != nil {
		return asset{}, ref
	}
	if as.Known {
		return as, nil
	}
	meta, err := s.chain.TokenMeta(ctx, as.Address)
	if err != nil {
		return asset{}, refuse(CodeBadToken, "%s does not answer as an ERC-20 token (%s). Give ETH, a known symbol (%s) or the address of an ERC-20 contract on this network.",
			as.Address.Hex(), err, s.knownSymbols())
	}
	as.Decimals = meta.Decimals
	as.Symbol = inert(meta.Symbol, maxSymbolDisplay)
	return as, nil
}

// resolveToken resolves a known symbol or a token address without reading the
// chain: an unknown address comes back with Known false and no decimals.
func (s *Server) resolveToken(in string) (asset, *Refusal) {
	if strings.HasPrefix(in, "0x") || strings.HasPrefix(in, "0X") {
		addr, err := policy.ParseAddress(in)
		if err != nil {
			return asset{}, refuse(CodeBadAddress, "token %s: %s. Give 0x followed by 40 hex digits (all lower case, or with a correct EIP-55 checksum).", displayInput(in), reason(err))
		}
		if t, ok := policy.TokenByAddress(s.chainID, addr); ok {
			return knownAsset(t), nil
		}
		return asset{Address: addr}, nil
	}
	if isASCIIPrintable(in) {
		if t, ok := policy.TokenBySymbol(s.chainID, in); ok {
			return knownAsset(t), nil
		}
	}
	return asset{}, refuse(CodeBadToken, "token %s is not a known symbol on %s; known: %s. For another token give its contract address (0x…).",
		displayInput(in), s.network.Name, s.knownSymbols())
}

func (s *Server) knownSymbols() string {
	var syms []string
	for _, t := range policy.KnownTokens(s.chainID) {
		syms = append(syms, t.Symbol)
	}
	if len(syms) == 0 {
		return "none on this network"
	}
	return strings.Join(syms, ", ")
}
