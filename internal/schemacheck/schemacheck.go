// Package schemacheck checks tool results against the output schemas their
// tools declare, the way strict MCP clients do (the official TypeScript SDK
// validates every structuredContent with ajv and throws on a mismatch, even
// when the action behind it succeeded).
//
// Rules, as those clients apply them: a tool that declares an output schema
// must return structuredContent unless the result is an error, and any
// structuredContent present — on an error result too — must match.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Set holds the compiled output schemas of a server's tools. The zero value
// knows no tool and refuses every check. A Set is safe for concurrent use.
type Set struct {
	schemas map[string]*jsonschema.Schema
}

// Compile compiles each tool's output schema (tool name → schema JSON). A
// schema that does not compile is an error: a check must never pass because
// its schema could not be read.
func Compile(schemas map[string]json.RawMessage) (*Set, error) {
	s := &Set{schemas: map[string]*jsonschema.Schema{}}
	names := make([]string, 0, len(schemas))
	for n := range schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas[name]))
		if err != nil {
			return nil, fmt.Errorf("output schema of %s: %w", name, err)
		}
		c := jsonschema.NewCompiler()
		url := "mem://walletgate/" + name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("output schema of %s: %w", name, err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("output schema of %s: %w", name, err)
		}
		s.schemas[name] = sch
	}
	return s, nil
}

// Check reports whether a result of tool (its structuredContent, and whether
// it is an error result) is what the tool's output schema promises. A tool
// the Set does not know fails the check.
func (s *Set) Check(tool string, structured any, isError bool) error {
	sch, ok := s.schemas[tool]
	if !ok || sch == nil {
		return fmt.Errorf("%s: no output schema known for this tool", tool)
	}
	if structured == nil {
		if isError {
			return nil
		}
		return fmt.Errorf("%s: the tool declares an output schema but the result carries no structuredContent", tool)
	}
	b, err := json.Marshal(structured)
	if err != nil {
		return fmt.Errorf("%s: structuredContent does not encode: %w", tool, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: structuredContent does not decode: %w", tool, err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("%s: structuredContent does not match the output schema: %w", tool, err)
	}
	return nil
}

// Known reports whether the Set has a schema for tool.
func (s *Set) Known(tool string) bool {
	_, ok := s.schemas[tool]
	return ok
}
