package tools

import "encoding/json"

// JSON Schema builders for tool input schemas. They are written out by hand
// so that what a client sees is exactly what the strict argument parser
// accepts (output schemas are derived from the result types: outschema.go);
// a snapshot test catches any accidental change.

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
