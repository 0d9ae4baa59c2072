//go:build unix

package engine

import (
	"errors"
	"os"
	"syscall"
)

// processAlive reports whether a process with pid exists (pid 0: this one,
// for records kept in memory). Another user's process counts as alive.
func processAlive(pid int) bool {
	if pid == 0 || pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
