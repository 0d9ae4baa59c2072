package tools

// Output schemas derived from the Go types the handlers return, so that the
// schema a client validates against and the JSON walletgate writes cannot
// drift apart. Rules of this file:
//
//   - A result type's fields carry their description in a `jsonschema` tag
//     (google/jsonschema-go reads it), and optionally `enum:"a|b"` or
//     `pattern:"<name of a pattern below>"`, applied here.
//   - Every object is closed (additionalProperties false), every field
//     without omitempty is required, as the generator does.
//   - walletgate never writes null: slices are always made and optional
//     pointers are omitempty, so "null" is taken out of the generated types
//     and a nil that slips through fails the output check instead of
//     passing as an allowed null.
//   - A write tool answers either a preview or a confirm's outcome: oneOf
//     the two, told apart by status.
//   - Each tool has two forms. The strict one (every description, pattern,
//     bound, required list and closed object) is what walletgate checks
//     each answer against before it leaves. The served one, in tools/list,
//     is the strict one relaxed: the same fields, types and enums, and the
//     required list of each result shape's top level (a read's, a
//     preview's, an outcome's); no nested required lists, patterns, bounds
//     or additionalProperties, and a description only where a field's name
//     does not say what a client needs (its `client` tag, short); a field
//     tagged `served:"object"` is served as an object of any shape. What the
//     strict form allows, the served form allows: a client validating
//     against it never refuses what walletgate sent. The strict form was
//     86 KB of a 102 KB list; even without descriptions its nested
//     required lists, patterns and closed objects kept the list above the
//     40 KB budget (TestToolListBudget).
//   - The derivation runs at `go generate ./tools` time, not at start-up
//     (it was most of a cold start): resultSchemas names each tool's
//     derivation, outschema_gen.go holds what they produced, and
//     TestGeneratedOutputSchemasMatchTheTypes fails when the two differ.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

//go:generate go test -run ^TestGeneratedOutputSchemasMatchTheTypes$ -update-schemas .

// resultSchemas derive each tool's output schema from its result types, in
// the form asked for.
var resultSchemas = map[string]func(form) json.RawMessage{
	"wallet_address":   outputSchema[addressResult],
	"wallet_balance":   outputSchema[balanceResult],
	"wallet_verify_tx": outputSchema[verifyResult],
	"wallet_policy":    outputSchema[policyResult],
	quoteTool:          outputSchema[quoteResult],
	allowanceTool:      outputSchema[allowanceResult],
	sendTool:           writeOutputSchema[previewResult],
	swapTool:           writeOutputSchema[swapPreviewResult],
	approveTool:        writeOutputSchema[approvePreviewResult],
	callTool:           writeOutputSchema[callPreviewResult],
	signTypedDataTool:  signOutputSchema[signPreviewResult, signedResult],
	payX402Tool:        signOutputSchema[payPreviewResult, x402Result],
}

// form is which of a tool's two output schemas (see the rules above).
type form bool

const (
	strict form = false // what every answer is checked against
	served form = true  // what tools/list gives clients
)

// resultSchema is tool's strict output schema: as generated from
// resultSchemas, or derived now for a tool the generated file does not know
// yet (a tree the tests have not passed).
func resultSchema(tool string) json.RawMessage { return schemaIn(tool, strict) }

// servedSchema is tool's output schema as tools/list gives it.
func servedSchema(tool string) json.RawMessage { return schemaIn(tool, served) }

// oneChainSchema is tool's served output schema when one chain is served: no
// answer then carries chains, and the list a model is handed does not
// describe them. It is generated too (generatedOneChainSchemas holds the
// tools whose served schema has chains; the others' is the served one):
// taking the property out at start-up was the largest part of a cold
// start's own work (go test -cpuprofile, BENCHMARKS.md).
func oneChainSchema(tool string) json.RawMessage {
	if s, ok := generatedOneChainSchemas[tool]; ok {
		return json.RawMessage(s)
	}
	if _, ok := generatedServedSchemas[tool]; ok {
		return servedSchema(tool)
	}
	return withoutProperty(servedSchema(tool), "chains")
}

func schemaIn(tool string, f form) json.RawMessage {
	generated := generatedSchemas
	if f == served {
		generated = generatedServedSchemas
	}
	if s, ok := generated[tool]; ok {
		return json.RawMessage(s)
	}
	derive, ok := resultSchemas[tool]
	if !ok {
		panic("no output schema for " + tool) // every tool declares one
	}
	return derive(f)
}

// patterns are the named patterns a `pattern` tag may use.
var patterns = map[string]string{
	"address": addressPattern,
	"hash":    hashPattern,
	"amount":  amountPattern,
	"base":    `^[0-9]+$`,
	// calldata: input only (wallet_call)
	"calldata": `^0x([0-9a-fA-F]{2})*$`,
}

// schemaOf derives the strict JSON Schema of T.
func schemaOf[T any]() *jsonschema.Schema { return schemaFor[T](strict) }

