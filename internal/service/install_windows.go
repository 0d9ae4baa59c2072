package service

import (
	"errors"
	"io"
)

// errWindowsInstall says what the install does not do yet on Windows.
var errWindowsInstall = errors.New("walletgate service install is not implemented on Windows yet: the service (a named pipe with an ACL, see PipeSDDL) builds, but creating its account and registering it with the service manager are not done; see README")

// Install is not implemented on Windows yet.
func Install(InstallOptions, io.Writer) error { return errWindowsInstall }

// Uninstall is not implemented on Windows yet.
func Uninstall(Paths, string, bool, bool, func(string, ...string) error, io.Writer) error {
	return errWindowsInstall
}

// Enrol is not implemented on Windows yet.
func Enrol(Paths, Config, io.Writer) error { return errWindowsInstall }
