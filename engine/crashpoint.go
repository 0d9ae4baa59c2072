//go:build walletgate_crashpoints

package engine

// Crash points, compiled only into the binary the end-to-end tests build
// with -tags walletgate_crashpoints: a step that no request to the node
// separates from the next one cannot be reached by holding a request, so the
// tests name it in WGTEST_CRASH_AT and walletgate kills itself there
// (SIGKILL: nothing deferred runs, nothing more is written).

import "os"

var crashAt = os.Getenv("WGTEST_CRASH_AT")

// reached kills the process at point when the test asked for it.
func reached(point string) {
	if point != crashAt {
		return
	}
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	select {} // the kill lands; nothing after this point runs
}
