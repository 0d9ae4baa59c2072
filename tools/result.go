package tools

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/engine"
)

// Stable refusal codes. A refusal's text starts with one of these followed by
// ": "; clients and scripts match on them, so they never change meaning.
const (
	CodeBadArgument = "BAD_ARGUMENT" // malformed, unknown or duplicate argument
	CodeBadAddress  = "BAD_ADDRESS"  // not 0x + 40 hex, bad EIP-55 checksum, zero address as recipient
	CodeBadAmount   = "BAD_AMOUNT"   // not a decimal string in the one grammar
	CodeBadTx       = "BAD_TX"       // not 0x + 64 hex
	CodeBadToken    = "BAD_TOKEN"    // unknown symbol, or an address that is not an ERC-20 token
	CodeRPC         = "RPC_ERROR"    // the node did not answer usefully
)

// Refusal is a tool call refused with a stable code and a message that says
// what was received, what is allowed and what to do. It is returned to the
// client as a tool result with isError set, never as a JSON-RPC error.
type Refusal = engine.Refusal

func refuse(code, format string, a ...any) *Refusal { return engine.Refuse(code, format, a...) }

// refusalResult turns a refusal into a tool result.
func refusalResult(r *Refusal) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(r.Error())},
		IsError: true,
	}
}

// success is a tool result with structured content and its text rendering.
func success(structured any, text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(text)},
		StructuredContent: structured,
	}
}

// displayInput makes user input safe to repeat in a message (engine.Quote).
func displayInput(s string) string { return engine.Quote(s) }

// quote is displayInput for argument names.
func quote(s string) string { return displayInput(s) }
