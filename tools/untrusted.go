package tools

import (
	"strings"
	"unicode"
)

// maxSymbolDisplay bounds a token symbol or name as walletgate shows it.
const (
	maxSymbolDisplay = 16
	maxNameDisplay   = 48
)

// inert renders text a contract chose (a token's name or symbol) so that it
// cannot pass for anything else: control, format (bidi overrides, zero-width)
// and other invisible characters become U+FFFD, whitespace runs collapse to one
// space, and the result is bounded. It is still untrusted text: callers mark
// unknown tokens as unverified next to it.
func inert(s string, max int) string {
	var b strings.Builder
	space := false
	n := 0
	for _, r := range s {
		if n >= max {
			b.WriteString("…")
			break
		}
		switch {
		case unicode.IsSpace(r):
			if !space && b.Len() > 0 {
				b.WriteRune(' ')
				n++
			}
			space = true
			continue
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Co, r), unicode.Is(unicode.Cs, r), r == unicode.ReplacementChar:
			b.WriteRune(unicode.ReplacementChar)
		default:
			b.WriteRune(r)
		}
		space = false
		n++
	}
	return strings.TrimRight(b.String(), " ")
}

// marked names a token for a line of text: its symbol, followed by
// "(UNVERIFIED)" when the token is not in the known-token table (ETH counts as
// known), so that no line shows a contract-chosen symbol as if it were vetted.
func marked(symbol string, known bool) string {
	if known {
		return symbol
	}
	return symbol + " (UNVERIFIED)"
}

// isASCIIPrintable reports whether s is non-empty printable ASCII without spaces.
func isASCIIPrintable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
