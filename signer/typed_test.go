package signer_test

import (
	"encoding/hex"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
)

// mailTypedData is the example of EIP-712 itself, with its published digest
// and its signature by keccak256("cow").
const mailTypedData = `{
 "types": {
  "EIP712Domain": [{"name":"name","type":"string"},{"name":"version","type":"string"},{"name":"chainId","type":"uint256"},{"name":"verifyingContract","type":"address"}],
  "Person": [{"name":"name","type":"string"},{"name":"wallet","type":"address"}],
  "Mail": [{"name":"from","type":"Person"},{"name":"to","type":"Person"},{"name":"contents","type":"string"}]
 },
 "primaryType": "Mail",
 "domain": {"name":"Ether Mail","version":"1","chainId":1,"verifyingContract":"0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},
 "message": {"from":{"name":"Cow","wallet":"0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},"to":{"name":"Bob","wallet":"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},"contents":"Hello, Bob!"}
}`

func TestSignTypedDataEIP712Vector(t *testing.T) {
	cow := hex.EncodeToString(crypto.Keccak256([]byte("cow")))
	s, err := signer.FromKeyFile(writeFile(t, t.TempDir(), "key", cow, 0o600))
	require.NoError(t, err)
	var td apitypes.TypedData
	require.NoError(t, json.Unmarshal([]byte(mailTypedData), &td))

	sig, err := s.SignTypedData(td, big.NewInt(1))
	require.NoError(t, err)
	require.Equal(t, "0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2", sig.Digest.Hex(), "the digest EIP-712 publishes")
	require.Equal(t, "4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d"+
		"07299936d304c153f6443dfa05f40ff007d72911b6f72307f996231605b91562"+"1c", hex.EncodeToString(sig.Sig), "r‖s‖v as EIP-712 publishes (v 28)")

	// ecrecover of the signature is the signer.
	raw := append([]byte{}, sig.Sig...)
	raw[64] -= 27
	pub, err := crypto.SigToPub(sig.Digest.Bytes(), raw)
	require.NoError(t, err)
	require.Equal(t, s.Address(), crypto.PubkeyToAddress(*pub))
}

func TestSignTypedDataRefusesOtherChains(t *testing.T) {
	cow := hex.EncodeToString(crypto.Keccak256([]byte("cow")))
	s, err := signer.FromKeyFile(writeFile(t, t.TempDir(), "key", cow, 0o600))
	require.NoError(t, err)
	var td apitypes.TypedData
	require.NoError(t, json.Unmarshal([]byte(mailTypedData), &td))

	_, err = s.SignTypedData(td, big.NewInt(1337))
	require.ErrorContains(t, err, "the domain is for chain 1, asked to sign for chain 1337")
	_, err = s.SignTypedData(td, nil)
	require.ErrorContains(t, err, "positive chain id")
	noChain := td
	noChain.Domain.ChainId = nil
	_, err = s.SignTypedData(noChain, big.NewInt(1))
	require.ErrorContains(t, err, "no chainId")

	// The public dev key signs typed data only for the dev chain.
	_, err = signer.Dev().SignTypedData(td, big.NewInt(1))
	require.ErrorContains(t, err, "public dev key")
	td.Domain.VerifyingContract = common.Address{1}.Hex()
	dev := td
	dev.Domain.ChainId = nil
	require.NoError(t, json.Unmarshal([]byte(`1337`), &dev.Domain.ChainId))
	_, err = signer.Dev().SignTypedData(dev, big.NewInt(signer.DevChainID))
	require.NoError(t, err)
}
