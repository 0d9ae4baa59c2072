//go:build !linux

package main

import (
	"fmt"

	"github.com/walletgate/walletgate/internal/service"
)

// becomeServiceUser is Linux's: elsewhere the service manager starts the
// service as its user (launchd's UserName).
func becomeServiceUser(sc service.Config) error {
	return fmt.Errorf("walletgate service run started as an administrator: run it as the service user %s (launchd's UserName does that)", sc.User)
}
