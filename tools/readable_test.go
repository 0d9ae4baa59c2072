package tools

import (
	"math/big"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

func TestReadableAmount(t *testing.T) {
	wei := func(s string) *big.Int { v, _ := new(big.Int).SetString(s, 10); return v }
	for _, tc := range []struct {
		name     string
		v        *big.Int
		decimals uint8
		mode     rounding
		want     string
		exact    bool
	}{
		{"a fee rounds up, five significant digits", wei("2742153708000"), 18, roundUp, "0.0000027422", false},
		{"a minimum rounds down", wei("3314986244474991"), 18, roundDown, "0.0033149", false},
		{"a plain amount to the nearest", big.NewInt(25_123_456), 6, nearest, "25.123", false},
		{"upward past a nine", big.NewInt(25_999_999), 6, roundUp, "26", false},
		{"short amounts stay exact", big.NewInt(3_500_000), 6, nearest, "3.5", true},
		{"every integer digit kept, grouped", wei("1234567890000000000000000"), 18, nearest, "1,234,568", false},
		{"thousands with a fraction", big.NewInt(3_001_234_567), 6, nearest, "3,001.2", false},
		{"zero", big.NewInt(0), 18, roundUp, "0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, exact := readableAmount(tc.v, tc.decimals, tc.mode)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.exact, exact)
		})
	}
	a := shownAmount("Send", big.NewInt(25_123_456), 6, "USDT", nearest)
	require.Equal(t, "≈ 25.123 USDT", a.Rounded)
	require.Equal(t, "25.123456 USDT (25123456 base units)", a.Exact)
	require.Equal(t, "at most 0.0000027422 ETH", feeAmount(wei("2742153708000")).Rounded)
	require.Equal(t, "74.876", readableLeft("74.876544"))
}

func TestPersonTextLeavesOutWhatIsForTheModel(t *testing.T) {
	text := "PREVIEW — nothing has been signed or sent.\nNetwork:   dev, chain id 1337 — Local dev chain\nAction:    send 1 USDT\nTo:        0xabc\nExpires:   2026-12-01T07:00:00Z (in 5m0s)\nAPPROVAL BY THE PERSON REQUIRED (preview ABCD): … call wallet_send again …"
	require.Equal(t, "Action:    send 1 USDT\nTo:        0xabc", personText(text))
}

func TestPageOutcomeListsTheLegsThatWereSent(t *testing.T) {
	a, b := "0x"+strings.Repeat("a", 64), "0x"+strings.Repeat("b", 64)
	block := uint64(4)
	o := confirmOutcome(confirmResult{Status: "incomplete", TxHash: a, Block: &block, Fee: "0.001",
		Legs:    []legOutcomeJSON{{Label: "approve", Status: "included", TxHash: a, Block: 3}, {Label: "swap", Status: "not_sent", Code: "PRICE_MOVED"}, {Label: "approve", Status: "included", TxHash: b, Block: 4, Undo: true}},
		Changes: []measuredJSON{{Asset: "ETH", Symbol: "ETH", Out: "0", In: "0"}}})
	require.Equal(t, "partial", o.Status)
	require.Equal(t, []string{a, b}, o.TxHashes)
	require.Contains(t, o.Summary, "swap: not sent; taking it back (approve): included")
	require.Contains(t, o.Summary, "nothing besides the fees")
	o = confirmOutcome(confirmResult{Status: "confirmed", TxHash: b, Block: &block, Fee: "0.001", Legs: []legOutcomeJSON{{Label: "send", Status: "included", TxHash: b}}})
	require.Equal(t, []string{b}, o.TxHashes)
	o = confirmOutcome(confirmResult{Status: "effect_mismatch", TxHash: b, Block: &block, Fee: "0.001", Legs: []legOutcomeJSON{{Label: "call 1", Status: "included", TxHash: b}},
		Changes: []measuredJSON{{Asset: "0x6B175474E89094C44Da98b954EedeAC495271d0F", Symbol: "DAI", Out: "0", In: "0", PreviewedIn: "7"}}})
	require.Equal(t, "mismatch", o.Status)
	require.NotContains(t, o.Summary, "reported status")
	require.Contains(t, o.Summary, "less reached it than the preview showed")
}

// Signatures approved by the person show their outcome on the page too.
func TestPageOutcomeOfASignature(t *testing.T) {
	o := outcomeOf(&mcp.CallToolResult{StructuredContent: signedResult{Status: "signed", Kind: "permit", Digest: "0x" + strings.Repeat("c", 64)}}, nil)
	require.Equal(t, "signed", o.Status)
	require.Contains(t, o.Summary, "nothing was sent")
	o = outcomeOf(&mcp.CallToolResult{StructuredContent: x402Result{Status: "signed", Amount: "1", Token: tokenRef{Symbol: "USDC"}, PayTo: "0x00000000000000000000000000000000000000aa", Resource: "https://api.example.com/data"}}, nil)
	require.Equal(t, "signed", o.Status)
	require.Contains(t, o.Summary, "1 USDC to 0x00000000000000000000000000000000000000aa")
	o = outcomeOf(nil, refuse("CAP_EXCEEDED", "this needs 5 USDT. More words."))
	require.Equal(t, "refused", o.Status)
	require.Equal(t, "CAP_EXCEEDED: this needs 5 USDT. Nothing was sent.", o.Summary)
}
