//go:build !windows

package service

// systemFolder is used on Windows only.
func systemFolder(string) string { return "" }
