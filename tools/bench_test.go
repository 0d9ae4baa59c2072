package tools

import (
	"context"
	"testing"

	"github.com/walletgate/walletgate/gate"
)

// BenchmarkCanonicalSend measures what every wallet_send call pays before any
// RPC, twice per write (preview and confirm): strict parsing of the raw
// arguments, resolving them, the canonical form and the gate's fingerprint.
func BenchmarkCanonicalSend(b *testing.B) {
	cases := []struct{ name, raw string }{
		{"ETH", `{"to":"0x00000000000000000000000000000000000d3E30","amount":"0.05"}`},
		{"USDT-symbol", `{"to":"0x00000000000000000000000000000000000d3E30","amount":"25","asset":"USDT"}`},
		{"token-address+confirm", `{"to":"0xe40aed1eb6c2b8b39b55a809685cc93425f60d0c","amount":"25.000000","asset":"0x412c113686C5eC57D6DC7A01d0499e93Cc9E8dcC","confirm":"wgc_uxrpdoqfrnsmmbjhmhsdmowbe5jccloa"}`},
	}
	s := offlineServer()
	ctx := context.Background()
	for _, c := range cases {
		raw := []byte(c.raw)
		if _, ok := canonicalOf(s, c.raw); !ok {
			b.Fatalf("%s: arguments refused", c.name)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a, ref := decodeArgs[sendArgs](raw)
				if ref != nil {
					b.Fatal(ref)
				}
				in, ref := s.parseSend(ctx, a)
				if ref != nil {
					b.Fatal(ref)
				}
				_ = gate.Fingerprint(sendTool, s.canonical(in))
			}
		})
	}
}
