package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

// EncodeListResponse writes what mcp-go writes, byte for byte, for every
// tool list walletgate serves — with a key and every opt-in, watch-only,
// swaps off — in both protocol eras and with a string id.
func TestEncodeListResponseIsMCPGos(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	ctx := context.Background()
	c, err := chain.NewFromRPC(ctx, d.RPC(), "embedded dev chain")
	require.NoError(t, err)
	t.Cleanup(c.Close)
	configs := map[string]func(*tools.Deps){
		"key, every tool": func(deps *tools.Deps) {
			deps.Config.AllowCalls = policy.CallsAllowed{Rules: []policy.CallRule{{Contract: common.HexToAddress("0x00000000000000000000000000000000000000c1")}}}
		},
		"watch-only": func(deps *tools.Deps) { deps.Signer = nil },
		"swaps off":  func(deps *tools.Deps) { deps.SwapsOff = "swaps are off: run <the install step> & retry" },
	}
	modern := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for name, mutate := range configs {
		t.Run(name, func(t *testing.T) {
			cfg, err := policy.Load(nil)
			require.NoError(t, err)
			deps := tools.Deps{Chain: c, Signer: signer.Dev(), Address: signer.DevAddress, Config: cfg}
			mutate(&deps)
			deps.Caps, err = tools.ResolveCaps(ctx, c, deps.Config, tools.DevCaps)
			require.NoError(t, err)
			ms := tools.NewMCPServer(deps)
			init := ms.HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
			_, ok := tools.EncodeListResponse(init)
			require.False(t, ok, "an initialize answer is not a tool list")
			for _, req := range []string{
				`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":"list-3","method":"tools/list","params":{}}`,
				`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{` + modern + `}}`,
			} {
				resp := ms.HandleMessage(ctx, []byte(req))
				want, err := json.Marshal(resp)
				require.NoError(t, err)
				got, ok := tools.EncodeListResponse(resp)
				require.True(t, ok, "%s: %s", req, want)
				sameBytes(t, want, got, req)
				require.Greater(t, len(got), 5_000, "the whole list")
			}
		})
	}
}

// What it does not encode it leaves to encoding/json: errors, other
// results, and tools with fields walletgate does not set.
func TestEncodeListResponseLeavesTheRest(t *testing.T) {
	plain := mcp.NewToolWithRawSchema("t", "a <tool> & \u2028 more", json.RawMessage(`{"type":"object"}`))
	plain.RawOutputSchema = json.RawMessage(`{"type":"object","description":"\u003cout\u003e"}`)
	list := func(ts ...mcp.Tool) mcp.JSONRPCMessage {
		return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(7), mcp.ListToolsResult{Tools: ts})
	}
	got, ok := tools.EncodeListResponse(list(plain))
	require.True(t, ok)
	want, err := json.Marshal(list(plain))
	require.NoError(t, err)
	sameBytes(t, want, got, "escaping as encoding/json does")
	empty := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(7), mcp.ListToolsResult{Tools: []mcp.Tool{}})
	got, ok = tools.EncodeListResponse(empty)
	require.True(t, ok)
	require.Equal(t, `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`, string(got))
	// Raw schemas in any other form than encoding/json's own: the bytes
	// would differ from mcp-go's (and a line break would end the message).
	raw := func(in, out string) mcp.Tool {
		x := plain
		x.RawInputSchema, x.RawOutputSchema = json.RawMessage(in), json.RawMessage(out)
		return x
	}
	for name, tool := range map[string]mcp.Tool{
		"space between tokens": raw(`{"type": "object"}`, `{}`),
		"a line break":         raw("{\"type\":\n\"object\"}", `{}`),
		"tab in the output":    raw(`{}`, "{\"a\":\t1}"),
		"raw <":                raw(`{"description":"<b>"}`, `{}`),
		"raw &":                raw(`{}`, `{"description":"a&b"}`),
		"raw U+2028":           raw("{\"description\":\"a\u2028b\"}", `{}`),
		"unterminated string":  raw(`{"a":"b}`, `{}`),
	} {
		_, ok := tools.EncodeListResponse(list(tool))
		require.False(t, ok, name)
		if b, err := json.Marshal(list(tool)); err == nil {
			require.NotContains(t, string(b), "\n", "%s: encoding/json compacts it, and that is what mcp-go sends", name)
		}
	}
	spaced := raw(`{"description":"a b \" c","enum":["x y"]}`, `{"a":"\\"}`)
	got, ok = tools.EncodeListResponse(list(spaced))
	require.True(t, ok, "spaces and escapes inside strings are as encoding/json writes them")
	want, _ = json.Marshal(list(spaced))
	sameBytes(t, want, got, "spaces and escapes inside strings")

	withMeta := plain
	withMeta.Meta = &mcp.Meta{AdditionalFields: map[string]any{"k": "v"}}
	structured := mcp.NewTool("s", mcp.WithString("x"))
	for name, msg := range map[string]mcp.JSONRPCMessage{
		"no tools (nil)": list(),
		"_meta":          list(plain, withMeta),
		"icons":          list(func() mcp.Tool { x := plain; x.Icons = []mcp.Icon{{Src: "a"}}; return x }()),
		"typed schema":   list(structured),
		"error":          mcp.JSONRPCError{JSONRPC: "2.0", ID: mcp.NewRequestId(1), Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_REQUEST, "no", nil)},
		"other result":   mcp.NewJSONRPCResultResponse(mcp.NewRequestId(1), mcp.EmptyResult{}),
	} {
		_, ok := tools.EncodeListResponse(msg)
		require.False(t, ok, name)
	}
}

// sameBytes fails with where want and got first differ (a tool list is too
// long for a whole diff).
func sameBytes(t *testing.T, want, got []byte, what string) {
	t.Helper()
	n := min(len(want), len(got))
	i := 0
	for i < n && want[i] == got[i] {
		i++
	}
	if i == n && len(want) == len(got) {
		return
	}
	from := max(0, i-60)
	t.Fatalf("%s: the bytes differ at %d (lengths %d and %d):\nmcp-go: …%s…\nours:   …%s…", what, i, len(want), len(got),
		want[from:min(len(want), i+60)], got[from:min(len(got), i+60)])
}
