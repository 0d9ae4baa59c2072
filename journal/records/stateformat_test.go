package records

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stateShape is the state format this code writes, field by field: the
// golden TestStateShapeIsVersioned holds it to.
const stateShape = `v int
caps []
caps[].seq uint64
caps[].kind string
caps[].id string
caps[].at time
caps[].change map[string]string
caps[].by string omitempty
pending []
pending[].seq uint64
pending[].signed struct
pending[].signed.v int omitempty
pending[].signed.tool string
pending[].signed.leg string
pending[].signed.reservation string
pending[].signed.tx string
pending[].signed.nonce uint64
pending[].signed.from string
pending[].signed.raw string
pending[].at time
pending[].pid int
pending[].broadcasts []string omitempty
pending[].abandoned bool omitempty
reservations []
reservations[].seq uint64
reservations[].id string
reservations[].at time
reservations[].change map[string]string
reservations[].session string
reservations[].pid int
sessions map[string]int
latest time
allocs [] omitempty
allocs[].reservation string
allocs[].nonce uint64
allocs[].at time
next_mined uint64 omitempty
signed_per map[string]int omitempty
ended_per map[string]int omitempty
signatures [] omitempty
signatures[].v int omitempty
signatures[].tool string
signatures[].reservation string
signatures[].kind string
signatures[].digest string
signatures[].token string omitempty
signatures[].owner string omitempty
signatures[].counterparty string omitempty
signatures[].amount string omitempty
signatures[].nonce string omitempty
signatures[].until time
signatures[].spend map[string]string
`

// TestStateShapeIsVersioned: the JSON shape of a checkpoint's state (Live
// and every type in it) is the one StateVersion names. A change without a
// new version would make every earlier checkpoint fail to match (or this
// build's fail under the next), as the builds before versions did.
func TestStateShapeIsVersioned(t *testing.T) {
	require.Equal(t, 4, StateVersion, "StateVersion changed: update stateShape to the new shape, and keep the old one's in legacyShapes")
	var b strings.Builder
	describeShape(&b, "", reflect.TypeOf(versionedState{}))
	if b.String() != stateShape {
		t.Fatalf("the checkpoint state's shape (records.Live and the types in it) changed without a new StateVersion.\n"+
			"Bump StateVersion, add the shape before the change to legacyShapes (or a projection for it) in stateformat.go, "+
			"add a golden journal written by the build before the change under journal/testdata (README.state says how), "+
			"and then update stateShape to:\n%s", b.String())
	}
}

// describeShape writes one line per JSON field of t, under prefix.
func describeShape(b *strings.Builder, prefix string, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			describeShape(b, prefix, f.Type)
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		path := prefix + name
		ft := f.Type
		kind := typeName(ft)
		line := path + " " + kind
		if strings.Contains(opts, "omitempty") {
			line += " omitempty"
		}
		b.WriteString(line + "\n")
		switch {
		case ft.Kind() == reflect.Struct && kind == "struct":
			describeShape(b, path+".", ft)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && kind == "[]":
			describeShape(b, path+"[].", ft.Elem())
		}
	}
}

// typeName is how describeShape names a field's type.
func typeName(t reflect.Type) string {
	switch {
	case t == reflect.TypeOf(time.Time{}):
		return "time"
	case t.Kind() == reflect.Struct:
		return "struct"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && t.Elem() != reflect.TypeOf(time.Time{}):
		return "[]"
	case t.Kind() == reflect.Slice:
		return "[]" + typeName(t.Elem())
	case t.Kind() == reflect.Map:
		return "map[" + typeName(t.Key()) + "]" + typeName(t.Elem())
	case t.Kind() == reflect.Pointer:
		return "*" + typeName(t.Elem())
	}
	return t.Kind().String()
}
