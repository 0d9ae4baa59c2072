package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// Rules of this file: tool arguments are parsed from the raw JSON the client
// sent, never from the map encoding/json built of it, because that map has
// already lost what must be refused: a key given twice (the last silently
// wins), a key in another case ("TO" next to "to"), a number where a decimal
// string is required (a float64 by then). Every argument has one JSON type,
// the one its input schema states: a string, a list of strings, a small
// whole number (a fee tier, basis points) or an object passed through as
// data; anything else is refused before a handler sees it.

// maxArgsBytes bounds a tool call's arguments.
const maxArgsBytes = 16 << 10

// jsonNumberRE is a JSON number literal: safe to repeat in a message as is.
var jsonNumberRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
})

// maxListLen bounds a string-list argument.
const maxListLen = 32

// argKind is the JSON type an argument must have.
type argKind int

const (
	argString argKind = iota
	argStringList
	argUint // a small whole number: a JSON integer (never a string: the schema says integer)
	// argCalls is a list of objects, each parsed by callSpec's rules: the
	// transaction requests a builder returns.
	argCalls
	// argObject is one JSON object passed through as data (typed data, a
	// payment requirement), checked by decodeObject's rules: no key twice
	// or in two letter cases at any depth, bounded depth, whole numbers
	// only (kept exactly, as json.Number).
	argObject
)

// callSpec is one item of an argCalls list.
var callSpec = argSpec{"to": argString, "data": argString, "value": argString}

// builderFields are what builders put in a transaction request that
// walletgate sets itself.
var builderFields = map[string]bool{"from": true, "gas": true, "gaslimit": true, "gasprice": true, "maxfeepergas": true,
	"maxpriorityfeepergas": true, "chainid": true, "nonce": true, "type": true}

// maxCalls bounds an argCalls list.
const maxCalls = 8

// argSpec declares a tool's arguments.
type argSpec map[string]argKind

// args are a call's validated arguments.
type args struct {
	strs  map[string]string
	lists map[string][]string
	calls map[string][]args
	objs  map[string]map[string]any
}

// str returns a string argument and whether it was given.
func (a args) str(name string) (string, bool) {
	s, ok := a.strs[name]
	return s, ok
}

// list returns a string-list argument and whether it was given.
func (a args) list(name string) ([]string, bool) {
	l, ok := a.lists[name]
	return l, ok
}

// callList returns an argCalls argument and whether it was given.
func (a args) callList(name string) ([]args, bool) {
	l, ok := a.calls[name]
	return l, ok
}

// object returns an argObject argument and whether it was given.
func (a args) object(name string) (map[string]any, bool) {
	o, ok := a.objs[name]
	return o, ok
}

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

// parseArgs validates raw against spec. The error is a refusal for the caller.
func parseArgs(raw []byte, spec argSpec) (args, *Refusal) {
	out := args{strs: map[string]string{}, lists: map[string][]string{}, calls: map[string][]args{}, objs: map[string]map[string]any{}}
	if len(raw) > maxArgsBytes {
		return out, refuse(CodeBadArgument, "the arguments are %d bytes; at most %d are accepted", len(raw), maxArgsBytes)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return out, refuse(CodeBadArgument, "the arguments must be a JSON object of named strings; allowed names: %s", spec.names())
	}
	seen := map[string]string{} // lower-case name -> name as sent
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out, refuse(CodeBadArgument, "the arguments are not valid JSON")
		}
		name := tok.(string) // object keys are always strings
		folded := strings.ToLower(name)
		if prev, dup := seen[folded]; dup {
			return out, refuse(CodeBadArgument, "argument %s is given twice (as %s and %s); give each argument once, in lower case", quote(name), quote(prev), quote(name))
		}
		seen[folded] = name
		kind, known := spec[name]
		if !known {
			if _, ok := spec[folded]; ok {
				return out, refuse(CodeBadArgument, "argument %s is not known; argument names are lower case: did you mean %s?", quote(name), quote(folded))
			}
			return out, refuse(CodeBadArgument, "argument %s is not accepted by this tool; allowed: %s", quote(name), spec.names())
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return out, refuse(CodeBadArgument, "argument %s is not valid JSON", quote(name))
		}
		switch kind {
		case argString:
			s, r := decodeString(name, value)
			if r != nil {
				return out, r
			}
			out.strs[name] = s
		case argStringList:
			l, r := decodeStringList(name, value)
			if r != nil {
				return out, r
			}
			out.lists[name] = l
		case argUint:
			u, r := decodeUint(name, value)
			if r != nil {
				return out, r
			}
			out.strs[name] = u
		case argCalls:
			l, r := decodeCalls(name, value)
			if r != nil {
				return out, r
			}
			out.calls[name] = l
		case argObject:
			o, r := decodeObject(name, value)
			if r != nil {
				return out, r
			}
			out.objs[name] = o
		}
	}
	if _, err := dec.Token(); err != nil {
		return out, refuse(CodeBadArgument, "the arguments are not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return out, refuse(CodeBadArgument, "the arguments must be one JSON object")
	}
	return out, nil
}

