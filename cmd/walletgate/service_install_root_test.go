//go:build linux

package main_test

// The install, tried as root would run it on a machine whose desktop user
// (the assistant, with a shell) prepared what it could: each attempt is
// refused before anything is made (no user, no file), and a key is
// imported only when asked, leaving no copy behind. In a private namespace
// (privateRoot).

import (
	"encoding/hex"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"
)

// install runs `walletgate service install` from bin, as root, for the
// desktop user desk, with a setting that is enough to check (the chain is
// not reached at install).
func install(t *testing.T, bin, desk string, extra ...string) (string, error) {
	t.Helper()
	args := append([]string{"service", "install", "--users", desk, "--service-user", rootTestService,
		"--set", "WALLETGATE_RPC=http://127.0.0.1:1", "--set", "WALLETGATE_CHAIN_ID=1337"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// requireNothingInstalled checks that a refused install made nothing: no
// service user, no configuration, no binary, no home.
func requireNothingInstalled(t *testing.T) {
	t.Helper()
	_, err := user.Lookup(rootTestService)
	require.Error(t, err, "no service user was made")
	for _, p := range []string{"/etc/walletgate", installedBin, "/usr/local/lib/walletgate/walletgate-devnet", "/var/lib/walletgate", "/run/walletgate"} {
		_, err := os.Lstat(p)
		require.ErrorIs(t, err, os.ErrNotExist, "%s was not made", p)
	}
}

// uninstall removes an install, its key and its user.
func uninstall(t *testing.T) {
	t.Helper()
	out, err := exec.Command(installedBin, "service", "uninstall", "--purge").CombinedOutput()
	require.NoError(t, err, "uninstall: %s", out)
	_ = exec.Command("userdel", rootTestService).Run()
	requireNothingInstalled(t)
}

// copyExe copies binary to path, owned by uid:gid, 0755.
func copyExe(t *testing.T, path string, uid, gid uint32) {
	t.Helper()
	b, err := os.ReadFile(binary)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, b, 0o755))
	require.NoError(t, os.Chown(path, int(uid), int(gid)))
}

func TestServiceInstallRefusesWhatTheDesktopUserCouldChange(t *testing.T) {
	if !privateRoot(t) {
		return
	}
	desk := addUser(t, rootTestDesktop)
	const safeWay = "sudo GOBIN=/usr/local/bin go install github.com/walletgate/walletgate/cmd/walletgate@"

	t.Run("a binary the desktop user can write", func(t *testing.T) {
		theirs := filepath.Join("/home", desk.name, "go", "bin", "walletgate")
		copyExe(t, theirs, desk.uid, desk.gid)
		out, err := install(t, theirs, desk.name)
		require.Error(t, err, out)
		require.Contains(t, out, "refusing to install: the walletgate being run, "+theirs)
		require.Contains(t, out, "belongs to uid")
		require.Contains(t, out, safeWay, "it names the safe way")
		requireNothingInstalled(t)
	})
	t.Run("root's binary in a directory the desktop user owns", func(t *testing.T) {
		dir := filepath.Join("/home", desk.name, "bin")
		bin := filepath.Join(dir, "walletgate")
		copyExe(t, bin, 0, 0)
		require.NoError(t, os.Chown(dir, int(desk.uid), int(desk.gid)))
		out, err := install(t, bin, desk.name)
		require.Error(t, err, out)
		require.Contains(t, out, "refusing to install: the walletgate being run, "+dir)
		require.Contains(t, out, safeWay)
		requireNothingInstalled(t)
	})
	t.Run("a symlink beside the binary", func(t *testing.T) {
		dir := "/usr/local/lib/src"
		bin := filepath.Join(dir, "walletgate")
		copyExe(t, bin, 0, 0)
		t.Cleanup(func() { os.RemoveAll(dir) })
		// A link to a root-only file, which a copy made 0755 would open to all.
		require.NoError(t, os.Symlink("/etc/shadow", filepath.Join(dir, "walletgate-devnet")))
		out, err := install(t, bin, desk.name)
		require.Error(t, err, out)
		require.Contains(t, out, "refusing to install "+filepath.Join(dir, "walletgate-devnet"))
		require.Contains(t, out, "symbolic link")
		requireNothingInstalled(t)
	})
	t.Run("a target directory the desktop user made first", func(t *testing.T) {
		lib := "/usr/local/lib/walletgate"
		require.NoError(t, os.Mkdir(lib, 0o755))
		require.NoError(t, os.Chown(lib, int(desk.uid), int(desk.gid)))
		out, err := install(t, binary, desk.name)
		require.Error(t, err, out)
		require.Contains(t, out, "refusing to install into "+lib)
		entries, err := os.ReadDir(lib)
		require.NoError(t, err)
		require.Empty(t, entries, "nothing was put in it")
		require.NoError(t, os.Remove(lib))
		requireNothingInstalled(t)
	})
	t.Run("a directory above the targets that the desktop user owns", func(t *testing.T) {
		require.NoError(t, os.Chown("/usr/local/lib", int(desk.uid), int(desk.gid))) // /usr/local as Homebrew leaves it
		t.Cleanup(func() { os.Chown("/usr/local/lib", 0, 0) })
		out, err := install(t, binary, desk.name)
		require.Error(t, err, out)
		require.Contains(t, out, "refusing to install into /usr/local/lib/walletgate")
		require.Contains(t, out, "/usr/local/lib can be changed by someone other than root")
		requireNothingInstalled(t)
	})
	t.Run("a cap in one window only", func(t *testing.T) {
		out, err := install(t, binary, desk.name, "--set", "WALLETGATE_CAP_PER_TX=USDT=5")
		require.Error(t, err, out)
		require.Equal(t, 2, err.(*exec.ExitError).ExitCode(), out)
		require.Contains(t, out, "USDT")
		requireNothingInstalled(t)
	})
	t.Run("the old key flags", func(t *testing.T) {
		out, err := install(t, binary, desk.name, "--key-file", "/home/"+desk.name+"/wallet.key")
		require.Error(t, err, out)
		require.Contains(t, out, "--import-key-file")
		requireNothingInstalled(t)
	})
}

func TestServiceInstallMakesItsOwnKeyOrImportsOneAndLeavesNoCopy(t *testing.T) {
	if !privateRoot(t) {
		return
	}
	desk := addUser(t, rootTestDesktop)
	t.Cleanup(func() { _ = exec.Command("userdel", rootTestService).Run() })
	fund := regexp.MustCompile(`Fund its address: (0x[0-9a-fA-F]{40})`)

	t.Run("its own key", func(t *testing.T) {
		out, err := install(t, binary, desk.name)
		require.NoError(t, err, out)
		m := fund.FindStringSubmatch(out)
		require.NotNil(t, m, "the install prints the address to fund: %s", out)
		require.NotContains(t, out, "imported")
		key, err := os.ReadFile("/var/lib/walletgate/key")
		require.NoError(t, err)
		k, err := crypto.HexToECDSA(strings.TrimSpace(string(key)))
		require.NoError(t, err)
		require.Equal(t, m[1], crypto.PubkeyToAddress(k.PublicKey).Hex(), "the address printed is the key's")
		require.NotContains(t, out, strings.TrimSpace(string(key)), "the key itself is shown nowhere")
		fi, err := os.Stat("/var/lib/walletgate/key")
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		require.Equal(t, lookupCreds(t, rootTestService).uid, fi.Sys().(*syscall.Stat_t).Uid, "the service's alone")
		uninstall(t)
	})

	t.Run("an imported key", func(t *testing.T) {
		k, err := crypto.GenerateKey()
		require.NoError(t, err)
		mine := filepath.Join("/home", desk.name, "wallet.key")
		body := hex.EncodeToString(crypto.FromECDSA(k)) + "\n"
		require.NoError(t, os.WriteFile(mine, []byte(body), 0o600))
		require.NoError(t, os.Chown(mine, int(desk.uid), int(desk.gid)))

		// A second name for it would stay: refused, and nothing moved.
		other := filepath.Join("/home", desk.name, "backup.key")
		require.NoError(t, os.Link(mine, other))
		out, err := install(t, binary, desk.name, "--import-key-file", mine)
		require.Error(t, err, out)
		require.Contains(t, out, "it has 2 names")
		requireNothingInstalled(t)
		_, err = os.Stat(mine)
		require.NoError(t, err, "a refused import leaves the file")
		require.NoError(t, os.Remove(other))

		out, err = install(t, binary, desk.name, "--import-key-file", mine)
		require.NoError(t, err, out)
		addr := crypto.PubkeyToAddress(k.PublicKey).Hex()
		require.Contains(t, out, "imported "+mine+" (the key of "+addr+"), checked, and removed it")
		_, err = os.Lstat(mine)
		require.ErrorIs(t, err, os.ErrNotExist, "no copy is left in the desktop user's reach")
		got, err := os.ReadFile("/var/lib/walletgate/key")
		require.NoError(t, err)
		require.Equal(t, body, string(got), "the service holds the key")
		uninstall(t)
	})

	t.Run("a file that is not a key is not imported, and is left", func(t *testing.T) {
		junk := filepath.Join("/home", desk.name, "notes.txt")
		require.NoError(t, os.WriteFile(junk, []byte("not a key\n"), 0o600))
		require.NoError(t, os.Chown(junk, int(desk.uid), int(desk.gid)))
		out, err := install(t, binary, desk.name, "--import-key-file", junk)
		require.Error(t, err, out)
		require.Contains(t, out, "the imported key does not load")
		require.Contains(t, out, "nothing of yours was removed")
		_, err = os.Stat(junk)
		require.NoError(t, err, "the user's file is left")
		// What the failed install made is removed by uninstall.
		out2, _ := exec.Command(binary, "service", "uninstall", "--purge").CombinedOutput()
		_ = out2
		_ = exec.Command("userdel", rootTestService).Run()
	})
}
