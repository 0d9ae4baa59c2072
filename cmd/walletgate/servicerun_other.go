//go:build !windows

package main

// runService runs serve, the service in the foreground (systemd and launchd
// start it so, as a plain process).
func runService(serve func() error) error { return serve() }
