//go:build !walletgate_crashpoints

package engine

// reached marks a step the end-to-end tests can crash walletgate at (see
// crashpoint.go); in a release build it does nothing.
func reached(string) {}
