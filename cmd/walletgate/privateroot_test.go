//go:build linux

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// privateRoot runs the calling root test in a private namespace: its own
// mounts (an /etc of its own, so that the users it makes are its own, and
// empty /usr/local/lib, /var/lib, /home and /run, where an install writes)
// and its own network (loopback only). Called outside one, it runs the test
// again inside one (unshare -m -n), reports what it said, and returns
// false: the caller returns. Inside, it makes the mounts and returns true.
// Nothing it does reaches the machine's own files, or another run's.
func privateRoot(t *testing.T) bool {
	t.Helper()
	requireRoot(t)
	if os.Getenv("WALLETGATE_PRIVATE_ROOT") == "1" {
		mountPrivateRoot(t)
		return true
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare (util-linux) is missing: %v", err)
	}
	cmd := exec.Command("unshare", "--mount", "--net", "--", os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v", "-test.timeout=15m")
	cmd.Env = append(os.Environ(), "WALLETGATE_PRIVATE_ROOT=1", "WALLETGATE_E2E_BIN_DIR="+filepath.Dir(binary))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s in a private namespace: %v\n%s", t.Name(), err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "--- ") {
			t.Log("in a private namespace:", strings.TrimSpace(l))
		}
	}
	return false
}

func mountPrivateRoot(t *testing.T) {
	t.Helper()
	run := func(name string, args ...string) {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	}
	run("mount", "--make-rprivate", "/")
	run("ip", "link", "set", "lo", "up")
	// The machine's /etc may be changing while it is copied (another run
	// of a root test outside a namespace): try again, and clear what such
	// a run leaves in the copy.
	var etc string
	for try := 0; ; try++ {
		etc = filepath.Join(t.TempDir(), "etc")
		out, err := exec.Command("cp", "-a", "/etc", etc).CombinedOutput()
		if err == nil {
			break
		}
		require.Less(t, try, 4, "copy /etc: %s", out)
	}
	run("mount", "--bind", etc, "/etc")
	for _, d := range []string{"/usr/local/lib", "/var/lib", "/home", "/run"} {
		run("mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", d)
	}
	for _, u := range []string{rootTestService, rootTestDesktop, rootTestOther} {
		_ = exec.Command("userdel", u).Run()
		_ = exec.Command("groupdel", u).Run()
	}
	require.NoError(t, os.RemoveAll("/etc/walletgate"))
	require.NoError(t, os.RemoveAll("/etc/systemd/system/walletgate.service"))
}
