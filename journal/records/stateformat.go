package records

// The format of the live state a checkpoint holds. Rules of this file:
//
//   - A checkpoint's state carries its format, StateVersion, as "v". A
//     change of Live's JSON shape (a field added, renamed or retyped, in
//     Live or in any type it holds) is a new StateVersion:
//     TestStateShapeIsVersioned fails until it is bumped, the shape before
//     it is added to legacyShapes (or a projection for it), and a golden
//     journal of the old format is kept under journal/testdata.
//   - A checkpoint is checked against the state its writer held: for this
//     format, the live state folded from all history (restoring only
//     checkpoints of a known version); for the unversioned checkpoints of
//     the builds before versions, the state such a build held — the
//     checkpoint before it restored, the records since folded — in the
//     shape that build wrote. A versioned state is compared byte for byte
//     (after compaction); an unversioned one as decoded JSON, numbers as
//     their text (key order is not compared: it is not this build's to
//     know).
//   - This build never restores an unversioned checkpoint as its live
//     state when it can fold the history instead: a running journal keeps
//     its own fold past one, and opening a journal whose active segment
//     begins with one folds the whole history once (and seals, so that the
//     next start reads a checkpoint of this format). The oldest format
//     lacks nonces, per-reservation counts and the signing time of pending
//     transactions, which a restore would leave empty.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// StateVersion is the format of the live state this code writes in a
// checkpoint (its "v"). Unversioned checkpoints were written by the builds
// before it (formats 1 to 4, legacyShapes).
const StateVersion = 4

// legacyShapes are the shapes of unversioned checkpoint states, each as the
// JSON keys to drop from this format's state to get it (a key "a.b" drops
// b from the object a, or from every element of the array a):
//
//   - 1: issue 14's builds (caps, pending, reservations, sessions, latest);
//   - 2: from the merge onto the engine: nonces (allocs, next_mined), counts
//     per reservation (signed_per, ended_per), a pending transaction's time,
//     process, broadcasts and abandonment;
//   - 3: typed-data signatures (signatures);
//   - 4: a cap entry's "by" (human mode's threshold): this format, unversioned.
var legacyShapes = map[int][]string{
	1: {"allocs", "next_mined", "signed_per", "ended_per", "signatures", "caps.by", "pending.at", "pending.pid", "pending.broadcasts", "pending.abandoned"},
	2: {"signatures", "caps.by"},
	3: {"caps.by"},
	4: {},
}

// versionedState is a checkpoint's state as written: the format, then Live.
type versionedState struct {
	V int `json:"v"`
	Live
}

// StateFormat is the "v" of a checkpoint's state: 0 when it has none (a
// build before versions wrote it). A format above StateVersion is an error.
func StateFormat(raw json.RawMessage) (int, error) {
	var v struct {
		V *int `json:"v"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("checkpoint state: %w", err)
	}
	if v.V == nil {
		return 0, nil
	}
	if *v.V < 1 || *v.V > StateVersion {
		return *v.V, fmt.Errorf("checkpoint state has format %d; this walletgate reads formats up to %d: upgrade walletgate", *v.V, StateVersion)
	}
	return *v.V, nil
}

// MatchesShape reports whether a checkpoint's state got is want (a state
// of this format, as Snapshot returns it) in the shape of format version
// (0: unversioned, in the shape of any of the builds before versions).
func MatchesShape(want, got json.RawMessage, version int) bool {
	if version == StateVersion {
		return sameJSON(want, got)
	}
	g, err := decodeGeneric(got)
	if err != nil {
		return false
	}
	versions := []int{version}
	if version == 0 {
		versions = []int{1, 2, 3, 4}
	}
	for _, v := range versions {
		drop, ok := legacyShapes[v]
		if !ok {
			continue
		}
		w, err := decodeGeneric(want)
		if err != nil {
			return false
		}
		if version == 0 {
			delete(w.(map[string]any), "v")
		} else {
			w.(map[string]any)["v"] = json.Number(fmt.Sprint(version))
		}
		for _, path := range drop {
			dropPath(w, path)
		}
		if reflect.DeepEqual(w, g) {
			return true
		}
	}
	return false
}

// decodeGeneric decodes JSON with numbers kept as their text.
func decodeGeneric(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("checkpoint state is not an object")
	}
	return v, nil
}

// dropPath removes a key ("a" or "a.b") from v, a decoded object.
func dropPath(v any, path string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	head, rest, nested := bytes.Cut([]byte(path), []byte("."))
	if !nested {
		delete(m, path)
		return
	}
	switch inner := m[string(head)].(type) {
	case map[string]any:
		dropPath(inner, string(rest))
	case []any:
		for _, e := range inner {
			dropPath(e, string(rest))
		}
	}
}

func sameJSON(a, b []byte) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}