func decodeString(name string, value json.RawMessage) (string, *Refusal) {
	v := bytes.TrimSpace(value)
	if len(v) == 0 || v[0] != '"' {
		if name == "confirm" {
			return "", refuse(CodeBadArgument, "argument \"confirm\" must be a JSON string, got %s: the preview's confirm_token, or in human mode the person's code as a string, like \"123-456\"", describeJSON(v))
		}
		return "", refuse(CodeBadArgument, "argument %s must be a JSON string, got %s; write amounts and numbers as decimal strings, e.g. \"0.05\"", quote(name), describeJSON(v))
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", refuse(CodeBadArgument, "argument %s is not a valid JSON string", quote(name))
	}
	if !validUTF8NoReplacement(v, s) {
		return "", refuse(CodeBadArgument, "argument %s is not valid UTF-8", quote(name))
	}
	return s, nil
}

// decodeUint accepts a JSON integer such as 500: digits only, at most 9 of
// them, so that no float, exponent or sign form ever reaches a handler. A
// string ("500") is refused like a number where a string is required: one
// argument, one type, the one the schema states.
func decodeUint(name string, value json.RawMessage) (string, *Refusal) {
	v := string(bytes.TrimSpace(value))
	if strings.HasPrefix(v, `"`) {
		return "", refuse(CodeBadArgument, "argument %s must be a JSON number such as 500, got a string (%s); write it without quotes", quote(name), displayInput(v))
	}
	if v == "" || len(v) > 9 || strings.Trim(v, "0123456789") != "" {
		return "", refuse(CodeBadArgument, "argument %s must be a whole number such as 500, got %s", quote(name), describeJSON([]byte(v)))
	}
	return v, nil
}

func decodeStringList(name string, value json.RawMessage) ([]string, *Refusal) {
	var items []json.RawMessage
	if err := json.Unmarshal(value, &items); err != nil {
		return nil, refuse(CodeBadArgument, "argument %s must be a JSON array of strings, got %s", quote(name), describeJSON(bytes.TrimSpace(value)))
	}
	if len(items) > maxListLen {
		return nil, refuse(CodeBadArgument, "argument %s has %d items; at most %d are accepted", quote(name), len(items), maxListLen)
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, r := decodeString(fmt.Sprintf("%s[%d]", name, i), it)
		if r != nil {
			return nil, r
		}
		out = append(out, s)
	}
	return out, nil
}

// validUTF8NoReplacement reports whether decoding did not have to replace
// invalid UTF-8: encoding/json turns it into U+FFFD silently.
func validUTF8NoReplacement(raw []byte, decoded string) bool {
	if !strings.ContainsRune(decoded, '\uFFFD') {
		return true
	}
	// A literal U+FFFD or its \ufffd escape in the input is fine; a
	// replacement the decoder invented is not.
	return bytes.Count(raw, []byte("\uFFFD"))+bytes.Count(bytes.ToLower(raw), []byte(`\ufffd`)) >= strings.Count(decoded, "\uFFFD")
}

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

func (s argSpec) names() string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none (call it with {})"
	}
	return strings.Join(names, ", ")
}

// decodeCalls parses a list of transaction requests, each by the same strict
// rules as a tool's arguments, and explains the fields builders add that
// walletgate sets itself.
func decodeCalls(name string, value json.RawMessage) ([]args, *Refusal) {
	var items []json.RawMessage
	if err := json.Unmarshal(value, &items); err != nil || len(items) == 0 {
		return nil, refuse(CodeBadArgument, "argument %s must be a non-empty JSON array of objects like {\"to\": \"0x…\", \"data\": \"0x…\", \"value\": \"0.01\"}, got %s", quote(name), describeJSON(bytes.TrimSpace(value)))
	}
	if len(items) > maxCalls {
		return nil, refuse(CodeBadArgument, "argument %s has %d calls; at most %d are accepted in one write", quote(name), len(items), maxCalls)
	}
	out := make([]args, 0, len(items))
	for i, it := range items {
		var members map[string]json.RawMessage
		if json.Unmarshal(it, &members) == nil {
			for k := range members {
				if builderFields[strings.ToLower(k)] {
					return nil, refuse(CodeBadArgument, "%s[%d].%s is not accepted: walletgate sets the sender, gas, fees, nonce and chain itself, and simulates each call. From a builder's transaction request pass only to, data and value (ETH as a decimal string, e.g. \"0.01\"; omit it for none)", name, i, quote(k))
				}
			}
		}
		a, r := parseArgs(it, callSpec)
		if r != nil {
			r.Message = fmt.Sprintf("%s[%d]: %s", name, i, r.Message)
			return nil, r
		}
		out = append(out, a)
	}
	return out, nil
}
