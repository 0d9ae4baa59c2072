package service

import (
	"fmt"
	"io/fs"
	"os"
)

// SafeInstallHint is how a person gets a walletgate that only an
// administrator can change, to install from.
const SafeInstallHint = "install from a walletgate only administrators can change: build it in an administrator's terminal from the module proxy (go install github.com/walletgate/walletgate/cmd/walletgate@VERSION, with GOBIN in Program Files), or unpack a release archive checked against its published checksum there"

// CheckExecutable is not checked on Windows yet (the ACLs of the executable
// and the folders above it would be read): the plan's own directories are
// made the Administrators' before anything is put in them.
func CheckExecutable(string) error { return nil }

// checkTargets: on Windows the plan makes each directory the
// Administrators' (icacls /setowner) and replaces its ACL before anything is
// put in it.
func checkTargets([]string, ...uint32) error { return nil }

// openSource opens src to copy: a regular file (a link is refused: Lstat
// first).
func openSource(src string, _ bool) (*os.File, fs.FileInfo, error) {
	li, err := os.Lstat(src)
	if err != nil {
		return nil, nil, err
	}
	if !li.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file", src)
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !os.SameFile(li, fi) {
		f.Close()
		return nil, nil, fmt.Errorf("%s changed while it was opened", src)
	}
	return f, fi, nil
}

// links is not read on Windows (1).
func links(fs.FileInfo) uint64 { return 1 }
