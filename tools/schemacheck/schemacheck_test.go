package schemacheck_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/tools/schemacheck"
)

const closed = `{"type":"object","properties":{"kind":{"type":"string","enum":["a"]}},"required":["kind"],"additionalProperties":false}`

func TestCheck(t *testing.T) {
	set, err := schemacheck.Compile(map[string]json.RawMessage{"t": json.RawMessage(closed)})
	require.NoError(t, err)
	for name, c := range map[string]struct {
		structured any
		isError    bool
		ok         bool
	}{
		"matches":                      {map[string]any{"kind": "a"}, false, true},
		"enum value not allowed":       {map[string]any{"kind": "b"}, false, false},
		"extra field":                  {map[string]any{"kind": "a", "x": 1}, false, false},
		"error result checked too":     {map[string]any{"kind": "b"}, true, false},
		"error result without content": {nil, true, true},
		"success without content":      {nil, false, false},
		"typed value, encoded as JSON": {struct {
			Kind string `json:"kind"`
		}{"a"}, false, true},
	} {
		t.Run(name, func(t *testing.T) {
			err := set.Check("t", c.structured, c.isError)
			if c.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
	require.Error(t, set.Check("other", map[string]any{"kind": "a"}, false), "an unknown tool fails")
	require.Error(t, (&schemacheck.Set{}).Check("t", map[string]any{"kind": "a"}, false), "the zero Set refuses")
}

func TestCompileRefusesABrokenSchema(t *testing.T) {
	_, err := schemacheck.Compile(map[string]json.RawMessage{"t": json.RawMessage(`{"type":"object","properties":{"a":{"type":"no-such-type"}}}`)})
	require.Error(t, err)
	_, err = schemacheck.Compile(map[string]json.RawMessage{"t": json.RawMessage(`{`)})
	require.Error(t, err)
}

// A lazily compiled Set checks like a compiled one, and a schema that does
// not compile fails every check of its tool that has content to check —
// never passes one.
func TestLazyCompilesOnFirstCheckAndFailsClosed(t *testing.T) {
	set := schemacheck.Lazy(map[string]json.RawMessage{
		"t":      json.RawMessage(closed),
		"broken": json.RawMessage(`{"type":"object","properties":{"a":{"type":"no-such-type"}}}`),
	})
	require.NoError(t, set.Check("t", map[string]any{"kind": "a"}, false))
	require.Error(t, set.Check("t", map[string]any{"kind": "b"}, false))
	for range 2 {
		err := set.Check("broken", map[string]any{"a": 1}, false)
		require.ErrorContains(t, err, "does not compile")
		require.ErrorContains(t, set.Check("broken", map[string]any{"a": 1}, true), "does not compile", "nor an error result with content")
	}
}
