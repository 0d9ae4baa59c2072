//go:build unix

package journal

import (
	"os"
	"syscall"
)

// Lock operations for flock.
const (
	lockSh = syscall.LOCK_SH
	lockEx = syscall.LOCK_EX
	lockUn = syscall.LOCK_UN
)

// flock applies a flock(2) operation to f, retrying when a signal interrupts
// the wait. Locks from separate opens of a file conflict even within one
// process, which is what lets two Journals stand in for two processes.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return ferr
}
