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
// annotations), or a raw schema not already in the form encoding/json would
// write (whitespace between tokens, <, >, &, U+2028 or U+2029, which it
// escapes; a line break would also end the message early): then the caller
// encodes msg the usual way.
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
	if tools == nil {
		return nil, false // encoding/json writes null
	}
	res.Tools = []mcp.Tool{}
	resp.Result = res
	env, err := json.Marshal(resp)
	const empty = `[]}}` // the empty tools array, the result's and the response's ends
	if err != nil || !bytes.HasSuffix(env, []byte(`"tools":`+empty)) {
		return nil, false
	}
	b = append(b, env[:len(env)-len(empty)]...)
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
		t.RawInputSchema == nil || t.InputSchema.Type != "" || t.OutputSchema.Type != "" ||
		!compacted(t.RawInputSchema) || (t.RawOutputSchema != nil && !compacted(t.RawOutputSchema)) {
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

// compacted reports whether raw is as encoding/json's compaction leaves it:
// no whitespace between tokens, no control character, and none of the
// characters it escapes (<, >, &, U+2028, U+2029). It does not validate
// the JSON: walletgate's raw schemas are encoding/json's own output.
func compacted(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c < 0x20, c == '<', c == '>', c == '&':
			return false
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
			return false
		case in && c == '\\':
			i++ // the escaped byte (an escaped quote does not end the string)
		case c == '"':
			in = !in
		case !in && c == ' ':
			return false
		}
	}
	return len(raw) > 0 && !in
}
