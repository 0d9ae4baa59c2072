package tools

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// TestCanonicalFormIsStable pins the bytes the gate fingerprints for each
// write kind: a token issued by one build must bind the same arguments in the
// next, and one canonical function must write every kind's form the same way.
func TestCanonicalFormIsStable(t *testing.T) {
	s := offlineServer()
	usdt, _ := policy.TokenBySymbol(1337, "USDT")
	tok := asset{Address: usdt.Address, Symbol: "USDT", Decimals: 6, Known: true}
	to := common.HexToAddress("0x00000000000000000000000000000000000000d1")
	from := signer.DevAddress
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"send ETH", s.canonical(sendIntent{from: from, to: to, asset: ethAsset, amount: big.NewInt(5)}),
			`{"v":1,"chain_id":1337,"from":"` + from.Hex() + `","to":"` + to.Hex() + `","asset":"ETH","amount":"5"}`},
		{"approve", s.canonical(approveIntent{from: from, token: tok, spender: to, amount: big.NewInt(0)}),
			`{"v":1,"chain_id":1337,"from":"` + from.Hex() + `","token":"` + usdt.Address.Hex() + `","spender":"` + to.Hex() + `","amount":"0"}`},
		{"call", s.canonical(callIntent{from: from, calls: []callItem{{to: to, data: []byte{0xab}, value: big.NewInt(7)}}}),
			`{"v":1,"chain_id":1337,"from":"` + from.Hex() + `","calls":[{"to":"` + to.Hex() + `","data":"0xab","value":"7"}]}`},
		{"swap", s.canonical(swapIntent{From: from, In: ethAsset, Out: tok, AmountIn: big.NewInt(9), Fee: 500, Bps: 50}),
			`{"v":1,"chain_id":1337,"from":"` + from.Hex() + `","token_in":"ETH","token_out":"` + usdt.Address.Hex() + `","amount_in":"9","fee":500,"slippage_bps":50}`},
		{"pay", s.canonical(payIntent{digest: "abc"}),
			`{"v":1,"chain_id":1337,"from":"` + from.Hex() + `","requirement":"abc"}`},
	}
	for _, c := range cases {
		if string(c.got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.got, c.want)
		}
	}
}
