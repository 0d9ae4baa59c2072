//go:build !unix

package engine

// processAlive cannot tell here: every process counts as alive, so a signed
// transaction of another process is left alone until the bound passes.
func processAlive(int) bool { return true }
