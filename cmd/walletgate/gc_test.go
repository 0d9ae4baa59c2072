package main

import (
	"runtime/debug"
	"testing"

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