// schemaFor derives the JSON Schema of T in form f.
func schemaFor[T any](f form) *jsonschema.Schema {
	t := reflect.TypeFor[T]()
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("output schema of %s: %v", t, err)) // a result type the generator cannot describe is a programming error
	}
	annotate(t, s, f)
	if f == served {
		relax(s, true)
	}
	return s
}

// relax takes out of s, at every depth, what a client does not need to
// read an answer walletgate already checked against the strict form:
// patterns, bounds, closed objects, and the required lists of nested
// objects (a result's own required fields stay: a client can count on
// them, and an empty answer fails). What remains only allows more.
func relax(s *jsonschema.Schema, root bool) {
	if s == nil {
		return
	}
	s.Pattern, s.Minimum, s.Maximum = "", nil, nil
	if !root {
		s.Required = nil
	}
	if ap := s.AdditionalProperties; ap != nil && (ap.Not != nil || reflect.ValueOf(*ap).IsZero()) {
		s.AdditionalProperties = nil // false (closed) or true (the default)
	} else {
		relax(ap, false)
	}
	for _, p := range s.Properties {
		relax(p, false)
	}
	relax(s.Items, false)
	for _, o := range s.OneOf {
		relax(o, false)
	}
}

// annotate applies the enum and pattern tags of t's fields to s and takes
// "null" out of the types (see the rules above); in the served form, a
// field's description is its `client` tag (none without one).
func annotate(t reflect.Type, s *jsonschema.Schema, form form) {
	if s == nil {
		return
	}
	if len(s.Types) > 0 {
		var kept []string
		for _, ty := range s.Types {
			if ty != "null" {
				kept = append(kept, ty)
			}
		}
		if len(kept) == 1 {
			s.Type, s.Types = kept[0], nil
		} else {
			s.Types = kept
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		annotate(t.Elem(), s.Items, form)
	case reflect.Struct:
		fields(t, func(f reflect.StructField, name string) {
			p := s.Properties[name]
			if p == nil {
				return
			}
			if e, ok := f.Tag.Lookup("enum"); ok {
				for _, v := range strings.Split(e, "|") {
					p.Enum = append(p.Enum, v)
				}
			}
			if n, ok := f.Tag.Lookup("pattern"); ok {
				re, known := patterns[n]
				if !known {
					panic("unknown pattern " + n + " on " + t.String() + "." + f.Name)
				}
				p.Pattern = re
			}
			if form == served {
				p.Description = f.Tag.Get("client")
				if f.Tag.Get("served") == "object" {
					// Only its type: the strict form checks its shape,
					// and tools/list has a budget.
					s.Properties[name] = &jsonschema.Schema{Type: "object", Description: p.Description}
					return
				}
			}
			annotate(f.Type, p, form)
		})
	}
}

// fields calls fn for each JSON field of struct t, promoting the fields of
// embedded structs as encoding/json does.
func fields(t reflect.Type, fn func(reflect.StructField, string)) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			fields(f.Type, fn)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fn(f, name)
	}
}

// outputSchema is the wire form of T's schema.
func outputSchema[T any](f form) json.RawMessage {
	return mustJSON(schemaFor[T](f))
}

// unitsNote is a served write schema's one description of what every amount
// is, instead of a description on each.
const unitsNote = "Amounts: decimal strings in the asset's units; raw, *_base: base units."

// writeOutputSchema is a write tool's result: the preview P, or the outcome
// of a confirm.
func writeOutputSchema[P any](f form) json.RawMessage {
	confirm := schemaFor[confirmResult](f)
	return previewOrSchema(f, append([]any{"confirmation_required"}, confirm.Properties["status"].Enum...),
		"a preview (status confirmation_required) or the outcome of a confirm (status confirmed, effect_mismatch, reverted or pending)",
		"confirmation_required: a preview, nothing signed; otherwise the confirm's outcome (see the second shape)",
		"A preview (nothing signed) or an outcome.", schemaFor[P](f), confirm)
}

// signOutputSchema is a signing tool's result: the preview P or the signed
// result R, told apart by status.
func signOutputSchema[P, R any](f form) json.RawMessage {
	return previewOrSchema(f, []any{"confirmation_required", "signed"},
		"a preview (status confirmation_required) or the signature (status signed)",
		"confirmation_required: a preview, nothing signed; signed: the signature",
		"A preview (nothing signed) or the signature.", schemaFor[P](f), schemaFor[R](f))
}

// previewOrSchema is a write tool's result: its preview or what its confirm
// returns, told apart by status, which stands at the top too, for clients
// that read only properties (the Go SDK's Tool type drops a top-level
// oneOf). A served schema says what amounts are once, instead of desc.
func previewOrSchema(f form, statuses []any, desc, statusDesc, servedDesc string, preview, confirmed *jsonschema.Schema) json.RawMessage {
	if f == served {
		desc, statusDesc = servedDesc+" "+unitsNote, ""
	}
	return mustJSON(&jsonschema.Schema{
		Type:        "object",
		Description: desc,
		Properties:  map[string]*jsonschema.Schema{"status": {Type: "string", Enum: statuses, Description: statusDesc}},
		Required:    []string{"status"},
		OneOf:       []*jsonschema.Schema{preview, confirmed},
	})
}
