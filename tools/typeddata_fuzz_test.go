package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// FuzzTypedData feeds arbitrary typed_data arguments through the strict
// object parser and the typed-data reader: neither may panic, and whatever
// the reader accepts must hash under apitypes, name this chain, and keep
// every key of the message exactly as its type lists it.
func FuzzTypedData(f *testing.F) {
	for _, seed := range []string{
		`{"types":{"EIP712Domain":[{"name":"chainId","type":"uint256"}],"Mail":[{"name":"contents","type":"string"}]},"primaryType":"Mail","domain":{"chainId":1337},"message":{"contents":"hi"}}`,
		`{"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"chainId","type":"uint256"}],"Permit":[{"name":"owner","type":"address"},{"name":"spender","type":"address"},{"name":"value","type":"uint256"},{"name":"nonce","type":"uint256"},{"name":"deadline","type":"uint256"}]},"primaryType":"Permit","domain":{"name":"T","chainId":"0x539"},"message":{"owner":"0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c","spender":"0x00000000000000000000000000000000000000f1","value":"1","nonce":0,"deadline":1}}`,
		`{"types":{"EIP712Domain":[],"A":[{"name":"b","type":"B[]"}],"B":[{"name":"c","type":"uint8"}]},"primaryType":"A","domain":{"chainId":1337,"chainID":1},"message":{"b":[{"c":1}]}}`,
		`{"types":{},"primaryType":"","domain":{},"message":{"a":1e3}}`,
	} {
		f.Add(seed)
	}
	s := offlineServer()
	f.Fuzz(func(t *testing.T, raw string) {
		obj, ref := decodeObject("typed_data", json.RawMessage(raw))
		if ref != nil {
			return
		}
		doc, ref := s.readTypedData(obj)
		if ref != nil {
			if !strings.HasPrefix(ref.Code, "TYPED_DATA_") {
				t.Fatalf("refusal code %s for %q", ref.Code, raw)
			}
			return
		}
		if _, _, err := apitypes.TypedDataAndHash(doc.td); err != nil {
			t.Fatalf("accepted typed data does not hash: %v", err)
		}
		if doc.chainID == nil || doc.chainID.Uint64() != s.chainID {
			t.Fatalf("accepted a domain for chain %v", doc.chainID)
		}
		if len(doc.td.Message) != len(doc.td.Types[doc.td.PrimaryType]) {
			t.Fatalf("message keys %v do not match type %v", doc.td.Message, doc.td.Types[doc.td.PrimaryType])
		}
	})
}
