package tools_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestToolListSnapshot fails on any change to the tool list as a client sees
// it: names, descriptions, annotations, input and output schemas. Review the
// diff, then regenerate with: go test ./tools/ -run TestToolListSnapshot -update
func TestToolListSnapshot(t *testing.T) {
	e := newEnv(t)
	// The wire form: what ajv and every other client read.
	var tools []any
	for _, raw := range wireTools(t, e.ctx, e.mcp) {
		var tool any
		require.NoError(t, json.Unmarshal(raw, &tool))
		tools = append(tools, tool)
	}
	got, err := json.MarshalIndent(tools, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')

	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to create it")
	if string(want) != string(got) {
		t.Fatalf("tool list changed (%s); review and run with -update", firstDiff(string(want), string(got)))
	}
}

// firstDiff names the first line where two texts differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d: golden %q, now %q", i+1, wl, gl)
		}
	}
	return "no difference"
}

// Claude Desktop and the Anthropic API: ^[a-zA-Z0-9_-]{1,64}$; Cursor: letters,
// digits and underscores, server+tool name at most 60 characters. We use the
// intersection, lower case.
var toolNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func TestToolNamesAndAnnotations(t *testing.T) {
	e := newEnv(t)
	list, err := e.mcp.ListTools(e.ctx, mcp.ListToolsRequest{})
	require.NoError(t, err)
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
		require.Regexp(t, toolNameRE, tool.Name)
		require.LessOrEqual(t, len("walletgate")+len(tool.Name), 60, tool.Name)
		require.NotNil(t, tool.Annotations.ReadOnlyHint, tool.Name)
		require.Equal(t, "object", tool.OutputSchema.Type, "%s declares an outputSchema", tool.Name)
		if *tool.Annotations.ReadOnlyHint {
			require.False(t, *tool.Annotations.DestructiveHint, tool.Name)
		} else {
			require.True(t, *tool.Annotations.DestructiveHint, tool.Name)
		}
	}
	require.Equal(t, map[string]bool{"wallet_address": true, "wallet_balance": true, "wallet_verify_tx": true, "wallet_policy": true, "wallet_send": true,
		"wallet_swap_quote": true, "wallet_swap": true, "wallet_allowance": true, "wallet_approve": true, "wallet_sign_typed_data": true, "wallet_pay_x402": true}, names, "wallet_call is listed only when WALLETGATE_ALLOW_CALLS allows a contract")
}

// Every input schema gives each argument one JSON type: a "type" array
// (["integer", "string"]) is legal JSON Schema, but clients that map tool
// schemas onto a single-type dialect (Gemini's function declarations) drop
// the constraint or the tool, and the MCP Inspector warns about it.
func TestInputSchemasAreSingleTyped(t *testing.T) {
	e := newEnv(t)
	var walk func(tool, path string, v any)
	walk = func(tool, path string, v any) {
		switch n := v.(type) {
		case map[string]any:
			if ty, ok := n["type"]; ok {
				_, single := ty.(string)
				require.True(t, single, "%s: %s has type %v; give it one type", tool, path, ty)
			}
			for k, c := range n {
				walk(tool, path+"."+k, c)
			}
		case []any:
			for i, c := range n {
				walk(tool, fmt.Sprintf("%s[%d]", path, i), c)
			}
		}
	}
	for _, raw := range wireTools(t, e.ctx, e.mcp) {
		var tool struct {
			Name        string `json:"name"`
			InputSchema any    `json:"inputSchema"`
		}
		require.NoError(t, json.Unmarshal(raw, &tool))
		walk(tool.Name, "inputSchema", tool.InputSchema)
	}
}
