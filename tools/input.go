package tools

// A tool's arguments are one Go struct: its input schema is derived from it
// (as output schemas are from the result types) and one strict decoder fills
// it. Rules of this file:
//
//   - Decoding is json/v2's (github.com/go-json-experiment/json, the module
//     encoding/json/v2 came from; the standard library's needs
//     GOEXPERIMENT=jsonv2 in Go 1.26): a key given twice is refused, keys
//     match case-sensitively, unknown keys are refused, a number is never a
//     string (nor a string a number), invalid UTF-8 is refused. No JSON is
//     parsed by hand here; refusals only put v2's error into words.
//   - An argument is *string (a string; nil when absent or null), []string,
//     *uint32 (a small whole number: a JSON integer), a slice of an argument
//     struct, or jsontext.Value (one object passed through as data, read by
//     decodeObject's rules). A field without omitempty is required in the
//     schema; its absence reaches the handler as nil, which refuses it with
//     its own code.
//   - Tags: `jsonschema` is the description, `pattern` a named pattern
//     (outschema.go), `enum` integer values, `maximum`, `items:"min-max"`.
//     A write's `confirm` description is the server's (confirmDescription).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
)

// maxArgsBytes bounds a tool call's arguments.
const maxArgsBytes = 16 << 10

// maxListLen bounds a list argument whose field has no items tag.
const maxListLen = 32

// confirmArg is every write tool's confirm argument.
type confirmArg struct {
	Confirm *string `json:"confirm,omitempty"`
}

// confirmToken returns the confirm argument and whether it was given.
func (c confirmArg) confirmToken() (string, bool) {
	if c.Confirm == nil {
		return "", false
	}
	return *c.Confirm, true
}

// confirmer is a write tool's arguments: they carry confirmArg.
type confirmer interface{ confirmToken() (string, bool) }

// deref is an optional string argument's value ("" when absent).
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// networkArg is every tool's network argument: the chain the call is for
// (chains.go routes it there); absent, the default chain.
type networkArg struct {
	Network *string `json:"network,omitempty" jsonschema:"the chain (a chain id or a name); default: the default chain"`
}

// noArgs are the arguments of a tool that takes none but its network.
type noArgs struct{ networkArg }

// builderFields are what builders put in a transaction request that
// walletgate sets itself.
var builderFields = map[string]bool{"from": true, "gas": true, "gaslimit": true, "gasprice": true, "maxfeepergas": true,
	"maxpriorityfeepergas": true, "chainid": true, "nonce": true, "type": true}

var textValueType = reflect.TypeFor[jsontext.Value]()

// rawArguments returns the bytes of a call's arguments as the client sent
// them (stdio, HTTP) or as an in-process client built them.
func rawArguments(req mcp.CallToolRequest) ([]byte, error) {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments, nil
	}
	if req.Params.Arguments == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(req.Params.Arguments)
}

// decodeArgs decodes raw strictly into A. The refusal is for the caller.
func decodeArgs[A any](raw []byte) (A, *Refusal) {
	var a A
	if len(raw) > maxArgsBytes {
		return a, refuse(CodeBadArgument, "the arguments are %d bytes; at most %d are accepted", len(raw), maxArgsBytes)
	}
	t := reflect.TypeFor[A]()
	if v := strings.TrimSpace(string(raw)); v == "" || v == "null" {
		raw = []byte("{}")
	} else if v[0] != '{' {
		return a, refuse(CodeBadArgument, "the arguments must be a JSON object of named strings; allowed names: %s", argNames(t))
	}
	if err := jsonv2.Unmarshal(raw, &a, jsonv2.RejectUnknownMembers(true)); err != nil {
		return a, argRefusal(t, raw, err)
	}
	if where, ok := nullArgument(t, raw); ok {
		return a, refuse(CodeBadArgument, "argument %s is null, which its input schema does not allow: leave it out (when it is optional) or give a value of its type", quote(where))
	}
	if r := checkArgs(reflect.ValueOf(a), ""); r != nil {
		return a, r
	}
	return a, nil
}

// nullArgument names the first argument given as JSON null, outside an
// object passed as data (whose rules are decodeObject's). json/v2 reads a
// null as "absent"; the input schemas allow none, so a null is refused
// rather than taken for a default.
func nullArgument(t reflect.Type, raw []byte) (string, bool) {
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", false
	}
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return "", false
		}
		name := tok.String()
		if f, ok := argField(t, name); ok && f.Type == textValueType {
			if d.SkipValue() != nil {
				return "", false
			}
			continue
		}
		v, err := d.ReadValue()
		if err != nil {
			return "", false
		}
		inner := jsontext.NewDecoder(bytes.NewReader(v))
		for {
			tok, err := inner.ReadToken()
			if err != nil {
				break
			}
			if tok.Kind() != 'n' {
				continue
			}
			where := name
			for part := range inner.StackPointer().Tokens() {
				if _, err := strconv.Atoi(part); err == nil {
					where += "[" + part + "]"
				} else {
					where += "." + part
				}
			}
			return where, true
		}
	}
	return "", false
}

