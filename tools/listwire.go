package tools

import (
	"bytes"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// EncodeListResponse encodes a tools/list answer byte for byte as mcp-go's
// stdio transport would (encoding/json over mcp.Tool.MarshalJSON), without
// its cost: encoding/json validates and compacts every raw schema twice, and
// the output schemas are most of a 70 KB list, so that was 1–2 ms of every
// cold start. Here the raw schemas are copied as they are — they are compact
// and escaped already, json.Marshal's own output (the input schemas) or
// generated from it (the output schemas), which
// TestEncodeListResponseIsMCPGos checks for every tool walletgate lists.
//
// ok is false for anything but a tools/list result whose tools use only the
// fields walletgate sets (name, title, description, the raw schemas,
// annotations): then the caller encodes msg the usual way.
func EncodeListResponse(msg mcp.JSONRPCMessage) (b []byte, ok bool) {
	resp, ok := msg.(mcp.JSONRPCResponse)
	if !ok {
		return nil, false
	}
	res, ok := resp.Result.(mcp.ListToolsResult)
	if !ok {
		return nil, false
	}
	// The envelope (id, _meta, cursor, cache hints) the usual way, with no
	// tools: "tools" is the result's last field.
	tools := res.Tools
	res.Tools = []mcp.Tool{}
	resp.Result = res
	env, err := json.Marshal(resp)
	const tail = `"tools":[]}}`
	if err != nil || !bytes.HasSuffix(env, []byte(tail)) {
		return nil, false
	}
	b = append(b, env[:len(env)-len(`[]}}`)]...)
	b = append(b, '[')
	for i, t := range tools {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendTool(b, t); !ok {
			return nil, false
		}
	}
	return append(b, "]}}"...), true
}

// appendTool appends t as mcp.Tool.MarshalJSON encodes it: a map, so keys
// in sorted order.
func appendTool(b []byte, t mcp.Tool) ([]byte, bool) {
	if t.Meta != nil || t.Icons != nil || t.Execution != nil || t.DeferLoading ||
		t.RawInputSchema == nil || t.InputSchema.Type != "" || t.OutputSchema.Type != "" {
		return nil, false
	}
	field := func(key string, v any) bool {
		enc, err := json.Marshal(v)
		if err != nil {
			return false
		}
		b = append(b, `"`+key+`":`...)
		b = append(append(b, enc...), ',')
		return true
	}
	b = append(b, '{')
	if !field("annotations", t.Annotations) {
		return nil, false
	}
	if t.Description != "" && !field("description", t.Description) {
		return nil, false
	}
	b = append(b, `"inputSchema":`...)
	b = append(append(b, t.RawInputSchema...), ',')
	if !field("name", t.Name) {
		return nil, false
	}
	if t.RawOutputSchema != nil {
		b = append(b, `"outputSchema":`...)
		b = append(append(b, t.RawOutputSchema...), ',')
	}
	if t.Title != "" && !field("title", t.Title) {
		return nil, false
	}
	b[len(b)-1] = '}'
	return b, true
}
