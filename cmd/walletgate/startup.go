package main

import (
	"context"
	"os"
	"runtime/debug"
	"sync"
	"time"
)

// A start allocates a few MB that are garbage at once (JSON Schema
// compilers' package init, the tool list, the journal's records); with the
// default GOGC the collector runs in the middle of the client's handshake
// and costs it 1–2 ms. So until the handshake is done walletgate lets the
// heap grow to startGCPercent, then puts GOGC back and collects once,
// returning the start's garbage to the OS: an idle walletgate holds what it
// uses, not what it started with.
const (
	startGCPercent = 1000 // the heap goal from 4 MB to 40 MB, for the start only
	// startGCBound is when GOGC is put back even if no tools/list came.
	startGCBound = 2 * time.Second
	// listedGCDelay lets the tools/list answer be written before the
	// collection (the hook runs before the answer leaves).
	listedGCDelay = 20 * time.Millisecond
)

// holdGC raises GOGC for the start, unless the operator set GOGC; release
// puts it back and returns the garbage to the OS (once; safe to call from
// any goroutine, and again).
func holdGC() (release func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(startGCPercent)
	release = sync.OnceFunc(func() {
		debug.SetGCPercent(prev)
		debug.FreeOSMemory()
	})
	time.AfterFunc(startGCBound, release)
	return release
}

// handshake is the end of the client's handshake (its first tools/list):
// what a start can put off — the journal's session start and phantom
// release, the recovery of journaled transactions, the collection above —
// waits for it rather than compete with it for the CPU. Nothing waits longer
// than startGCBound, and a confirm never depends on it: it follows up
// unknown transactions itself, and its own reservations are never phantoms.
type handshake struct {
	once sync.Once
	ch   chan struct{}
}

func newHandshake() *handshake { return &handshake{ch: make(chan struct{})} }

// done marks the handshake done (again is fine).
func (h *handshake) done() { h.once.Do(func() { close(h.ch) }) }

// wait returns when the handshake is done, startGCBound has passed, or ctx
// ends; at once for a nil handshake.
func (h *handshake) wait(ctx context.Context) {
	if h == nil {
		return
	}
	t := time.NewTimer(startGCBound)
	defer t.Stop()
	select {
	case <-h.ch:
	case <-t.C:
	case <-ctx.Done():
	}
}
