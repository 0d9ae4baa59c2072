//go:build !windows

package main

import "syscall"

// execImage replaces this process with path (same pid, same stdio).
func execImage(path string, argv, env []string) error {
	return syscall.Exec(path, argv, env)
}