// argRefusal puts a decoding error into words: which argument, what was
// received, what is allowed.
func argRefusal(t reflect.Type, raw []byte, err error) *Refusal {
	var sem *jsonv2.SemanticError
	var syn *jsontext.SyntacticError
	var ptr jsontext.Pointer
	switch {
	case errors.As(err, &sem):
		ptr = sem.JSONPointer
	case errors.As(err, &syn):
		ptr = syn.JSONPointer
	}
	tokens := []string{}
	for tok := range ptr.Tokens() {
		tokens = append(tokens, tok)
	}
	if len(tokens) == 0 {
		return refuse(CodeBadArgument, "the arguments are not one JSON object of valid UTF-8")
	}
	// Walk the pointer: where names the member as a person writes it
	// (calls[0].to), parent is the struct holding it, leaf its type.
	where, parent, leaf := "", t, t
	for _, tok := range tokens {
		if leaf == textValueType {
			where += "." + tok // inside an object passed as data
			continue
		}
		if leaf.Kind() == reflect.Slice {
			where += "[" + tok + "]"
			leaf = leaf.Elem()
			continue
		}
		if where != "" {
			where += "."
		}
		where += tok
		parent = leaf
		f, ok := argField(leaf, tok)
		if !ok {
			leaf = nil
			break
		}
		leaf = f.Type
		for leaf.Kind() == reflect.Pointer {
			leaf = leaf.Elem()
		}
	}
	name := tokens[len(tokens)-1]
	path := strings.TrimSuffix(where, name)
	switch {
	case syn != nil && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return refuse(CodeBadArgument, "argument %s is given twice; give each argument once, in lower case", quote(where))
	case syn != nil:
		return refuse(CodeBadArgument, "argument %s is not valid JSON or not valid UTF-8", quote(where))
	case errors.Is(sem.Err, jsonv2.ErrUnknownName):
		if parent == reflect.TypeFor[callArgs]() && builderFields[strings.ToLower(name)] {
			return refuse(CodeBadArgument, "%s is not accepted: walletgate sets the sender, gas, fees, nonce and chain itself, and simulates each call. From a builder's transaction request pass only to, data and value (ETH as a decimal string, e.g. \"0.01\"; omit it for none)", quote(where))
		}
		if _, ok := argField(parent, strings.ToLower(name)); ok {
			return refuse(CodeBadArgument, "argument %s is not known; argument names are lower case: did you mean %s?", quote(where), quote(path+strings.ToLower(name)))
		}
		return refuse(CodeBadArgument, "argument %s is not accepted by this tool; allowed: %s", quote(where), argNames(parent))
	}
	// What was given, read where v2 stopped (it keeps only strings and numbers).
	value := []byte(sem.JSONValue)
	if sem.ByteOffset < int64(len(raw)) {
		if v, err := jsontext.NewDecoder(bytes.NewReader(raw[sem.ByteOffset:])).ReadValue(); err == nil {
			value = v
		}
	}
	got, want := describeJSON(value), leaf
	switch {
	case where == "confirm":
		return refuse(CodeBadArgument, "argument \"confirm\" must be a JSON string, got %s: the preview's confirm_token, or in human mode the person's code as a string, like \"123-456\"", got)
	case want == textValueType:
		return refuse(CodeBadArgument, "argument %s must be a JSON object, got %s", quote(where), got)
	case want != nil && want.Kind() == reflect.Slice && want.Elem().Kind() == reflect.String:
		return refuse(CodeBadArgument, "argument %s must be a JSON array of strings, got %s", quote(where), got)
	case want != nil && want.Kind() == reflect.Slice:
		return refuse(CodeBadArgument, "argument %s must be a non-empty JSON array of objects like {\"to\": \"0x…\", \"data\": \"0x…\", \"value\": \"0.01\"}, got %s", quote(where), got)
	case want != nil && want.Kind() == reflect.Uint32:
		if sem.JSONKind == '"' {
			return refuse(CodeBadArgument, "argument %s must be a JSON number such as 500, got a string (%s); write it without quotes", quote(where), displayInput(string(value)))
		}
		return refuse(CodeBadArgument, "argument %s must be a whole number such as 500, got %s", quote(where), got)
	}
	return refuse(CodeBadArgument, "argument %s must be a JSON string, got %s; write amounts and numbers as decimal strings, e.g. \"0.05\"", quote(where), got)
}

// checkArgs applies the bounds the types do not carry: list lengths, and
// the rules of a passed-through object.
func checkArgs(v reflect.Value, path string) (bad *Refusal) {
	argFields(v.Type(), func(f reflect.StructField, name string) {
		fv, where := v.FieldByIndex(f.Index), path+name
		if bad != nil {
			return
		}
		switch {
		case f.Type == textValueType:
			if fv.Len() > 0 {
				_, bad = decodeObject(where, json.RawMessage(fv.Bytes()))
			}
		case f.Type.Kind() == reflect.Slice:
			lo, hi := itemBounds(f)
			if hi == 0 {
				hi = maxListLen
			}
			if fv.Len() > hi {
				bad = refuse(CodeBadArgument, "argument %s has %d items; at most %d are accepted", quote(where), fv.Len(), hi)
				return
			}
			if !fv.IsNil() && fv.Len() < lo {
				bad = refuse(CodeBadArgument, "argument %s must be a non-empty JSON array, got an empty one", quote(where))
				return
			}
			if f.Type.Elem().Kind() == reflect.Struct {
				for k := range fv.Len() {
					if bad = checkArgs(fv.Index(k), fmt.Sprintf("%s[%d].", where, k)); bad != nil {
						return
					}
				}
			}
		}
	})
	return bad
}

