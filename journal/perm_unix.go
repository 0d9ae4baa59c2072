//go:build unix

package journal

import (
	"fmt"
	"os"
	"syscall"
)

// openNoFollow opens path like os.OpenFile but refuses a symbolic link as its
// last element (O_NOFOLLOW): a link planted in the state directory cannot
// redirect the journal to another file.
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
}

// private refuses fi unless only its owner, the user running walletgate, may
// read or write it: no group or other permission bits, and the owner's uid.
func private(fi os.FileInfo, path string, isDir bool) error {
	what, mode, chmod := "file", os.FileMode(0o600), "chmod 600 "+path
	if isDir {
		what, mode, chmod = "state directory", 0o700, "chmod 700 "+path
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return &UnavailableError{Path: path,
			Reason: fmt.Sprintf("%s %s has mode %04o: other users may read or change it; it must be %04o", what, path, perm, mode),
			Fix:    chmod}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return &UnavailableError{Path: path,
			Reason: fmt.Sprintf("%s %s is owned by uid %d, not by the user running walletgate (uid %d)", what, path, st.Uid, os.Geteuid()),
			Fix:    fmt.Sprintf("chown %d %s, or run walletgate as its owner", os.Geteuid(), path)}
	}
	return nil
}
