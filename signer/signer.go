// Package signer holds walletgate's key sources behind one small interface; it is the only
// package that touches key material.
//
// Rules of this package:
//   - A private key lives only in an unexported field of an unexported type. That type
//     formats itself (fmt with any verb, encoding/json, slog) as its kind and public address only.
//   - No error ever contains key bytes, a password, or the contents of a secret file; errors
//     name the file and say what to do instead.
//   - A secret file is read only if it is a regular file that gives group and others no
//     access (see CheckPrivateFile), and only up to a fixed size.
//   - Signing needs an explicit, positive chain id; the public dev key signs only for the
//     embedded dev chain (DevChainID).
package signer

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// Signer is a source of signatures for one account. Implementations in this package are
// immutable and safe for concurrent use.
type Signer interface {
	// Address is the account whose key signs.
	Address() common.Address
	// Kind names the key source: KindKeystore, KindKeyFile or KindDev.
	Kind() string
	// SignTx signs tx for chainID with types.LatestSignerForChainID and returns the signed
	// copy. It refuses a nil, zero or negative chainID, and a typed transaction whose own
	// chain id differs from chainID.
	SignTx(tx *types.Transaction, chainID *big.Int) (*types.Transaction, error)
	// SignTypedData signs EIP-712 typed data whose domain's chain id is chainID
	// (see keySigner.SignTypedData).
	SignTypedData(td apitypes.TypedData, chainID *big.Int) (TypedSignature, error)
}

// Kinds of key source, as returned by Signer.Kind.
const (
	KindKeystore = "keystore" // go-ethereum v3 keystore file + password file (FromKeystore)
	KindKeyFile  = "key-file" // file holding a hex private key (FromKeyFile)
	KindDev      = "dev"      // the public dev chain key (Dev)
)

// keySigner is the one Signer implementation: a secp256k1 key of some kind. Its fields are
// set once at construction and never changed.
type keySigner struct {
	kind string
	addr common.Address
	key  *ecdsa.PrivateKey
	// onlyChainIDs, when non-nil, are the only chain ids this key may sign for.
	onlyChainIDs []*big.Int
}

// newKeySigner wraps key. Whatever the source, the public dev keys are locked to DevChainIDs,
// so loading one from a key file or keystore does not lift that restriction.
func newKeySigner(kind string, key *ecdsa.PrivateKey) *keySigner {
	s := &keySigner{kind: kind, addr: crypto.PubkeyToAddress(key.PublicKey), key: key}
	if h := s.addr.Hex(); h == devAddressHex || h == devFacilitatorAddressHex {
		for _, id := range DevChainIDs {
			s.onlyChainIDs = append(s.onlyChainIDs, new(big.Int).SetUint64(id))
		}
	}
	return s
}

func (s *keySigner) Address() common.Address { return s.addr }

func (s *keySigner) Kind() string { return s.kind }

func (s *keySigner) SignTx(tx *types.Transaction, chainID *big.Int) (*types.Transaction, error) {
	if tx == nil {
		return nil, errors.New("sign transaction: no transaction given")
	}
	if chainID == nil {
		return nil, errors.New("sign transaction: no chain id given; refusing to sign without replay protection")
	}
	if chainID.Sign() <= 0 {
		return nil, fmt.Errorf("sign transaction: chain id must be positive, got %s", chainID)
	}
	if !s.mayOnChain(chainID) {
		return nil, fmt.Errorf("sign transaction: %s holds a public dev key, which signs only for %s, not chain %s",
			s, devChainsText(), chainID)
	}
	// Typed transactions carry their own chain id; it must be the one asked for. (Legacy
	// transactions get the chain id from the signer through EIP-155.)
	if tx.Type() != types.LegacyTxType && tx.ChainId().Cmp(chainID) != 0 {
		return nil, fmt.Errorf("sign transaction: transaction is for chain %s, asked to sign for chain %s", tx.ChainId(), chainID)
	}
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(chainID), s.key)
	if err != nil {
		return nil, fmt.Errorf("sign transaction: %w", err)
	}
	return signed, nil
}

// String returns the kind and checksummed address, e.g.
// "signer.dev(0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c)". It never includes key material.
func (s *keySigner) String() string {
	if s == nil {
		return "signer.<nil>"
	}
	return "signer." + s.kind + "(" + s.addr.Hex() + ")"
}

// GoString is String, so %#v does not dump the fields.
func (s *keySigner) GoString() string { return s.String() }

// Format prints String for every verb (%v, %+v, %#v, %s, %x, %d, …), so no verb reaches the
// private key through fmt's reflection.
func (s *keySigner) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// MarshalText keeps encoding/json, slog's text and JSON handlers and other text encoders to
// the same safe text.
func (s *keySigner) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// mayOnChain reports whether the key may sign for chainID.
func (s *keySigner) mayOnChain(chainID *big.Int) bool {
	if s.onlyChainIDs == nil {
		return true
	}
	for _, id := range s.onlyChainIDs {
		if chainID.Cmp(id) == 0 {
			return true
		}
	}
	return false
}

func devChainsText() string {
	parts := make([]string, len(DevChainIDs))
	for i, id := range DevChainIDs {
		parts[i] = fmt.Sprint(id)
	}
	return "chain " + strings.Join(parts, " or ") + " (the local dev chains)"
}
