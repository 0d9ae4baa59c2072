package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// DefaultDir is the state directory when none is configured:
// $XDG_STATE_HOME/walletgate, else ~/.local/state/walletgate; on Windows
// %LocalAppData%\walletgate\state. A relative XDG_STATE_HOME is ignored, as
// the XDG spec asks.
func DefaultDir() (string, error) {
	if runtime.GOOS == "windows" {
		local, err := os.UserCacheDir() // %LocalAppData%
		if err != nil {
			return "", fmt.Errorf("journal: no default state directory (set WALLETGATE_STATE_DIR): %w", err)
		}
		return filepath.Join(local, "walletgate", "state"), nil
	}
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
