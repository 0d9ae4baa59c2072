//go:build windows

package main

// execImage: Windows cannot replace a process's image.
func execImage(string, []string, []string) error { return errNoExec }
