package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"reflect"
	"regexp"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// args is the by-name view of a tool's typed arguments (strings, small
// numbers and objects), for the parsers not yet written over their struct
// (swap, sign, x402: the lanes moving them rewrite them): built from the
// struct decodeArgs filled, never parsed on its own.
type args struct {
	strs map[string]string
	objs map[string]map[string]any
}

// untyped runs a handler written over args on A's decoded arguments.
func untyped[A any](h func(ctx context.Context, a args) (*mcp.CallToolResult, *Refusal)) typedHandler[A] {
	return func(ctx context.Context, a A) (*mcp.CallToolResult, *Refusal) {
		return h(ctx, argsOf(reflect.ValueOf(a)))
	}
}

// argsOf builds the by-name view of a decoded argument struct.
func argsOf(v reflect.Value) args {
	out := args{strs: map[string]string{}, objs: map[string]map[string]any{}}
	argFields(v.Type(), func(f reflect.StructField, name string) {
		fv := v.FieldByIndex(f.Index)
		switch {
		case f.Type == textValueType:
			if fv.Len() > 0 {
				o, _ := decodeObject(name, []byte(fv.Interface().(jsontext.Value))) // checked by checkArgs
				out.objs[name] = o
			}
		case fv.Kind() == reflect.Pointer:
			if fv.IsNil() {
				return
			}
			if e := fv.Elem(); e.Kind() == reflect.String {
				out.strs[name] = e.String()
			} else {
				out.strs[name] = strconv.FormatUint(e.Uint(), 10)
			}
		}
	})
	return out
}

// str returns a string argument and whether it was given.
func (a args) str(name string) (string, bool) {
	s, ok := a.strs[name]
	return s, ok
}

// object returns an object argument and whether it was given.
func (a args) object(name string) (map[string]any, bool) {
	o, ok := a.objs[name]
	return o, ok
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
