package gate

// Token rules:
//   - A token is "wgc_" followed by 20 bytes (160 bits) from crypto/rand in
//     lowercase RFC 4648 base32 without padding: 36 characters in all, only
//     a-z, 2-7 after the prefix — no 0/O or 1/l pairs for a model to confuse,
//     nothing a JSON string or a shell would escape.
//   - A token is never derived from the arguments it confirms; knowing the
//     arguments (or their fingerprint) tells nothing about the token.
//   - If the random source fails, no token is made: there is no fallback.
//   - Anything that is not exactly that shape is unknown, and only a short
//     prefix of it, in the token alphabet, is ever echoed back.

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"io"
)

const (
	// TokenPrefix starts every confirmation token.
	TokenPrefix = "wgc_"

	tokenBytes = 20                                    // 160 random bits
	tokenLen   = len(TokenPrefix) + (tokenBytes*8+4)/5 // 4 + 32

	// echoLen is how much of an unknown token a message repeats: enough for a
	// person to tell which value was sent, never the whole of it.
	echoLen = 8
)

var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newToken returns a fresh token read from random, or from crypto/rand when
// random is nil.
func newToken(random io.Reader) (string, error) {
	var b [tokenBytes]byte
	var err error
	if random == nil {
		_, err = rand.Read(b[:])
	} else {
		_, err = io.ReadFull(random, b[:])
	}
	if err != nil {
		return "", fmt.Errorf("gate: read random token: %w", err)
	}
	return TokenPrefix + tokenEncoding.EncodeToString(b[:]), nil
}

// wellFormed reports whether s has the exact shape of a token. It looks at
// the length first, so an arbitrarily long input costs nothing.
func wellFormed(s string) bool {
	if len(s) != tokenLen || s[:len(TokenPrefix)] != TokenPrefix {
		return false
	}
	for i := len(TokenPrefix); i < len(s); i++ {
		if !inAlphabet(s[i]) {
			return false
		}
	}
	return true
}

func inAlphabet(c byte) bool { return 'a' <= c && c <= 'z' || '2' <= c && c <= '7' }

// safePrefix returns a quoted, shortened form of a value sent as a token, fit
// to repeat in a message, or "" when the value's start holds characters that
// no token has (so nothing odd is ever echoed into a log or a model's context).
func safePrefix(s string) string {
	if s == "" {
		return ""
	}
	short := s
	if len(short) > echoLen {
		short = short[:echoLen]
	}
	for i := 0; i < len(short); i++ {
		if c := short[i]; !inAlphabet(c) && c != '_' && !('0' <= c && c <= '9') {
			return ""
		}
	}
	if len(s) > len(short) {
		return `"` + short + `…"`
	}
	return `"` + short + `"`
}
