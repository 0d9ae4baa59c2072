package signer

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// The dev key is PUBLIC: its private key is keccak256("walletgate dev account") and is
// written in this file's tests and in the docs. It funds the embedded dev chain and must
// never hold or sign anything on a real chain, so every signer holding it (from Dev, a key
// file or a keystore: see newKeySigner) fails closed on every chain id but DevChainID.
const (
	devKeySeed    = "walletgate dev account"
	devAddressHex = "0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c"
)

// The dev facilitator key is PUBLIC too: keccak256("walletgate dev facilitator"). It is a
// second funded account of the dev chain, another party than the wallet: it deploys the dev
// chain's USD Coin look-alike (at its nonce 0, so that token's address depends on nothing the
// dev account does) and, in `walletgate demo`, settles x402 payments as a facilitator does.
// Like the dev key, it signs for DevChainID only.
const (
	devFacilitatorSeed       = "walletgate dev facilitator"
	devFacilitatorAddressHex = "0x055696E7e2c364D6d9bDc69135cD742430f26Dd2"
)

// DevChainID is the chain id of walletgate's embedded dev chain.
const DevChainID = 1337

// DevChainIDs are the chains the public dev keys sign for: the local dev chain ids of
// policy's network table (walletgate's own, and Hardhat/Anvil's 31337, which
// walletgate-devnet --chain-id runs beside it). A signature on them moves nothing of
// value; on every other chain the public keys refuse.
var DevChainIDs = []uint64{DevChainID, 31337}

// DevAddress is the address of the public dev key (see Dev).
var DevAddress = common.HexToAddress(devAddressHex)

var devSigner = sync.OnceValue(func() *keySigner {
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte(devKeySeed)))
	if err != nil {
		panic("signer: dev key: " + err.Error())
	}
	s := newKeySigner(KindDev, key)
	if s.onlyChainIDs == nil { // newKeySigner did not recognise it as the dev key
		panic("signer: dev key derives " + s.addr.Hex() + ", want " + devAddressHex)
	}
	return s
})

// DevFacilitatorAddress is the address of the public dev facilitator key (see DevFacilitator).
var DevFacilitatorAddress = common.HexToAddress(devFacilitatorAddressHex)

var devFacilitatorSigner = sync.OnceValue(func() *keySigner {
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte(devFacilitatorSeed)))
	if err != nil {
		panic("signer: dev facilitator key: " + err.Error())
	}
	s := newKeySigner(KindDev, key)
	if s.onlyChainIDs == nil {
		panic("signer: dev facilitator key derives " + s.addr.Hex() + ", want " + devFacilitatorAddressHex)
	}
	return s
})

// DevFacilitator returns the Signer of the public dev facilitator key: Kind KindDev, Address
// DevFacilitatorAddress, signing for DevChainID only.
func DevFacilitator() Signer { return devFacilitatorSigner() }

// Dev returns the Signer of the public dev key, whose Kind is KindDev and Address DevAddress.
// Its SignTx refuses every chain id but DevChainID.
func Dev() Signer { return devSigner() }

// WriteDevKeyFile writes the public dev key, as a key file FromKeyFile reads, to a new file
// at path with mode 0600, so that `walletgate devnet` can hand it to a second process. It
// refuses to overwrite or follow anything already at path. FromKeyFile returns that key as a
// KindKeyFile signer that, like Dev, signs only for DevChainID.
func WriteDevKeyFile(path string) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("dev key file %s already exists; refusing to overwrite it (remove it or choose another path)", path)
	}
	if err != nil {
		return fmt.Errorf("dev key file: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("dev key file: %w", cerr)
		}
		if err != nil {
			_ = os.Remove(path) // we created it; leave no half-written key file behind
		}
	}()
	// The umask can only clear bits; make the mode exactly 0600 anyway.
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("dev key file: %w", err)
	}
	content := hex.EncodeToString(crypto.FromECDSA(devSigner().key)) + "\n"
	if _, err := f.WriteString(content); err != nil {
		return fmt.Errorf("dev key file: %w", err)
	}
	return nil
}
