package journal

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/walletgate/walletgate/journal/records"
)

// FuzzReadFile feeds arbitrary content to the chain reader behind ReadFile
// and Verify: it must not panic, must read every byte of a sound chain, and
// must return only records that chain.
func FuzzReadFile(f *testing.F) {
	dir := stateDir(f)
	j := openT(f, dir, "fuzz")
	fill(f, j, 3)
	valid, err := os.ReadFile(j.Path())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(bytes.Replace(valid, []byte(`"seq":2`), []byte(`"seq":3`), 1))
	f.Add([]byte("\n"))
	f.Add([]byte(`{"seq":1,"kind":"k","prev":"` + genesisHash + `"}` + "\n"))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, content []byte) {
		c := strictChain("fuzz")
		var recs []records.Record
		err := c.read(bytes.NewReader(content), func(r records.Record, _ string) { recs = append(recs, r) })
		var b *BrokenError
		if errors.As(err, &b) && b.Seq > 0 {
			recs = recs[:min(len(recs), int(b.Seq)-1)]
		}
		if err != nil && !errors.As(err, &b) {
			t.Fatalf("not a BrokenError: %v", err)
		}
		if b != nil && (b.Line < 1 || b.Line > bytes.Count(content, []byte("\n"))+1) {
			t.Fatalf("line %d out of range: %v", b.Line, b)
		}
		if err == nil && c.size != int64(len(content)) {
			t.Fatalf("sound, but read %d of %d bytes", c.size, len(content))
		}
		lines := bytes.Split(content, []byte("\n"))
		prev := genesisHash
		for i, r := range recs {
			if r.Seq != uint64(i+1) || r.Prev != prev || r.Kind == "" {
				t.Fatalf("record %d does not chain: %+v", i, r)
			}
			prev = hashLine(lines[i])
		}
	})
}
