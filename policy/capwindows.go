package policy

// The window rule: every capped asset has every window. An asset named in
// any of the three cap lists (per transaction, per session, per day; a list
// whose variable is unset is its default) must be named in each of them,
// with an amount or with "unlimited", which says explicitly that the window
// does not limit it. Anything else is refused before walletgate serves,
// naming the asset, the windows it lacks and the item to write: a cap in one
// window alone would leave the others open (WALLETGATE_CAP_PER_TX=USDC=25
// used to give USDC no session or day limit at all). ETH is no exception. An
// asset "unlimited" in every window has no cap, so it is refused too: leave
// it out, and WALLETGATE_ALLOW_UNCAPPED_TOKENS decides.

import (
	"bytes"
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// Unlimited is the cap list amount that says an asset has no limit in that
// list's window.
const Unlimited = "unlimited"

// CapWindowVars are the cap list variables, per transaction, per session and
// per day: the order of every [3] array of windows here.
var CapWindowVars = [3]string{EnvCapPerTx, EnvCapPerSession, EnvCapPerDay}

// AssetWindows is one asset that breaks the window rule.
type AssetWindows struct {
	// Asset is the asset as the operator wrote it first: ETH, a symbol or
	// an address.
	Asset string
	// In lists the variables that name it; Missing those that do not.
	In, Missing []string
	// AllUnlimited: every window says unlimited, so nothing caps it.
	AllUnlimited bool
}

// CapWindowsError refuses cap lists that break the window rule. Assets are
// in address order (ETH first); Lists are the three lists as in force
// (written, or the default of an unset variable) and Set which of them were
// written, so that the message can show the line to write.
type CapWindowsError struct {
	Assets []AssetWindows
	Lists  [3]string
	Set    [3]bool
}

// Error names every asset, the windows it lacks, and each variable's line
// to write.
func (e *CapWindowsError) Error() string {
	var b strings.Builder
	b.WriteString("every capped asset needs a limit in each cap window (per transaction, per session, per day), or \"unlimited\" written for that window: ")
	add := map[string][]string{}
	for i, a := range e.Assets {
		if i > 0 {
			b.WriteString("; ")
		}
		if a.AllUnlimited {
			b.WriteString(a.Asset + " is unlimited in every window, which caps nothing: give it a limit in at least one window, or leave it out of the cap lists (" + EnvAllowUncappedTokens + " decides whether tokens without a cap may be spent)")
			continue
		}
		b.WriteString(a.Asset + " is in " + strings.Join(a.In, " and ") + " but missing from ")
		for j, v := range a.Missing {
			if j > 0 {
				b.WriteString(" and ")
			}
			b.WriteString(v)
			if k := slices.Index(CapWindowVars[:], v); !e.Set[k] {
				b.WriteString(" (not set, so its default " + e.Lists[k] + " applies)")
			}
			add[v] = append(add[v], a.Asset)
		}
	}
	var lines []string
	for k, v := range CapWindowVars {
		assets := add[v]
		if len(assets) == 0 {
			continue
		}
		items := make([]string, len(assets))
		for i, a := range assets {
			items[i] = a + "=<amount>"
		}
		line := v + "=" + strings.Join(items, ",")
		if e.Lists[k] != "" {
			line = v + "=" + e.Lists[k] + "," + strings.Join(items, ",")
		}
		lines = append(lines, line)
	}
	if len(lines) > 0 {
		// The example: a token when one lacks a window (its amount is the
		// operator's to choose), else ETH.
		example, amount := NativeSymbol, "0.1"
		for _, a := range e.Assets {
			if len(a.Missing) > 0 && a.Asset != NativeSymbol {
				example, amount = a.Asset, "100"
				break
			}
		}
		b.WriteString(". Write " + strings.Join(lines, " and ") + ", with an amount for each (like " + example + "=" + amount + "), or " + example + "=" + Unlimited + " in a window that should not limit it")
	}
	return b.String()
}

// ResolveCapWindows resolves the three cap lists — lists[i] as configured,
// nil when its variable is unset, in which case defaults[i] is parsed — on
// one chain (see ResolveCapList) and enforces the window rule. A window's map
// leaves out what it does not limit. Errors are *CapListError (naming the
// variable through its Item's list) wrapped in a *CapWindowListError, or
// *CapWindowsError.
func ResolveCapWindows(lists [3][]CapEntry, defaults [3]string, chainID uint64, decimalsOf func(common.Address) (uint8, error)) ([3]map[common.Address]*big.Int, error) {
	var (
		out   [3]map[common.Address]*big.Int
		named [3]map[common.Address]CapEntry
		werr  CapWindowsError
	)
	for i := range lists {
		entries := lists[i]
		werr.Set[i] = entries != nil
		if entries == nil {
			var err error
			if entries, err = ParseCapList(defaults[i]); err != nil {
				return out, &CapWindowListError{Var: CapWindowVars[i], Default: true, Err: err}
			}
		}
		werr.Lists[i] = formatCapList(entries)
		m, n, err := resolveCapList(entries, chainID, decimalsOf)
		if err != nil {
			return out, &CapWindowListError{Var: CapWindowVars[i], Default: lists[i] == nil, Err: err}
		}
		out[i], named[i] = m, n
	}
	var assets []common.Address
	first := map[common.Address]string{}
	for i := range named {
		for a, e := range named[i] {
			if _, ok := first[a]; !ok { // windows in order: the first that names it
				assets = append(assets, a)
				first[a] = e.Asset
			}
		}
	}
	slices.SortFunc(assets, func(x, y common.Address) int { return bytes.Compare(x[:], y[:]) }) // ETH first
	for _, a := range assets {
		w := AssetWindows{Asset: first[a]}
		limited := false
		for i := range named {
			if _, ok := named[i][a]; ok {
				w.In = append(w.In, CapWindowVars[i])
			} else {
				w.Missing = append(w.Missing, CapWindowVars[i])
			}
			if _, ok := out[i][a]; ok {
				limited = true
			}
		}
		switch {
		case len(w.Missing) > 0:
			werr.Assets = append(werr.Assets, w)
		case !limited:
			w.AllUnlimited = true
			werr.Assets = append(werr.Assets, w)
		}
	}
	if len(werr.Assets) > 0 {
		return out, &werr
	}
	return out, nil
}

// formatCapList writes entries back as a cap list.
func formatCapList(entries []CapEntry) string {
	items := make([]string, len(entries))
	for i, e := range entries {
		items[i] = e.Asset + "=" + e.Amount
		if e.Chain != 0 {
			items[i] = NetworkSlug(e.Chain) + ":" + items[i]
		}
	}
	return strings.Join(items, ",")
}

// CapWindowListError is a cap list of one window that cannot be resolved:
// Var is its variable, Default whether the list is that variable's default.
type CapWindowListError struct {
	Var     string
	Default bool
	Err     error
}

func (e *CapWindowListError) Error() string {
	if e.Default {
		return "default " + e.Var + ": " + e.Err.Error()
	}
	return e.Var + ": " + e.Err.Error()
}

// Unwrap returns the *CapListError.
func (e *CapWindowListError) Unwrap() error { return e.Err }
