//go:build !windows

package main

// humanModeUnavailable is nil: human mode works here.
func humanModeUnavailable() error { return nil }
