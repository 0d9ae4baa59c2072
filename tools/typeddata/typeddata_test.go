package typeddata

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

var dev = Chain{ID: 1337, Name: "dev"}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m))
	return m
}

const (
	domainJSON = `"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},{"name":"chainId","type":"uint256"},{"name":"verifyingContract","type":"address"}]`
	permitJSON = `"Permit":[{"name":"owner","type":"address"},{"name":"spender","type":"address"},{"name":"value","type":"uint256"},{"name":"nonce","type":"uint256"},{"name":"deadline","type":"uint256"}]`
	domainObj  = `"domain":{"name":"USD Coin","version":"2","chainId":1337,"verifyingContract":"0x00000000000000000000000000000000000000C1"}`
	owner      = "0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c"
	spender    = "0x00000000000000000000000000000000000000f1"
)

func permit(message string) string {
	return `{"types":{` + domainJSON + `,` + permitJSON + `},"primaryType":"Permit",` + domainObj + `,"message":` + message + `}`
}

var goodPermit = permit(`{"owner":"` + owner + `","spender":"` + spender + `","value":"5000000","nonce":3,"deadline":"0x6b49d200"}`)

func TestAPermitIsReadFromWhatIsHashed(t *testing.T) {
	doc, ref := Read(decode(t, goodPermit), dev)
	require.Nil(t, ref)
	require.Equal(t, Permit, doc.Kind)
	require.Equal(t, common.HexToAddress("0xc1"), *doc.Verifying)
	g := doc.Grant
	require.Equal(t, common.HexToAddress(owner), g.Owner)
	require.Equal(t, common.HexToAddress(spender), g.Counterparty)
	require.Equal(t, big.NewInt(5_000_000), g.Value)
	require.Equal(t, big.NewInt(3), g.PermitNonce, "a JSON number is read exactly")
	require.Equal(t, big.NewInt(0x6b49d200), g.Until, "a 0x hex string too")
	require.Equal(t, json.Number("3"), doc.Shown["nonce"], "the message is shown as received")
}

func TestTypedDataRefusals(t *testing.T) {
	msg := func(value string) string {
		return permit(`{"owner":"` + owner + `","spender":"` + spender + `","value":` + value + `,"nonce":0,"deadline":1}`)
	}
	mail := func(domainTypes, domain, message string) string {
		return `{"types":{"EIP712Domain":` + domainTypes + `,"Mail":[{"name":"contents","type":"string"}]},"primaryType":"Mail","domain":` + domain + `,"message":` + message + `}`
	}
	chainOnly := `[{"name":"chainId","type":"uint256"}]`
	for name, tc := range map[string]struct {
		in, code, says string
	}{
		"another chain":                         {mail(chainOnly, `{"chainId":1}`, `{"contents":"hi"}`), CodeWrongChain, "chain id 1337"},
		"no chain":                              {mail(`[{"name":"name","type":"string"}]`, `{"name":"x"}`, `{"contents":"hi"}`), CodeWrongChain, "no chainId"},
		"a domain field not listed":             {mail(chainOnly, `{"chainId":1337,"name":"x"}`, `{"contents":"hi"}`), CodeInvalid, "shown and not signed"},
		"a domain field in another case":        {mail(chainOnly, `{"chainID":1337}`, `{"contents":"hi"}`), CodeInvalid, "shown and not signed"},
		"a non-standard domain type":            {mail(`[{"name":"chainId","type":"string"}]`, `{"chainId":"1337"}`, `{"contents":"hi"}`), CodeInvalid, "EIP-712 defines only"},
		"a non-standard domain field":           {mail(`[{"name":"chainId","type":"uint256"},{"name":"owner","type":"address"}]`, `{"chainId":1337,"owner":"`+owner+`"}`, `{"contents":"hi"}`), CodeInvalid, "owner"},
		"a key EIP-712 does not define":         {`{"types":{},"primaryType":"Mail","domain":{},"message":{},"extra":1}`, CodeInvalid, "does not define"},
		"a message field missing":               {mail(chainOnly, `{"chainId":1337}`, `{}`), CodeInvalid, "cannot be encoded"},
		"a message field extra":                 {mail(chainOnly, `{"chainId":1337}`, `{"contents":"hi","to":"x"}`), CodeInvalid, "cannot be encoded"},
		"a number for a string":                 {mail(chainOnly, `{"chainId":1337}`, `{"contents":5}`), CodeInvalid, "cannot be encoded"},
		"a null":                                {mail(chainOnly, `{"chainId":1337}`, `{"contents":null}`), CodeInvalid, "null"},
		"the domain as primary type":            {`{"types":{"EIP712Domain":[{"name":"chainId","type":"uint256"}]},"primaryType":"EIP712Domain","domain":{"chainId":1337},"message":{"chainId":1337}}`, CodeInvalid, "not EIP712Domain"},
		"a primary type not defined":            {mail(chainOnly, `{"chainId":1337}`, `{}`)[:0] + `{"types":{"EIP712Domain":[{"name":"chainId","type":"uint256"}]},"primaryType":"Nope","domain":{"chainId":1337},"message":{}}`, CodeInvalid, "primaryType"},
		"a Permit with another field":           {strings.Replace(msg(`"1"`), `{"name":"deadline","type":"uint256"}`, `{"name":"deadline","type":"uint128"}`, 1), CodeUnknown, "not the standard ones"},
		"Permit2":                               {`{"types":{` + domainJSON + `,"PermitSingle":[{"name":"spender","type":"address"}]},"primaryType":"PermitSingle",` + domainObj + `,"message":{"spender":"` + spender + `"}}`, CodeUnsupported, "Permit2"},
		"a permit value with a sign":            {msg(`"+5"`), CodeInvalid, "message.value"},
		"a permit value with leading zeros":     {msg(`"05"`), CodeInvalid, "message.value"},
		"a permit value that is empty":          {msg(`""`), CodeInvalid, "message.value"},
		"a permit owner with a bad checksum":    {strings.Replace(goodPermit, owner, strings.ToLower(owner[:3])+owner[3:], 1), CodeInvalid, "message.owner"},
		"a permit without a verifying contract": {strings.Replace(strings.Replace(goodPermit, `,{"name":"verifyingContract","type":"address"}`, "", 1), `,"verifyingContract":"0x00000000000000000000000000000000000000C1"`, "", 1), CodeInvalid, "verifyingContract"},
	} {
		t.Run(name, func(t *testing.T) {
			_, ref := Read(decode(t, tc.in), dev)
			require.NotNil(t, ref, tc.in)
			require.Equal(t, tc.code, ref.Code, ref.Message)
			require.Contains(t, ref.Message, tc.says)
			require.Contains(t, ref.Message, "Nothing was signed")
		})
	}
}
