package tools

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/tools/schemacheck"
)

// An answer its own schema does not allow leaves as an error that keeps the
// words of what happened and withholds the structured content, instead of
// reaching a strict client that would throw and lose both.
func TestInvalidOutputFailsClosedAndKeepsTheText(t *testing.T) {
	set, err := schemacheck.Compile(map[string]json.RawMessage{"wallet_swap": writeOutputSchema[swapPreviewResult](strict)})
	require.NoError(t, err)
	bad := confirmResult{Status: statusConfirmed, TxHash: "0x" + strings.Repeat("a", 64), Effects: []effectJSON{{Kind: "swap_sideways"}}}
	checkErr := set.Check("wallet_swap", bad, false)
	require.Error(t, checkErr)
	s := &Server{log: slog.New(slog.DiscardHandler)}
	res := s.invalidOutput(success(bad, "CONFIRMED: transaction 0xaaaa included"), checkErr)
	require.True(t, res.IsError)
	require.Nil(t, res.StructuredContent)
	text := res.Content[0].(mcp.TextContent).Text
	require.True(t, strings.HasPrefix(text, CodeOutputInvalid+": "), text)
	require.Contains(t, text, "CONFIRMED: transaction 0xaaaa included")
	require.NoError(t, set.Check("wallet_swap", res.StructuredContent, res.IsError), "the replacement passes a strict client")
}

// Every status a confirm can report is one its schema allows, and
// effect_mismatch is never reported as confirmed.
func TestConfirmStatusesInSchema(t *testing.T) {
	enum := schemaOf[confirmResult]().Properties["status"].Enum
	require.ElementsMatch(t, []any{statusConfirmed, statusMismatch, statusRevertedW, statusPendingW, string(engine.StatusIncomplete)}, enum)
	legs := schemaOf[legOutcomeJSON]().Properties["status"].Enum
	require.ElementsMatch(t, []any{engine.LegIncluded, engine.LegReverted, engine.LegPending, engine.LegNotSent}, legs)
	kinds := schemaOf[effectJSON]().Properties["kind"].Enum
	require.ElementsMatch(t, []any{engine.MovedETH, engine.MovedERC20, engine.MovedSwapIn, engine.MovedSwapOut, engine.MovedApproval}, kinds)
}

// The served output schemas are the strict ones relaxed, never changed: at
// every depth the same fields with the same types and enums, so a client
// validating an answer against the served schema accepts everything the
// strict check let through. Only descriptions, patterns, bounds, required
// lists (but the root's status) and closed objects go.
func TestServedSchemasKeepEveryFieldAndType(t *testing.T) {
	var same func(tool, path string, strict, served map[string]any)
	same = func(tool, path string, strict, served map[string]any) {
		for _, k := range []string{"type", "enum"} {
			require.Equal(t, strict[k], served[k], "%s %s: %s", tool, path, k)
		}
		for _, k := range []string{"pattern", "minimum", "maximum"} {
			require.NotContains(t, served, k, "%s %s", tool, path)
		}
		if ap, ok := served["additionalProperties"]; ok {
			require.Equal(t, strict["additionalProperties"], ap, "%s %s: only a typed additionalProperties stays", tool, path)
			require.IsType(t, map[string]any{}, ap, "%s %s", tool, path)
		}
		sp, _ := strict["properties"].(map[string]any)
		vp, _ := served["properties"].(map[string]any)
		if _, has := served["properties"]; !has && strings.HasSuffix(path, ".usd") {
			// served:"object": served as an object of any shape, which
			// accepts whatever the strict form allows (the budget).
			return
		}
		require.Len(t, vp, len(sp), "%s %s: the same fields", tool, path)
		for name, s := range sp {
			require.Contains(t, vp, name, "%s %s", tool, path)
			same(tool, path+"."+name, s.(map[string]any), vp[name].(map[string]any))
		}
		if s, ok := strict["items"].(map[string]any); ok {
			same(tool, path+"[]", s, served["items"].(map[string]any))
		}
		so, _ := strict["oneOf"].([]any)
		vo, _ := served["oneOf"].([]any)
		require.Len(t, vo, len(so), "%s %s: oneOf", tool, path)
		for i := range so {
			same(tool, fmt.Sprintf("%s.oneOf[%d]", path, i), so[i].(map[string]any), vo[i].(map[string]any))
		}
	}
	for tool := range resultSchemas {
		var strict, served map[string]any
		require.NoError(t, json.Unmarshal(resultSchema(tool), &strict))
		require.NoError(t, json.Unmarshal(servedSchema(tool), &served))
		same(tool, "", strict, served)
		if _, oneOf := strict["oneOf"]; oneOf {
			require.Equal(t, []any{"status"}, served["required"], "%s: status tells a preview from an outcome", tool)
		}
		require.Less(t, len(servedSchema(tool)), len(resultSchema(tool)), tool)
	}
}
