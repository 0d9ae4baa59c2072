//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// groupOf is a file's group id.
func groupOf(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Gid)
	}
	return 0
}
