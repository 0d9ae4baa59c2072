//go:build !linux

package main

import "fmt"

// becomeServiceUser is Linux's: elsewhere the service manager starts the
// service as its user (launchd's UserName).
func becomeServiceUser(name string) error {
	return fmt.Errorf("walletgate service run started as an administrator: run it as the service user %s (launchd's UserName does that)", name)
}
