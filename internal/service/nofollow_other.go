//go:build unix && !linux

package service

import (
	"fmt"
	"os"
	"syscall"
)

// openNoFollow opens path for reading, refusing a link as its last
// component (O_NOFOLLOW), non-blocking (a FIFO does not hang it).
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil && errorsIsLoop(err) {
		return nil, fmt.Errorf("%s is a symbolic link: give the file itself", path)
	}
	return f, err
}

func errorsIsLoop(err error) bool {
	pe, ok := err.(*os.PathError)
	return ok && pe.Err == syscall.ELOOP
}
