package signer

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// TypedSignature is an EIP-712 signature: the 65-byte r‖s‖v (v 27 or 28, as
// ecrecover and every permit contract expect) over Digest.
type TypedSignature struct {
	Digest common.Hash
	Sig    []byte
}

// SignTypedData signs typed data under EIP-712 v4. The digest is go-ethereum's
// apitypes.TypedDataAndHash (never a hand-rolled encoding), so what is signed
// is exactly what a verifying contract computes from the same object. It
// refuses typed data whose domain has no chain id or one other than chainID:
// a signature without a chain in its domain could be replayed on every chain.
// The public dev key signs only for DevChainID.
func (s *keySigner) SignTypedData(td apitypes.TypedData, chainID *big.Int) (TypedSignature, error) {
	if chainID == nil || chainID.Sign() <= 0 {
		return TypedSignature{}, errors.New("sign typed data: a positive chain id is required")
	}
	if td.Domain.ChainId == nil {
		return TypedSignature{}, errors.New("sign typed data: the domain has no chainId; refusing a signature valid on every chain")
	}
	if got := (*big.Int)(td.Domain.ChainId); got.Cmp(chainID) != 0 {
		return TypedSignature{}, fmt.Errorf("sign typed data: the domain is for chain %s, asked to sign for chain %s", got, chainID)
	}
	if !s.mayOnChain(chainID) {
		return TypedSignature{}, fmt.Errorf("sign typed data: %s holds a public dev key, which signs only for %s, not chain %s",
			s, devChainsText(), chainID)
	}
	digest, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return TypedSignature{}, fmt.Errorf("sign typed data: %w", err)
	}
	sig, err := crypto.Sign(digest, s.key)
	if err != nil {
		return TypedSignature{}, fmt.Errorf("sign typed data: %w", err)
	}
	sig[crypto.RecoveryIDOffset] += 27
	return TypedSignature{Digest: common.BytesToHash(digest), Sig: sig}, nil
}