// itemBounds reads an `items:"min-max"` tag.
func itemBounds(f reflect.StructField) (lo, hi int) {
	a, b, _ := strings.Cut(f.Tag.Get("items"), "-")
	lo, _ = strconv.Atoi(a)
	hi, _ = strconv.Atoi(b)
	return lo, hi
}

// argFields calls fn for each argument of struct t, embedded structs'
// promoted (f.Index is the path from t).
func argFields(t reflect.Type, fn func(f reflect.StructField, name string)) {
	if t.Kind() != reflect.Struct {
		return
	}
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || !f.IsExported() || name == "" || name == "-" {
			continue
		}
		fn(f, name)
	}
}

// argField finds struct t's argument named name (case-exact).
func argField(t reflect.Type, name string) (reflect.StructField, bool) {
	var found reflect.StructField
	ok := false
	argFields(t, func(f reflect.StructField, n string) {
		if n == name {
			found, ok = f, true
		}
	})
	return found, ok
}

// argNames lists struct t's arguments for a refusal.
func argNames(t reflect.Type) string {
	var names []string
	argFields(t, func(_ reflect.StructField, n string) { names = append(names, n) })
	if len(names) == 0 {
		return "none (call it with {})"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// inputSchema derives A's input schema; confirm (when A has one) is
// described by the server's confirmation mode.
func inputSchema[A any](confirm, network string) json.RawMessage {
	t := reflect.TypeFor[A]()
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", t, err)) // an argument type the generator cannot describe is a programming error
	}
	if len(s.Properties) == 0 {
		// The generator leaves an empty properties out; some clients
		// (OpenAI's function calling) require it on every object.
		return json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	}
	inputAnnotate(t, s)
	if p := s.Properties["confirm"]; p != nil {
		p.Description = confirm
	}
	if network == "" {
		// One chain: the network argument is accepted (and refused when
		// it names another chain) but not offered, and costs the model's
		// context nothing.
		delete(s.Properties, "network")
		s.PropertyOrder = slices.DeleteFunc(s.PropertyOrder, func(n string) bool { return n == "network" })
	} else if p := s.Properties["network"]; p != nil {
		p.Description = network
	}
	if len(s.Properties) == 0 {
		return json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	}
	return json.RawMessage(strings.ReplaceAll(string(mustJSON(s)), "{capped}", capped))
}

// inputAnnotate applies the tags of t's fields to s (see the rules above).
func inputAnnotate(t reflect.Type, s *jsonschema.Schema) {
	annotate(t, s, strict)
	argFields(t, func(f reflect.StructField, name string) {
		p := s.Properties[name]
		if f.Type == textValueType {
			*p = jsonschema.Schema{Type: "object", Description: p.Description}
			return
		}
		p.Maximum = nil
		if e, ok := f.Tag.Lookup("enum"); ok {
			p.Enum, p.Minimum = nil, nil
			for _, v := range strings.Split(e, "|") {
				n, _ := strconv.Atoi(v)
				p.Enum = append(p.Enum, n)
			}
		}
		if m, ok := f.Tag.Lookup("maximum"); ok {
			n, _ := strconv.ParseFloat(m, 64)
			p.Maximum = &n
		}
		if lo, hi := itemBounds(f); hi > 0 {
			p.MinItems, p.MaxItems = &lo, &hi
		}
		if p.Items != nil && p.Items.Type == "object" {
			inputAnnotate(f.Type.Elem(), p.Items)
		}
	})
}

// typedHandler is a tool body over its typed arguments.
type typedHandler[A any] func(context.Context, A) (*mcp.CallToolResult, *Refusal)

// runner decodes a call's raw arguments and runs h; bad reports a refusal
// of the arguments themselves (nothing reached h).
type runner func(ctx context.Context, raw []byte) (res *mcp.CallToolResult, ref *Refusal, bad bool)

func (h typedHandler[A]) run(ctx context.Context, raw []byte) (*mcp.CallToolResult, *Refusal, bool) {
	a, ref := decodeArgs[A](raw)
	if ref != nil {
		return nil, ref, true
	}
	res, ref := h(ctx, a)
	return res, ref, false
}

// jsonNumberRE is a JSON number literal: safe to repeat in a message as is.
var jsonNumberRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
})

// describeJSON names the JSON type of v for an error message.
func describeJSON(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '"':
		return "a string"
	default:
		if len(v) <= 40 && jsonNumberRE().Match(v) {
			return "the number " + string(v)
		}
		return "a number"
	}
}
