package engine

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Inert renders text a contract chose (a token's name or symbol) so that it
// cannot pass for anything else: control, format (bidi overrides, zero-width)
// and other invisible characters become U+FFFD, whitespace runs collapse to one
// space, and the result is bounded. It is still untrusted text: callers mark
// unknown tokens as unverified next to it.
func Inert(s string, max int) string {
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

// maxQuoted bounds how much of a rejected input a message repeats.
const maxQuoted = 80

// Quote makes input safe to repeat in a message: truncated, quoted, with
// every non-printable or non-ASCII character escaped so that look-alikes
// and invisible characters show for what they are.
func Quote(s string) string {
	cut := false
	if len(s) > maxQuoted {
		n := maxQuoted
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s, cut = s[:n], true
	}
	q := strconv.QuoteToASCII(s)
	if cut {
		q += "…"
	}
	return q
}
