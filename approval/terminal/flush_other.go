//go:build !linux

package terminal

import "os"

// flushTypeahead relies on the drained line channel alone where the terminal
// input queue is not flushed.
func flushTypeahead(*os.File) {}
