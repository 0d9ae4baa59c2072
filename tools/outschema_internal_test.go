package tools

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/internal/schemacheck"
)

// An answer its own schema does not allow leaves as an error that keeps the
// words of what happened and withholds the structured content, instead of
// reaching a strict client that would throw and lose both.
func TestInvalidOutputFailsClosedAndKeepsTheText(t *testing.T) {
	set, err := schemacheck.Compile(map[string]json.RawMessage{"wallet_swap": writeOutputSchema[swapPreviewResult]()})
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
