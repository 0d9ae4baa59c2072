//go:build unix

package service

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// needRoot skips a case that chowns files to another user.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("chowns files to another user: needs root")
	}
}

// rootDir is a fresh directory whose ancestors are root's (the temporary
// directory: /tmp is root's and sticky).
func rootDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "lib")
	require.NoError(t, os.Mkdir(d, 0o755))
	return d
}

// The install refuses a walletgate that anyone but root could have
// changed: the file, or a directory above it, owned by another user or
// writable by others; it names the safe way.
func TestInstallRefusesAnExecutableOthersCouldChange(t *testing.T) {
	needRoot(t)
	for name, c := range map[string]struct {
		spoil func(dir, exe string)
		want  string
	}{
		"root's":                         {func(string, string) {}, ""},
		"writable by others":             {func(_, exe string) { os.Chmod(exe, 0o757) }, "lets others write"},
		"writable by its group":          {func(_, exe string) { os.Chmod(exe, 0o775) }, "lets others write"},
		"another user's":                 {func(_, exe string) { os.Chown(exe, 65534, 65534) }, "belongs to uid 65534"},
		"in a directory others write to": {func(dir, _ string) { os.Chmod(dir, 0o777) }, "lets others write"},
		"in another user's directory":    {func(dir, _ string) { os.Chown(dir, 65534, 65534) }, "belongs to uid 65534"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := rootDir(t)
			exe := filepath.Join(dir, "walletgate")
			require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
			c.spoil(dir, exe)
			err := CheckExecutable(exe)
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.want)
			require.ErrorContains(t, err, "sudo GOBIN=/usr/local/bin go install github.com/walletgate/walletgate/cmd/walletgate@", "it names the safe way")
		})
	}
}

// A binary is copied only from a regular file root alone can change, opened
// without following a link: a link beside the binary (to a root-only file,
// the key on a reinstall) is refused and nothing is written.
func TestInstallCopiesNoLinkAndNoFileOthersCouldChange(t *testing.T) {
	needRoot(t)
	dir := rootDir(t)
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("root only"), 0o600))
	link := filepath.Join(dir, "walletgate-devnet")
	require.NoError(t, os.Symlink(secret, link))
	dst := filepath.Join(rootDir(t), "walletgate-devnet")
	require.ErrorContains(t, copyFile(link, dst, 0o755, 0, 0, true), "symbolic link")
	_, err := os.Lstat(dst)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing is written")

	// A link higher up the path is refused too (Linux: openat2).
	linkedDir := filepath.Join(rootDir(t), "bin")
	require.NoError(t, os.Symlink(dir, linkedDir))
	if _, err := openNoFollow(filepath.Join(linkedDir, "secret")); err == nil && isLinux {
		t.Fatal("a link in the path was followed")
	}

	theirs := filepath.Join(dir, "theirs")
	require.NoError(t, os.WriteFile(theirs, []byte("x"), 0o755))
	require.NoError(t, os.Chown(theirs, 65534, 65534))
	require.ErrorContains(t, copyFile(theirs, dst, 0o755, 0, 0, true), "belongs to uid 65534")

	// An import: the user's own file, one name only (it is removed once
	// imported; another name would keep a copy).
	key := filepath.Join(dir, "key")
	require.NoError(t, os.WriteFile(key, []byte("k"), 0o600))
	require.NoError(t, os.Chown(key, 65534, 65534))
	require.NoError(t, copyFile(key, filepath.Join(dir, "copy"), 0o600, 0, 0, false))
	require.NoError(t, os.Link(key, filepath.Join(dir, "key2")))
	require.ErrorContains(t, copyFile(key, filepath.Join(dir, "copy2"), 0o600, 0, 0, false), "2 names")
}

// The install refuses target directories a non-root user made or could
// write, or that lie under one (/usr/local made a user's by Homebrew).
func TestInstallRefusesTargetsOthersCouldChange(t *testing.T) {
	needRoot(t)
	ok := rootDir(t)
	require.NoError(t, checkTargets([]string{filepath.Join(ok, "walletgate"), ok}))

	made := rootDir(t)
	require.NoError(t, os.Chown(made, 65534, 65534))
	err := checkTargets([]string{made})
	require.ErrorContains(t, err, "refusing to install into "+made)
	require.ErrorContains(t, err, "belongs to uid 65534")
	require.NoError(t, checkTargets([]string{made}, 65534), "the service user's own directory, from an earlier install")

	under := rootDir(t)
	require.NoError(t, os.Chown(under, 65534, 65534))
	err = checkTargets([]string{filepath.Join(under, "lib", "walletgate")}, 65534)
	require.ErrorContains(t, err, "belongs to uid 65534", "an ancestor is root's alone")

	open := rootDir(t)
	require.NoError(t, os.Chmod(open, 0o777))
	require.ErrorContains(t, checkTargets([]string{filepath.Join(open, "walletgate")}), "lets others write")

	linked := filepath.Join(rootDir(t), "walletgate")
	require.NoError(t, os.Symlink(made, linked))
	require.ErrorContains(t, checkTargets([]string{linked}), "symbolic link")
}
