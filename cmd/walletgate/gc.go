package main

import (
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
