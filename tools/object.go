package tools

// One JSON object passed through a tool as data (EIP-712 typed data, an x402
// payment requirement). Rules of this file: it is read token by token from
// the bytes the client sent, never through encoding/json's map or struct
// decoding, because those lose what a display could be spoofed with — a key
// given twice (the last wins in Go, the first in some other decoders), a key
// in two letter cases (Go's struct decoding matches them alike), a number too
// large for a float64 (silently rounded). So: a key twice, or in two letter
// cases, at any depth, is refused; depth is bounded; numbers must be whole
// and are kept exactly (json.Number; the typed-data reader turns those of
// integer fields into decimal strings, as EIP-712 encoders take them); invalid UTF-8 is refused.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// maxObjectDepth bounds the nesting of an argObject.
const maxObjectDepth = 16

// decodeObject parses an argObject argument.
func decodeObject(name string, value json.RawMessage) (map[string]any, *Refusal) {
	value = bytes.TrimSpace(value)
	if len(value) == 0 || value[0] != '{' {
		return nil, refuse(CodeBadArgument, "argument %s must be a JSON object, got %s", quote(name), describeJSON(value))
	}
	if !utf8.Valid(value) {
		return nil, refuse(CodeBadArgument, "argument %s is not valid UTF-8", quote(name))
	}
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	v, why := readValue(dec, name, 0)
	if why != "" {
		return nil, refuse(CodeBadArgument, "argument %s: %s", quote(name), why)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, refuse(CodeBadArgument, "argument %s must be one JSON object", quote(name))
	}
	return v.(map[string]any), nil
}

// readValue reads one JSON value at path; why is "" or what is wrong.
func readValue(dec *json.Decoder, path string, depth int) (any, string) {
	if depth > maxObjectDepth {
		return nil, path + " nests deeper than " + itoa(maxObjectDepth) + " levels"
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, "not valid JSON"
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			seen := map[string]string{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, "not valid JSON"
				}
				k := kt.(string)
				if prev, dup := seen[strings.ToLower(k)]; dup {
					return nil, path + " has the key " + quote(k) + " twice (as " + quote(prev) + " and " + quote(k) + "): a key given twice could be read one way and shown another, so it is refused; give each key once"
				}
				seen[strings.ToLower(k)] = k
				v, why := readValue(dec, path+"."+k, depth+1)
				if why != "" {
					return nil, why
				}
				obj[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, "not valid JSON"
			}
			return obj, ""
		case '[':
			arr := []any{}
			for dec.More() {
				v, why := readValue(dec, path+"["+itoa(len(arr))+"]", depth+1)
				if why != "" {
					return nil, why
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, "not valid JSON"
			}
			return arr, ""
		}
	case json.Number:
		s := t.String()
		if !wholeNumber(s) {
			return nil, path + " is the number " + displayInput(s) + ": only whole numbers are accepted (give large integers as decimal strings, e.g. \"1000000\")"
		}
		return t, ""
	case string:
		if strings.ContainsRune(t, utf8.RuneError) {
			return nil, path + " contains U+FFFD (invalid or replaced text), which is refused"
		}
		return t, ""
	case bool, nil:
		return t, ""
	}
	return nil, "not valid JSON"
}

// wholeNumber reports whether s is a JSON integer literal without sign,
// exponent or fraction, and without leading zeros.
func wholeNumber(s string) bool {
	if s == "" || len(s) > 78 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s == "0" || s[0] != '0'
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
