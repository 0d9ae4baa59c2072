package policy

import (
	"strconv"
	"unicode/utf8"
)

// maxDisplay is how many bytes of a rejected input an error message shows.
const maxDisplay = 64

// display makes s safe to print inside double quotes in an error message: it
// keeps at most max bytes (cut on a rune boundary, then marked with "…") and
// escapes everything that is not printable ASCII the way Go escapes strings
// (\n, \x00, \u202e, \uff11). Escaping all non-ASCII shows look-alike and
// invisible characters for what they are. The result has no surrounding quotes.
func display(s string, max int) string {
	truncated := false
	if len(s) > max {
		cut := max
		// Back off at most utf8.UTFMax-1 bytes so a cut never splits a rune.
		for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
			cut--
		}
		s = s[:cut]
		truncated = true
	}
	q := strconv.QuoteToASCII(s)
	q = q[1 : len(q)-1]
	if truncated {
		q += "…"
	}
	return q
}
