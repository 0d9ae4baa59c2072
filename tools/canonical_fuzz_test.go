package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// offlineServer resolves known assets without a node: enough for
// canonicalization, which never needs the chain for ETH and known tokens.
func offlineServer() *Server {
	return &Server{chainID: 1337, network: policy.LookupNetwork(1337), address: signer.DevAddress}
}

// canonicalOf parses raw wallet_send arguments into their canonical bytes.
func canonicalOf(s *Server, raw string) ([]byte, bool) {
	a, ref := decodeArgs[sendArgs]([]byte(raw))
	if ref != nil {
		return nil, false
	}
	in, ref := s.parseSend(context.Background(), a)
	if ref != nil {
		return nil, false
	}
	return s.canonical(in), true
}

var fuzzAssets = []string{"", "ETH", "eth", "USDT", "usdt", "DAI", "0x412c113686c5ec57d6dc7a01d0499e93cc9e8dcc", "0x412c113686C5eC57D6DC7A01d0499e93Cc9E8dcC"}

// FuzzCanonicalSend: the same meaning written differently gives the same
// fingerprint; a different meaning gives a different one.
func FuzzCanonicalSend(f *testing.F) {
	f.Add("0x00000000000000000000000000000000000000d1", "1.5", uint8(3), false)
	f.Add("0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c", "0.000001", uint8(4), true)
	f.Add("0xabcdefabcdefabcdefabcdefabcdefabcdefabcd", "100", uint8(0), false)
	f.Add("0x0000000000000000000000000000000000000000", "1", uint8(1), true)
	f.Add("0x00000000000000000000000000000000000000d1", "1e3", uint8(2), false)
	s := offlineServer()
	f.Fuzz(func(t *testing.T, to, amount string, assetIdx uint8, reorder bool) {
		asset := fuzzAssets[int(assetIdx)%len(fuzzAssets)]
		args := map[string]string{"to": to, "amount": amount}
		if asset != "" {
			args["asset"] = asset
		}
		raw, _ := json.Marshal(args)
		c1, ok := canonicalOf(s, string(raw))
		if !ok {
			return
		}
		// Cosmetic variants: key order, whitespace, address case, trailing
		// zeros, symbol case.
		variant := map[string]string{"to": strings.ToLower(to), "amount": amount}
		if !strings.Contains(amount, ".") {
			variant["amount"] = amount + ".000"
		} else {
			variant["amount"] = amount + "0"
		}
		if asset != "" {
			variant["asset"] = strings.ToUpper(asset)
			if strings.HasPrefix(asset, "0x") {
				variant["asset"] = strings.ToLower(asset)
			}
		}
		vraw, _ := json.Marshal(variant)
		if reorder {
			vraw = []byte(" { \"amount\" : " + jsonStr(variant["amount"]) + " , \"to\" : " + jsonStr(variant["to"]) + optional(variant["asset"]) + " } ")
		}
		c2, ok := canonicalOf(s, string(vraw))
		if !ok {
			t.Fatalf("variant %s of accepted %s was refused", vraw, raw)
		}
		if gate.Fingerprint(sendTool, c1) != gate.Fingerprint(sendTool, c2) {
			t.Fatalf("same meaning, different fingerprint:\n%s\n%s", c1, c2)
		}
		// A different meaning: one base unit more.
		in, _ := s.parseSend(context.Background(), mustArgs(t, raw))
		more := in
		more.amount = new(big.Int).Add(in.amount, big.NewInt(1))
		if bytes.Equal(s.canonical(more), c1) {
			t.Fatalf("one base unit more gave the same canonical form")
		}
		other := in
		other.to[19] ^= 1
		if bytes.Equal(s.canonical(other), c1) {
			t.Fatalf("another recipient gave the same canonical form")
		}
		if gate.Fingerprint("wallet_swap", c1) == gate.Fingerprint(sendTool, c1) {
			t.Fatalf("the tool name is not bound")
		}
	})
}

func jsonStr(s string) string { b, _ := json.Marshal(s); return string(b) }

func optional(asset string) string {
	if asset == "" {
		return ""
	}
	return ", \"asset\":" + jsonStr(asset)
}

func mustArgs(t *testing.T, raw []byte) sendArgs {
	a, ref := decodeArgs[sendArgs](raw)
	if ref != nil {
		t.Fatal(ref)
	}
	return a
}

// FuzzParseArgs: the strict decoder never panics, refuses with its code, and
// whatever it accepts has only declared, case-exact, unique keys of the
// declared JSON types: every key of an accepted input is one of the struct's.
func FuzzParseArgs(f *testing.F) {
	for _, seed := range []string{`{}`, `{"address":"x"}`, `{"address":"a","address":"b"}`, `{"ADDRESS":"x"}`, `{"address":1}`, `[]`, `{"address":"x"} {}`, `{"address":"\ud800"}`, "{\"address\":\"\xff\"}", `{"tokens":["a",1]}`, `{"tokens":["a"],"Tokens":["b"]}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, ref := decodeArgs[balanceArgs]([]byte(raw))
		if ref != nil {
			if !strings.HasPrefix(ref.Error(), CodeBadArgument+": ") {
				t.Fatalf("refusal without its code: %v", ref)
			}
			return
		}
		var members map[string]json.RawMessage
		if json.Unmarshal([]byte(raw), &members) == nil {
			for k := range members {
				if k != "address" && k != "tokens" {
					t.Fatalf("accepted undeclared key %q in %s", k, raw)
				}
			}
		}
	})
}
