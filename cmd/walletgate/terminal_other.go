//go:build !linux

package main

import "errors"

// terminalOfDesktopUser is checked on Linux only (/proc): elsewhere the
// service's terminal approval does not run, and the person approves on the
// page with the passkey.
func terminalOfDesktopUser(map[uint32]string) error {
	return errors.New("the service's terminal approval runs only on Linux, where it can tell that its terminal is not a desktop user's (one they could type into); approve on the approval page with the passkey")
}
