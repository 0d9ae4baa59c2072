package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// DefaultDir is the state directory when none is configured:
// $XDG_STATE_HOME/walletgate, else ~/.local/state/walletgate. A relative
// XDG_STATE_HOME is ignored, as the XDG spec asks.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "walletgate"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("journal: no default state directory (set XDG_STATE_HOME or HOME): %w", err)
	}
	return filepath.Join(home, ".local", "state", "walletgate"), nil
}

// prepareDir creates dir 0700 if it is missing (with any missing parents),
// and refuses an existing one that others may use.
func prepareDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("journal: create state directory: %w", err)
		}
		fi, err = os.Stat(dir)
	}
	if err != nil {
		return fmt.Errorf("journal: state directory: %w", err)
	}
	if !fi.IsDir() {
		return &UnavailableError{Path: dir,
			Reason: fmt.Sprintf("state directory %s is not a directory", dir),
			Fix:    "point walletgate at a directory"}
	}
	return private(fi, dir, true)
}

// checkPrivate refuses the open file f, at path, unless it is a regular file
// (or, with isDir, a directory) that only its owner, the current user, can
// read or write.
func checkPrivate(f *os.File, path string, isDir bool) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if !isDir && !fi.Mode().IsRegular() {
		return &UnavailableError{Path: path,
			Reason: fmt.Sprintf("%s is not a regular file (%s)", path, fi.Mode().Type()),
			Fix:    fmt.Sprintf("move %s aside", path)}
	}
	return private(fi, path, isDir)
}

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
