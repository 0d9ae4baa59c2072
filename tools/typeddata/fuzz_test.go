package typeddata

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// FuzzTypedData feeds arbitrary JSON objects, decoded as walletgate's tools
// decode an object argument (numbers kept exact), through Read: it may not
// panic; a refusal carries one of this package's codes; whatever it accepts
// hashes under apitypes to its Digest, names this chain, has a message with
// exactly its type's keys, and a known kind's decoded grant is the message's.
func FuzzTypedData(f *testing.F) {
	for _, seed := range []string{
		`{"types":{"EIP712Domain":[{"name":"chainId","type":"uint256"}],"Mail":[{"name":"contents","type":"string"}]},"primaryType":"Mail","domain":{"chainId":1337},"message":{"contents":"hi"}}`,
		`{"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"chainId","type":"uint256"},{"name":"verifyingContract","type":"address"}],"Permit":[{"name":"owner","type":"address"},{"name":"spender","type":"address"},{"name":"value","type":"uint256"},{"name":"nonce","type":"uint256"},{"name":"deadline","type":"uint256"}]},"primaryType":"Permit","domain":{"name":"T","chainId":"0x539","verifyingContract":"0x00000000000000000000000000000000000000f1"},"message":{"owner":"0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c","spender":"0x00000000000000000000000000000000000000f1","value":"1","nonce":0,"deadline":1}}`,
		`{"types":{"EIP712Domain":[],"A":[{"name":"b","type":"B[]"}],"B":[{"name":"c","type":"uint8"}]},"primaryType":"A","domain":{"chainId":1337,"chainID":1},"message":{"b":[{"c":1}]}}`,
		`{"types":{"EIP712Domain":[{"name":"chainId","type":"uint256"}],"A":[{"name":"b","type":"uint256[]"}]},"primaryType":"A","domain":{"chainId":1337},"message":{"b":[null]}}`,
		`{"types":{"EIP712Domain":[{"name":"chainId","type":"uint256"}],"A":[{"name":"b","type":"string"}]},"primaryType":"A","domain":{"chainId":1337},"message":{"b":5}}`,
		`{"types":{},"primaryType":"","domain":{},"message":{"a":1e3}}`,
	} {
		f.Add(seed)
	}
	chain := Chain{ID: 1337, Name: "dev"}
	f.Fuzz(func(t *testing.T, raw string) {
		var tree map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
		dec.UseNumber()
		if dec.Decode(&tree) != nil || tree == nil {
			return
		}
		doc, ref := Read(tree, chain)
		if ref != nil {
			if !strings.HasPrefix(ref.Code, "TYPED_DATA_") || ref.Message == "" {
				t.Fatalf("refusal %q for %q", ref, raw)
			}
			return
		}
		digest, _, err := apitypes.TypedDataAndHash(doc.Data)
		if err != nil || !bytes.Equal(digest, doc.Digest[:]) {
			t.Fatalf("accepted typed data does not hash to its digest: %v", err)
		}
		if id := (*big.Int)(doc.Data.Domain.ChainId); id == nil || !id.IsUint64() || id.Uint64() != chain.ID {
			t.Fatalf("accepted a domain for chain %v", id)
		}
		fields := doc.Data.Types[doc.Data.PrimaryType]
		if len(doc.Data.Message) != len(fields) {
			t.Fatalf("message keys %v do not match type %v", doc.Data.Message, fields)
		}
		for _, fl := range fields {
			if _, ok := doc.Data.Message[fl.Name]; !ok {
				t.Fatalf("message has no %s", fl.Name)
			}
		}
		if (doc.Kind == Unknown) != (doc.Grant == nil) {
			t.Fatalf("kind %s with grant %v", doc.Kind, doc.Grant)
		}
		if g := doc.Grant; g != nil {
			if v, _ := uintOf(doc.Data.Message["value"]); v == nil || v.Cmp(g.Value) != 0 {
				t.Fatalf("grant value %v, message %v", g.Value, doc.Data.Message["value"])
			}
		}
	})
}
