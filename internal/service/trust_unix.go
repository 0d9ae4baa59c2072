//go:build unix

package service

// What root trusts at install. Rules of this file: root runs, copies and
// writes into only what no one but root can change — the executable and
// every directory above it, the files it installs, the directories it
// installs into and each one above them — and it opens what it copies
// without following a link.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// SafeInstallHint is how a person gets a walletgate that only root can
// change, to install from.
const SafeInstallHint = "install from a walletgate only root can change: build it as root from the module proxy (sudo GOBIN=/usr/local/bin go install github.com/walletgate/walletgate/cmd/walletgate@VERSION; where /usr/local is not root's, as Homebrew leaves it on Intel Macs, a GOBIN only root can write, such as /opt/walletgate/bin), or unpack a release archive checked against its published checksum into a directory only root can write, then run sudo /usr/local/bin/walletgate service install (from that directory)"

// ErrUntrusted says a path root would run, copy or write into can be
// changed by someone other than root.
var ErrUntrusted = errors.New("can be changed by someone other than root")

// onlyRootChanges checks that no one but root (and owners, when given) can
// change path: it and each directory above it belong to root (or one of
// owners, for path itself) and give no one else write access (a sticky
// directory excepted, as an ancestor: there only an entry's owner may
// replace it).
func onlyRootChanges(path string, owners ...uint32) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	for p, first := abs, true; ; p, first = filepath.Dir(p), false {
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if err := rootOnly(p, fi, first, owners); err != nil {
			return err
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

func rootOnly(p string, fi fs.FileInfo, self bool, owners []uint32) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: no owner to check", p)
	}
	owner := st.Uid == 0
	if self {
		for _, o := range owners {
			owner = owner || st.Uid == o
		}
	}
	if !owner {
		return fmt.Errorf("%s %w: it belongs to uid %d", p, ErrUntrusted, st.Uid)
	}
	if fi.Mode()&fs.ModeSymlink != 0 && self {
		return fmt.Errorf("%s %w: it is a symbolic link", p, ErrUntrusted)
	}
	if fi.Mode()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o022 != 0 && (self || fi.Mode()&fs.ModeSticky == 0) {
		return fmt.Errorf("%s %w: its mode %04o lets others write", p, ErrUntrusted, fi.Mode().Perm())
	}
	return nil
}

// CheckExecutable refuses an install from an executable that someone other
// than root could have changed: the file, or any directory above it.
func CheckExecutable(exe string) error {
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return fmt.Errorf("the walletgate being run (%s): %w", exe, err)
	}
	if err := onlyRootChanges(real); err != nil {
		return fmt.Errorf("refusing to install: the walletgate being run, %v; root would run and install what another user could have replaced. %s", err, SafeInstallHint)
	}
	return nil
}

// checkTargets refuses an install into directories that someone other than
// root could change: each existing one of dirs and each directory above it
// must be root's, or (for dirs themselves) owners'.
func checkTargets(dirs []string, owners ...uint32) error {
	for _, d := range dirs {
		p := d
		for { // the nearest existing one
			if _, err := os.Lstat(p); err == nil || p == filepath.Dir(p) {
				break
			}
			p = filepath.Dir(p)
		}
		own := owners
		if p != d {
			own = nil // an ancestor: root's alone
		}
		fi, err := os.Lstat(p)
		if err == nil && p == d && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("refusing to install into %s: it is a symbolic link; remove it and install again", d)
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real // an ancestor that is a link (/var/run): where it leads is checked
		}
		if err := onlyRootChanges(p, own...); err != nil {
			return fmt.Errorf("refusing to install into %s: %v; remove it, or make it root's and writable by root alone (chown root:root, chmod go-w), and install again", d, err)
		}
	}
	return nil
}

// openSource opens src to copy, refusing a link (any component of the
// path, where the system can tell: Linux), and anything but a regular file;
// with rootOnly, a file someone other than root could change.
func openSource(src string, rootOwned bool) (*os.File, fs.FileInfo, error) {
	f, err := openNoFollow(src)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file", src)
	}
	if rootOwned {
		if err := rootOnly(src, fi, true, nil); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	return f, fi, nil
}

// links is how many names the file has.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
