package main

import (
	"testing"
	"time"
)

func TestSummary(t *testing.T) {
	s := summary([]float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6})
	if s.N != 10 || s.Median != 5.5 || s.P10 != 1 || s.P90 != 9 || s.Min != 1 || s.Max != 10 {
		t.Fatalf("summary: %+v", s)
	}
	if s := summary([]float64{3, 1, 2}); s.Median != 2 {
		t.Fatalf("odd median: %+v", s)
	}
}

func TestSummariseCountsBatchElementsAndUnionsOverlaps(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	evs := []rtEvent{
		{Start: at(0), End: at(10), Methods: []string{"eth_getBlockByNumber"}},
		{Start: at(5), End: at(12), Methods: []string{"eth_call", "eth_call", "eth_getBalance"}, Batch: true}, // overlaps the first
		{Start: at(20), End: at(21), Methods: []string{"eth_sendRawTransaction"}, SendRawAt: at(21)},
		{Start: at(22), End: at(23), Methods: []string{"eth_getTransactionReceipt"}, Receipts: 1},
		{Start: at(30), End: at(31), Methods: []string{"eth_getTransactionReceipt"}, Receipts: 1, ReceiptsFound: 1},
	}
	w := summarise(evs)
	if w.RoundTrips != 5 || w.Calls != 7 || w.Methods["eth_call"] != 2 {
		t.Fatalf("counts: %+v", w)
	}
	if w.Upstream != 15*time.Millisecond {
		t.Fatalf("upstream %s, want 15ms (0–12, 20–21, 22–23, 30–31)", w.Upstream)
	}
	if w.Sequence[1] != "[eth_call×2 eth_getBalance]" {
		t.Fatalf("describe: %q", w.Sequence[1])
	}
	if w.ReceiptPollsAfter != 2 || w.NullAfter != 1 || !w.FirstReceiptAfter.Equal(at(31)) || !w.LastSendRaw.Equal(at(21)) {
		t.Fatalf("inclusion: %+v", w)
	}
}
