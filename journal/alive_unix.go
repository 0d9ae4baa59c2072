//go:build unix

package journal

import (
	"errors"
	"syscall"
)

// ProcessAlive reports whether a process with id pid exists on this host.
// Unsure answers are "alive": a reservation then stays counted.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return true
	}
	err := syscall.Kill(pid, 0)
	return !errors.Is(err, syscall.ESRCH)
}
