package caps

// The caps in force, as hosts sharing one wallet compare them. Rules: the
// canonical form is JSON with sorted keys, per window each capped asset by
// address (lower-case hex; ETH is "eth") with its cap in base units and the
// asset's decimals (for messages only; the same token has the same
// decimals on every host), and whether uncapped assets are allowed. Two
// hosts enforce the same caps exactly when their forms are equal. A window
// that does not cap an asset leaves it out: unlimited there.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/policy"
)

// CodeCapsDiffer: this host's caps differ from the caps in force for the
// wallet in the shared state, so it writes nothing.
const CodeCapsDiffer = "CAPS_DIFFER"

// canonicalVersion is the version of the canonical form.
const canonicalVersion = 1

// canonical is the canonical form's JSON.
type canonical struct {
	V             int                          `json:"v"`
	AllowUncapped bool                         `json:"allow_uncapped"`
	Decimals      map[string]uint8             `json:"decimals"`
	Windows       map[string]map[string]string `json:"windows"` // window key → asset → cap in base units
}

// windowKeys are the canonical form's window names, in window order.
var windowKeys = map[Window]string{PerTx: "per_tx", PerSession: "per_session", PerDay: "per_day"}

// canonicalAsset is an asset's key in the canonical form.
func canonicalAsset(a common.Address) string {
	if a == policy.NativeAsset {
		return "eth"
	}
	return strings.ToLower(a.Hex())
}

// Canonical returns the canonical form of l with allowUncapped; decimals
// gives each asset's decimals (nil: 18 for ETH, 0 otherwise).
func Canonical(l Limits, allowUncapped bool, decimals func(common.Address) uint8) string {
	c := canonical{V: canonicalVersion, AllowUncapped: allowUncapped, Decimals: map[string]uint8{}, Windows: map[string]map[string]string{}}
	for _, w := range windows {
		m := map[string]string{}
		for a, v := range l.window(w) {
			if v == nil || v.Sign() < 0 {
				v = new(big.Int) // as NewLedger reads it
			}
			m[canonicalAsset(a)] = v.String()
			d := uint8(0)
			switch {
			case decimals != nil:
				d = decimals(a)
			case a == policy.NativeAsset:
				d = 18
			}
			c.Decimals[canonicalAsset(a)] = d
		}
		c.Windows[windowKeys[w]] = m
	}
	b, _ := json.Marshal(c) // maps marshal with sorted keys
	return string(b)
}

// LimitDiff is one cap that two canonical forms do not share. Asset is the
// asset's address (ETH: policy.NativeAsset); Theirs and Ours are its caps in
// Window (nil: unlimited there, or uncapped); Decimals renders them.
type LimitDiff struct {
	Window       Window
	Asset        common.Address
	Theirs, Ours *big.Int
	Decimals     uint8
}

// MismatchError is a host whose caps differ from the caps in force for its
// wallet in the shared state: it refuses every write, and Diffs say what
// differs. Where names the shared state (host only).
type MismatchError struct {
	Where string
	// Diffs are in window order, then ETH first and tokens by address.
	Diffs []LimitDiff
	// Uncapped is set when the two differ in allowing uncapped assets;
	// TheirsUncapped is the shared state's setting.
	Uncapped, TheirsUncapped bool
	// Unreadable is set when the stored form cannot be read (a newer
	// walletgate's, or damaged): every cap counts as different.
	Unreadable bool
}

// Error lists the differences, in the assets' units.
func (e *MismatchError) Error() string {
	var parts []string
	if e.Unreadable {
		parts = append(parts, "the caps stored there cannot be read")
	}
	for _, d := range e.Diffs {
		parts = append(parts, fmt.Sprintf("%s %s: %s there, %s here", d.Window, assetName(d.Asset), FormatLimit(d.Theirs, d.Decimals), FormatLimit(d.Ours, d.Decimals)))
	}
	if e.Uncapped {
		parts = append(parts, fmt.Sprintf("uncapped assets allowed: %v there, %v here", e.TheirsUncapped, !e.TheirsUncapped))
	}
	return "this host's caps differ from the caps in force for the wallet in the shared state " + e.Where + ": " + strings.Join(parts, "; ")
}

// FormatLimit renders a cap of LimitDiff in its asset's units, or
// "unlimited" for nil.
func FormatLimit(v *big.Int, decimals uint8) string {
	if v == nil {
		return "unlimited"
	}
	return policy.FormatAmount(v, decimals)
}

// Compare returns nil when the canonical forms theirs (the shared state's)
// and ours are the same caps, or the *MismatchError listing what differs.
func Compare(theirs, ours, where string) error {
	if theirs == ours {
		return nil
	}
	var t, o canonical
	if err := json.Unmarshal([]byte(ours), &o); err != nil || o.V != canonicalVersion {
		return &MismatchError{Where: where, Unreadable: true}
	}
	if err := json.Unmarshal([]byte(theirs), &t); err != nil || t.V != canonicalVersion {
		return &MismatchError{Where: where, Unreadable: true}
	}
	e := &MismatchError{Where: where}
	if t.AllowUncapped != o.AllowUncapped {
		e.Uncapped, e.TheirsUncapped = true, t.AllowUncapped
	}
	for _, w := range windows {
		tw, ow := t.Windows[windowKeys[w]], o.Windows[windowKeys[w]]
		var keys []string
		for k := range tw {
			keys = append(keys, k)
		}
		for k := range ow {
			if _, ok := tw[k]; !ok {
				keys = append(keys, k)
			}
		}
		var diffs []LimitDiff
		for _, k := range keys {
			tv, tok := tw[k]
			ov, ook := ow[k]
			if tok && ook && tv == ov {
				continue
			}
			a, ok := parseCanonicalAsset(k)
			if !ok {
				return &MismatchError{Where: where, Unreadable: true}
			}
			d := LimitDiff{Window: w, Asset: a, Theirs: parseBase(tv, tok), Ours: parseBase(ov, ook), Decimals: o.Decimals[k]}
			if !ook {
				d.Decimals = t.Decimals[k]
			}
			diffs = append(diffs, d)
		}
		slices.SortFunc(diffs, func(a, b LimitDiff) int { return strings.Compare(canonicalOrder(a.Asset), canonicalOrder(b.Asset)) })
		e.Diffs = append(e.Diffs, diffs...)
	}
	if len(e.Diffs) == 0 && !e.Uncapped {
		return nil // the same caps written differently (decimals only)
	}
	return e
}

// canonicalOrder sorts ETH first, then tokens by address.
func canonicalOrder(a common.Address) string {
	if a == policy.NativeAsset {
		return ""
	}
	return strings.ToLower(a.Hex())
}

func parseCanonicalAsset(k string) (common.Address, bool) {
	if k == "eth" {
		return policy.NativeAsset, true
	}
	a, err := policy.ParseAddress(k) // Canonical writes lower-case hex
	return a, err == nil && a != policy.NativeAsset
}

func parseBase(s string, ok bool) *big.Int {
	if !ok {
		return nil
	}
	v, good := new(big.Int).SetString(s, 10)
	if !good {
		return new(big.Int)
	}
	return v
}
