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
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Set holds the output schemas of a server's tools, each compiled when
// first needed or all at once (Compile). The zero value knows no tool and
// refuses every check. A Set is safe for concurrent use.
type Set struct {
	schemas map[string]*entry
}

// entry is one tool's schema: its JSON, and the compiled form once asked.
type entry struct {
	raw  json.RawMessage
	once sync.Once
	sch  *jsonschema.Schema
	err  error
}

// compiled compiles the schema the first time, and returns it or why not.
func (e *entry) compiled(name string) (*jsonschema.Schema, error) {
	e.once.Do(func() { e.sch, e.err = compile(name, e.raw) })
	return e.sch, e.err
}

// Compile compiles each tool's output schema (tool name → schema JSON). A
// schema that does not compile is an error: a check must never pass because
// its schema could not be read.
func Compile(schemas map[string]json.RawMessage) (*Set, error) {
	s := Lazy(schemas)
	names := make([]string, 0, len(schemas))
	for n := range schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := s.schemas[name].compiled(name); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Lazy is Compile without compiling: each schema is compiled on its tool's
// first Check (a few ms for a large one, which a server's start need not
// pay for every tool). A schema that does not compile fails every Check of
// its tool.
func Lazy(schemas map[string]json.RawMessage) *Set {
	s := &Set{schemas: make(map[string]*entry, len(schemas))}
	for name, raw := range schemas {
		s.schemas[name] = &entry{raw: raw}
	}
	return s
}

// compile compiles one tool's schema.
func compile(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
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
	return sch, nil
}

// Check reports whether a result of tool (its structuredContent, and whether
// it is an error result) is what the tool's output schema promises. A tool
// the Set does not know fails the check.
func (s *Set) Check(tool string, structured any, isError bool) error {
	e, ok := s.schemas[tool]
	if !ok || e == nil {
		return fmt.Errorf("%s: no output schema known for this tool", tool)
	}
	if structured == nil {
		if isError {
			return nil
		}
		return fmt.Errorf("%s: the tool declares an output schema but the result carries no structuredContent", tool)
	}
	sch, err := e.compiled(tool)
	if err != nil {
		return fmt.Errorf("%s: the output schema does not compile, so no answer can be checked: %w", tool, err)
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
