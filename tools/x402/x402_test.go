package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/tools/typeddata"
)

const (
	usdc  = "0x00000000000000000000000000000000000000C1"
	payee = "0x00000000000000000000000000000000000000b1"
)

var (
	wallet = common.HexToAddress("0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c")
	now    = time.Unix(1_800_000_000, 0)
)

// tree decodes JSON as walletgate's tools decode an object argument.
func tree(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m))
	return m
}

const option = `{"scheme":"exact","network":"eip155:1337","asset":"` + usdc + `","amount":"1500000","payTo":"` + payee + `","maxTimeoutSeconds":300,"extra":{"name":"USD Coin","version":"2"},"note":"kept"}`

func requirement(options ...string) string {
	accepts := "["
	for i, o := range options {
		if i > 0 {
			accepts += ","
		}
		accepts += o
	}
	return `{"x402Version":2,"error":"pay","resource":{"url":"https://API.example.com/data","description":"Data","mimeType":"application/json"},"accepts":` + accepts + `],"extensions":{"bazaar":{"x":1}}}`
}

func TestAnOptionIsPaidExactlyAndReadsBackThroughTypedData(t *testing.T) {
	r, ref := Parse(tree(t, requirement(option)))
	require.Nil(t, ref)
	require.Equal(t, "api.example.com", r.Host)
	o := r.Accepts[0]
	require.NoError(t, o.Err)
	skip, _ := o.Payable(1337)
	require.Empty(t, skip)

	td, ref := o.Authorize(wallet, 1337, now, time.Hour, bytes.NewReader(bytes.Repeat([]byte{7}, 32)))
	require.Nil(t, ref)
	doc, tref := typeddata.Check(td, typeddata.Chain{ID: 1337, Name: "dev"})
	require.Nil(t, tref)
	require.Equal(t, typeddata.TransferAuthorization, doc.Kind)
	g := doc.Grant
	require.Equal(t, wallet, g.Owner)
	require.Equal(t, common.HexToAddress(payee), g.Counterparty)
	require.Equal(t, big.NewInt(1_500_000), g.Value)
	require.Equal(t, big.NewInt(now.Add(300*time.Second).Unix()), g.Until, "validBefore is the option's timeout ahead")
	require.Equal(t, [32]byte(bytes.Repeat([]byte{7}, 32)), g.AuthNonce)
	require.Equal(t, common.HexToAddress(usdc), *doc.Verifying)

	a := AuthorizationOf(td)
	require.Equal(t, Authorization{From: wallet.Hex(), To: common.HexToAddress(payee).Hex(), Value: "1500000", ValidAfter: "0",
		ValidBefore: strconv.FormatInt(now.Unix()+300, 10), Nonce: "0x" + string(bytes.Repeat([]byte("07"), 32))}, a)

	p := r.Pay(0, make([]byte, 65), a)
	h, err := p.Header()
	require.NoError(t, err)
	raw, err := base64.StdEncoding.DecodeString(h)
	require.NoError(t, err)
	var echoed map[string]any
	require.NoError(t, json.Unmarshal(raw, &echoed))
	require.Equal(t, "kept", echoed["accepted"].(map[string]any)["note"], "the option is echoed as received, fields x402 does not define included")
	require.Equal(t, "https://API.example.com/data", echoed["resource"].(map[string]any)["url"])
	require.NotNil(t, echoed["extensions"], "the extensions are echoed")
	require.EqualValues(t, 2, echoed["x402Version"])
}

