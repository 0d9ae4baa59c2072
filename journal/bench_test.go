package journal

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkAppend measures one durable append: a write and three fsyncs (the
// journal, the head's temporary file, the directory). The fsyncs dominate.
func BenchmarkAppend(b *testing.B) {
	j := openT(b, stateDir(b), "bench")
	data := struct {
		Asset  string `json:"asset"`
		Amount string `json:"amount"`
		To     string `json:"to"`
		Intent string `json:"intent"`
	}{"0x0000000000000000000000000000000000000000", "250000000000000000", "0x1111111111111111111111111111111111111111", "7d0c2b1e"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.Append("reserve", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyGenerated verifies a journal written by walletgate-bench
// journal-gen: JOURNAL_BENCH_DIR names its directory.
func BenchmarkVerifyGenerated(b *testing.B) {
	dir := os.Getenv("JOURNAL_BENCH_DIR")
	if dir == "" {
		b.Skip("set JOURNAL_BENCH_DIR to a generated journal's directory")
	}
	for b.Loop() {
		if _, err := Verify(filepath.Join(dir, FileName)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenGenerated opens and closes a journal written by
// walletgate-bench journal-gen (JOURNAL_BENCH_DIR): what a start-up pays.
func BenchmarkOpenGenerated(b *testing.B) {
	dir := os.Getenv("JOURNAL_BENCH_DIR")
	if dir == "" {
		b.Skip("set JOURNAL_BENCH_DIR to a generated journal's directory")
	}
	for b.Loop() {
		j, err := Open(dir, "bench", nil)
		if err != nil {
			b.Fatal(err)
		}
		j.Close()
	}
}
