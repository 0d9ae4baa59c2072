package signer

// Rules for secret files (keystore, password, key file):
//   - the path may be a symlink; what counts is the file it resolves to, which must be a
//     regular file whose permission bits give group and others nothing (mode & 0o077 == 0);
//   - the file that is read is the file that was checked: it is stat'ed, opened, then fstat'ed,
//     and both must be the same file and pass the check;
//   - at most a fixed number of bytes is read;
//   - on Windows, permission bits do not describe access (ACLs do), so only the
//     regular-file rule applies there.

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
)

// CheckPrivateFile reports whether path (after following symlinks) is a regular file that
// gives group and others no access, as every file holding a key or password must be. The
// error names the path, its mode in octal and the command that fixes it (chmod 600).
func CheckPrivateFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return checkPrivateInfo("file", path, info)
}

func checkPrivateInfo(role, path string, info fs.FileInfo) error {
	mode := info.Mode()
	if !mode.IsRegular() {
		return fmt.Errorf("%s %s is %s, not a regular file", role, path, describeType(mode))
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	if perm := mode.Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s %s has mode %04o, which gives group or others access; a file holding a secret must be private to its owner: run chmod 600 %s",
			role, path, perm, shellQuote(path))
	}
	return nil
}

// readPrivateFile reads the secret file at path after checking it, refusing more than limit
// bytes. role ("key file", …) starts every error.
func readPrivateFile(role, path string, limit int64) ([]byte, error) {
	// Stat before opening so a named pipe is refused instead of blocking the open.
	before, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	if err := checkPrivateInfo(role, path, before); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	if !os.SameFile(before, info) {
		return nil, fmt.Errorf("%s %s was replaced while it was being opened; try again", role, path)
	}
	if err := checkPrivateInfo(role, path, info); err != nil {
		return nil, err
	}
	// Read one byte past the limit to tell "exactly limit" from "too large"; the size from
	// stat is not trusted (files can grow, /proc-like files report 0).
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read %s: %w", role, path, err)
	}
	if int64(len(data)) > limit {
		clear(data)
		return nil, tooLarge(role, path, limit)
	}
	return data, nil
}

func tooLarge(role, path string, limit int64) error {
	return fmt.Errorf("%s %s is larger than the %d bytes allowed for a %s", role, path, limit, role)
}

func describeType(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a special file"
	}
}

// shellQuote makes path safe to paste after "chmod 600 " in a POSIX shell.
func shellQuote(path string) string {
	safe := path != "" && strings.IndexFunc(path, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./+,:@%=", r))
	}) < 0
	if safe {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
