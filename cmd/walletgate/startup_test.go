package main

import (
	"context"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The start runs with a raised GOGC, and release puts the previous one back
// (once); an operator's GOGC is never touched.
func TestHoldGCRaisesGOGCForTheStartOnly(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	release := holdGC()
	require.Equal(t, startGCPercent, debug.SetGCPercent(startGCPercent), "held during the start")
	release()
	require.Equal(t, 100, debug.SetGCPercent(100), "back after release")
	debug.SetGCPercent(77)
	release()
	require.Equal(t, 77, debug.SetGCPercent(100), "a second release changes nothing")

	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	holdGC()()
	require.Equal(t, 50, debug.SetGCPercent(100), "the operator's GOGC stays")
}

// What waits for the handshake runs once it is done, or once the start's
// bound has passed, or when the process stops; a nil handshake waits for
// nothing.
func TestHandshakeWait(t *testing.T) {
	ctx := context.Background()
	(*handshake)(nil).wait(ctx)

	h := newHandshake()
	waited := make(chan struct{})
	go func() { h.wait(ctx); close(waited) }()
	select {
	case <-waited:
		t.Fatal("returned before the handshake was done")
	case <-time.After(50 * time.Millisecond):
	}
	h.done()
	h.done()
	<-waited

	stopped, cancel := context.WithCancel(ctx)
	cancel()
	start := time.Now()
	newHandshake().wait(stopped)
	require.Less(t, time.Since(start), startGCBound, "a stopping process does not wait out the bound")
}
