package tools

import (
	"github.com/walletgate/walletgate/engine"
)

// maxSymbolDisplay bounds a token symbol or name as walletgate shows it.
const (
	maxSymbolDisplay = 16
	maxNameDisplay   = 48
)

// inert renders text a contract chose so that it cannot pass for anything
// else (engine.Inert).
func inert(s string, max int) string { return engine.Inert(s, max) }

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
