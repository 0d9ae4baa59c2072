package tools

import "encoding/json"

// JSON Schema builders for tool input and output schemas. Schemas are written
// out by hand so that what a client sees is exactly what the strict argument
// parser accepts; a snapshot test catches any accidental change.

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func object(props map[string]any, required ...string) map[string]any {
	o := map[string]any{
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func str(description string) map[string]any {
	return map[string]any{"type": "string", "description": description}
}

func strPattern(description, pattern string) map[string]any {
	return map[string]any{"type": "string", "description": description, "pattern": pattern}
}

func boolean(description string) map[string]any {
	return map[string]any{"type": "boolean", "description": description}
}

func integer(description string) map[string]any {
	return map[string]any{"type": "integer", "minimum": 0, "description": description}
}

func array(description string, items map[string]any) map[string]any {
	return map[string]any{"type": "array", "description": description, "items": items}
}

func enum(description string, values ...string) map[string]any {
	return map[string]any{"type": "string", "description": description, "enum": values}
}

// Patterns shared by schemas.
const (
	addressPattern = `^0x[0-9a-fA-F]{40}$`
	hashPattern    = `^0x[0-9a-fA-F]{64}$`
	amountPattern  = `^[0-9]+(\.[0-9]+)?$`
)

// writeOutputSchema is the result of a write tool: a preview (status
// confirmation_required) or the outcome of a confirm.
func writeOutputSchema() map[string]any {
	effect := object(map[string]any{
		"kind":   enum("what moved", "eth_transfer", "erc20_transfer"),
		"asset":  str("ETH or the token address"),
		"symbol": str("the asset's symbol"),
		"from":   strPattern("sender", addressPattern),
		"to":     strPattern("recipient", addressPattern),
		"amount": str("amount in the asset's units, a decimal string"),
		"raw":    str("amount in base units, a decimal integer string"),
	}, "kind", "asset", "symbol", "from", "to", "amount", "raw")
	preview := map[string]any{
		"type":        "object",
		"description": "the previewed transaction: action, asset, amount (human and base units), sender, recipient and whether it is a contract, network and its marker, nonce, gas limit, max fee, caps after this, simulation outcome, warnings and expected effects",
	}
	return object(map[string]any{
		"status":        enum("confirmation_required (a preview), confirmed (included, effects verified), reverted (included, failed; the fee was spent) or pending (sent, inclusion not seen yet)", "confirmation_required", statusConfirmed, statusRevertedW, statusPendingW),
		"preview":       preview,
		"confirm_token": str("single-use token for confirming exactly this preview (not given in human mode)"),
		"approval": object(map[string]any{
			"id":   str("the preview's id, as the person sees it on the approval page and in walletgate approvals"),
			"mode": enum("who approves", "human"),
			"how":  str("what to do next"),
		}, "id", "mode", "how"),
		"expires_at":    str("when the confirm_token expires (RFC 3339, UTC)"),
		"tx_hash":       strPattern("the transaction hash", hashPattern),
		"block":         integer("the block that includes it"),
		"confirmations": integer("blocks from its block to the head, inclusive"),
		"gas_used":      integer("gas the transaction used"),
		"fee":           str("fee paid in ETH, a decimal string"),
		"nonce":         integer("the transaction's nonce"),
		"effects":       array("on-chain effects verified from the receipt", effect),
		"message":       str("what happened, in words"),
	}, "status")
}