func TestRequirementRefusals(t *testing.T) {
	for name, tc := range map[string]string{
		"version 1":             `{"x402Version":1,"resource":{"url":"https://a.example/x"},"accepts":[` + option + `]}`,
		"version as a string":   `{"x402Version":"2","resource":{"url":"https://a.example/x"},"accepts":[` + option + `]}`,
		"no version":            `{"resource":{"url":"https://a.example/x"},"accepts":[` + option + `]}`,
		"a URL with a user":     `{"x402Version":2,"resource":{"url":"https://u:p@a.example/x"},"accepts":[` + option + `]}`,
		"not http":              `{"x402Version":2,"resource":{"url":"ftp://a.example/x"},"accepts":[` + option + `]}`,
		"no options":            `{"x402Version":2,"resource":{"url":"https://a.example/x"},"accepts":[]}`,
		"accepts not a list":    `{"x402Version":2,"resource":{"url":"https://a.example/x"},"accepts":{}}`,
		"a URL in another case": `{"x402Version":2,"resource":{"URL":"https://a.example/x"},"accepts":[` + option + `]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, ref := Parse(tree(t, tc))
			require.NotNil(t, ref)
			require.Equal(t, CodeInvalid, ref.Code)
		})
	}
}

func TestOptionsNotPaid(t *testing.T) {
	alter := func(k string, v any) string {
		m := map[string]any{}
		require.NoError(t, json.Unmarshal([]byte(option), &m))
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	permit2 := alter("extra", map[string]any{"name": "USD Coin", "version": "2", "assetTransferMethod": "permit2"})
	for name, tc := range map[string]struct {
		option string
		skip   Skip
	}{
		"another scheme":  {alter("scheme", "upto"), OtherScheme},
		"another network": {alter("network", "eip155:8453"), OtherNetwork},
		"Permit2":         {permit2, Permit2},
	} {
		t.Run(name, func(t *testing.T) {
			r, ref := Parse(tree(t, requirement(tc.option)))
			require.Nil(t, ref)
			skip, why := r.Accepts[0].Payable(1337)
			require.Equal(t, tc.skip, skip)
			require.NotEmpty(t, why)
		})
	}
	for name, o := range map[string]string{
		"payTo in another case":           `{"scheme":"exact","network":"eip155:1337","asset":"` + usdc + `","amount":"1","PayTo":"` + payee + `","extra":{"name":"U","version":"2"}}`,
		"a timeout as a string":           alter("maxTimeoutSeconds", "300"),
		"a zero timeout":                  alter("maxTimeoutSeconds", 0),
		"a timeout over a week":           alter("maxTimeoutSeconds", 8*24*3600),
		"no extra":                        alter("extra", nil),
		"an amount of 0":                  alter("amount", "0"),
		"an amount with a sign":           alter("amount", "+5"),
		"an amount in hex":                alter("amount", "0x10"),
		"an amount as a number":           alter("amount", 5),
		"a payee with a bad checksum":     alter("payTo", "0x00000000000000000000000000000000000000B1"[:41]+"b"),
		"an asset that is not an address": alter("asset", "USDC"),
	} {
		t.Run(name, func(t *testing.T) {
			r, ref := Parse(tree(t, requirement(o)))
			require.Nil(t, ref, "one option's defect does not refuse the requirement")
			_, ref = r.Accepts[0].Authorize(wallet, 1337, now, time.Hour, nil)
			require.NotNil(t, ref)
			require.Equal(t, CodeInvalid, ref.Code)
		})
	}
}

func TestValidityIsTheShorterBound(t *testing.T) {
	for name, tc := range map[string]struct {
		timeout any
		bound   time.Duration
		want    time.Duration
	}{
		"absent: 60 s":           {nil, time.Hour, DefaultTimeout},
		"the option's timeout":   {120, time.Hour, 120 * time.Second},
		"the caller's bound":     {3600, 10 * time.Minute, 10 * time.Minute},
		"a week, bound by a day": {7 * 24 * 3600, 24 * time.Hour, 24 * time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			m := map[string]any{}
			require.NoError(t, json.Unmarshal([]byte(option), &m))
			delete(m, "maxTimeoutSeconds")
			if tc.timeout != nil {
				m["maxTimeoutSeconds"] = tc.timeout
			}
			b, _ := json.Marshal(m)
			r, ref := Parse(tree(t, requirement(string(b))))
			require.Nil(t, ref)
			td, ref := r.Accepts[0].Authorize(wallet, 1337, now, tc.bound, nil)
			require.Nil(t, ref)
			require.Equal(t, strconv.FormatInt(now.Add(tc.want).Unix(), 10), AuthorizationOf(td).ValidBefore)
		})
	}
}

func TestTheDigestBindsTheOptionNotItsSpelling(t *testing.T) {
	reordered := `{"payTo":"` + payee + `","amount":"1500000","asset":"` + usdc + `","network":"eip155:1337","scheme":"exact","note":"kept","extra":{"version":"2","name":"USD Coin"},"maxTimeoutSeconds":300}`
	digest := func(s string) string {
		r, ref := Parse(tree(t, s))
		require.Nil(t, ref)
		d, err := r.Digest(0)
		require.NoError(t, err)
		return d
	}
	require.Equal(t, digest(requirement(option)), digest(requirement(reordered)), "key order does not change it")
	require.NotEqual(t, digest(requirement(option)), digest(requirement(reordered[:len(reordered)-4]+"301}")), "the timeout does")
}

// FuzzRequirement feeds arbitrary JSON objects through Parse and every
// option through Payable and Authorize: none may panic, every refusal has
// an x402 code, and every authorization built reads back through typeddata
// as a transfer authorization of the option's amount to its payee.
func FuzzRequirement(f *testing.F) {
	f.Add(requirement(option))
	f.Add(requirement(option, `{"scheme":"exact","network":"eip155:1337","asset":"`+usdc+`","amount":"1","payTo":"`+payee+`","extra":{"name":"\u202e","version":"2"}}`))
	f.Add(`{"x402Version":2,"resource":{"url":"http://h/"},"accepts":[1,null,{"extra":[]}]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
		dec.UseNumber()
		if dec.Decode(&m) != nil || m == nil {
			return
		}
		r, ref := Parse(m)
		if ref != nil {
			require.Contains(t, []string{CodeInvalid}, ref.Code)
			return
		}
		for i, o := range r.Accepts {
			o.Payable(1337)
			td, ref := o.Authorize(wallet, 1337, now, time.Hour, nil)
			if ref != nil {
				require.Equal(t, CodeInvalid, ref.Code)
				continue
			}
			doc, tref := typeddata.Check(td, typeddata.Chain{ID: 1337, Name: "dev"})
			if tref != nil {
				t.Fatalf("option %d: an authorization walletgate built does not read back: %v", i, tref)
			}
			require.Equal(t, typeddata.TransferAuthorization, doc.Kind)
			require.Equal(t, o.Amount, doc.Grant.Value.String())
			require.Equal(t, AuthorizationOf(td).To, doc.Grant.Counterparty.Hex())
			_, err := r.Digest(i)
			require.NoError(t, err)
		}
	})
}

func TestCheapestComparesInTheTokensUnits(t *testing.T) {
	p := func(amount string, decimals uint8) Price {
		n, _ := new(big.Int).SetString(amount, 10)
		return Price{Amount: n, Decimals: decimals}
	}
	prices := []Price{
		p("3000000", 6),              // 3
		p("2000000000000000000", 18), // 2
		p("1000000", 6),              // 1
		p("1000000000000000000", 18), // 1, later: after the other 1
	}
	all := func(int) bool { return true }
	order, chosen := Cheapest(prices, all)
	require.Equal(t, []int{2, 3, 1, 0}, order)
	require.Equal(t, 0, chosen)

	order, chosen = Cheapest(prices, func(i int) bool { return i == 1 || i == 0 })
	require.Equal(t, 2, chosen, "the cheapest that fits")
	require.Equal(t, 1, order[chosen])

	_, chosen = Cheapest(prices, func(int) bool { return false })
	require.Equal(t, 0, chosen, "none fits: the cheapest, for the caps to refuse")
}
