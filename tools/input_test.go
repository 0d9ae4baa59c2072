package tools

import (
	"strings"
	"testing"
)

// TestStrictArguments: the one decoder refuses what json/v2 refuses, each
// with BAD_ARGUMENT, the argument as the client named it, and what is
// allowed; and accepts exactly the declared types.
func TestStrictArguments(t *testing.T) {
	cases := []struct {
		name, raw string
		decode    func([]byte) *Refusal
		want      string // "" accepts
	}{
		{"send", `{"to":"0xabc","amount":"1","asset":"USDT","confirm":"x"}`, dec[sendArgs], ""},
		{"null", `{"to":"0xabc","amount":"1","asset":null}`, dec[sendArgs], `argument "asset" is null, which its input schema does not allow`},
		{"null in a call", `{"calls":[{"to":"a"},{"to":"b","value":null}]}`, dec[callToolArgs], `argument "calls[1].value" is null`},
		{"null inside data", `{"typed_data":{"types":{},"primaryType":"X","domain":{},"message":{"a":null}}}`, dec[signArgs], ""},
		{"duplicate", `{"to":"a","amount":"1","amount":"2"}`, dec[sendArgs], `argument "amount" is given twice`},
		{"case variant", `{"to":"a","amount":"1","AMOUNT":"2"}`, dec[sendArgs], `argument "AMOUNT" is not known; argument names are lower case: did you mean "amount"?`},
		{"case variant of confirm", `{"to":"a","amount":"1","Confirm":"t"}`, dec[sendArgs], `did you mean "confirm"?`},
		{"unknown", `{"to":"a","amount":"1","value":"2"}`, dec[sendArgs], `argument "value" is not accepted by this tool; allowed: amount, asset, confirm, network, to`},
		{"number for a string", `{"to":"a","amount":1}`, dec[sendArgs], `argument "amount" must be a JSON string, got the number 1`},
		{"confirm as a number", `{"to":"a","amount":"1","confirm":123456}`, dec[sendArgs], `argument "confirm" must be a JSON string, got the number 123456`},
		{"not an object", `[1]`, dec[sendArgs], "must be a JSON object"},
		{"two objects", `{"to":"a"} {}`, dec[sendArgs], "not one JSON object"},
		{"invalid UTF-8", "{\"to\":\"\xff\"}", dec[sendArgs], "not valid UTF-8"},
		{"too large", `{"to":"` + strings.Repeat("a", maxArgsBytes) + `"}`, dec[sendArgs], "bytes; at most"},
		{"fee", `{"token_in":"A","token_out":"B","amount_in":"1","fee":500}`, dec[quoteArgs], ""},
		{"fee as a string", `{"token_in":"A","token_out":"B","amount_in":"1","fee":"500"}`, dec[quoteArgs], `argument "fee" must be a JSON number such as 500, got a string`},
		{"fee as a float", `{"token_in":"A","token_out":"B","amount_in":"1","fee":500.5}`, dec[quoteArgs], `argument "fee" must be a whole number such as 500, got the number 500.5`},
		{"fee negative", `{"token_in":"A","token_out":"B","amount_in":"1","fee":-1}`, dec[quoteArgs], `must be a whole number`},
		{"fee too large", `{"token_in":"A","token_out":"B","amount_in":"1","fee":99999999999}`, dec[quoteArgs], `must be a whole number`},
		{"calls", `{"calls":[{"to":"a","data":"0x","value":"1"}]}`, dec[callToolArgs], ""},
		{"builder's gas", `{"calls":[{"to":"a","gas":"0x5208"}]}`, dec[callToolArgs], `"calls[0].gas" is not accepted: walletgate sets the sender, gas`},
		{"unknown in a call", `{"calls":[{"to":"a"},{"to":"b","extra":"1"}]}`, dec[callToolArgs], `argument "calls[1].extra" is not accepted by this tool; allowed: data, to, value`},
		{"number in a call", `{"calls":[{"to":5}]}`, dec[callToolArgs], `argument "calls[0].to" must be a JSON string, got the number 5`},
		{"calls not a list", `{"calls":{"to":"a"}}`, dec[callToolArgs], `argument "calls" must be a non-empty JSON array of objects`},
		{"no calls", `{"calls":[]}`, dec[callToolArgs], `argument "calls" must be a non-empty JSON array`},
		{"too many calls", `{"calls":[` + strings.Repeat(`{"to":"a"},`, 8) + `{"to":"a"}]}`, dec[callToolArgs], "has 9 items; at most 8"},
		{"tokens", `{"tokens":["USDT","DAI"]}`, dec[balanceArgs], ""},
		{"tokens not a list", `{"tokens":"USDT"}`, dec[balanceArgs], `argument "tokens" must be a JSON array of strings, got a string`},
		{"a number in tokens", `{"tokens":["USDT",1]}`, dec[balanceArgs], `argument "tokens[1]" must be a JSON string, got the number 1`},
		{"too many tokens", `{"tokens":[` + strings.Repeat(`"a",`, maxListLen) + `"a"]}`, dec[balanceArgs], "has 33 items; at most 32"},
		{"no arguments", `{"x":"1"}`, dec[noArgs], "allowed: network"},
		{"typed data", `{"typed_data":{"a":{"b":1}}}`, dec[signArgs], ""},
		{"typed data not an object", `{"typed_data":"x"}`, dec[signArgs], `argument "typed_data" must be a JSON object, got a string`},
		{"typed data duplicate", `{"typed_data":{"a":{"b":1,"b":2}}}`, dec[signArgs], `argument "typed_data.a.b" is given twice`},
		{"typed data case variant", `{"typed_data":{"a":{"b":1,"B":2}}}`, dec[signArgs], `has the key "B" twice`},
		{"typed data fraction", `{"typed_data":{"a":1.5}}`, dec[signArgs], "only whole numbers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.decode([]byte(c.raw))
			switch {
			case c.want == "" && r != nil:
				t.Fatalf("refused: %v", r)
			case c.want == "":
			case r == nil:
				t.Fatalf("accepted %s", c.raw)
			case r.Code != CodeBadArgument || !strings.Contains(r.Message, c.want):
				t.Fatalf("got %v\nwant %s: …%s…", r, CodeBadArgument, c.want)
			}
		})
	}
}

func dec[A any](raw []byte) *Refusal {
	_, r := decodeArgs[A](raw)
	return r
}
