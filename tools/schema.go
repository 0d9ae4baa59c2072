package tools

import "encoding/json"

// Input schemas are derived from the argument structs (input.go), output
// schemas from the result types (outschema.go); a snapshot test catches any
// accidental change.

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Patterns shared by schemas.
const (
	addressPattern = `^0x[0-9a-fA-F]{40}$`
	hashPattern    = `^0x[0-9a-fA-F]{64}$`
	amountPattern  = `^[0-9]+(\.[0-9]+)?$`
)
