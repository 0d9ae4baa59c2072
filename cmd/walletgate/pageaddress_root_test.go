//go:build linux

package main_test

// The approval page's addresses against a desktop user (issue 37), as root,
// in a private network namespace (unshare -n) so that no bind collides with
// the machine's: the desktop user listens on [::1] and on 127.0.0.1 at the
// page's port, before the service starts and while it runs.
//   - At the default port (below 1024) the kernel refuses the desktop user
//     both addresses, whether the service runs or not (a restart included).
//   - At a port any user may bind (as every port is on macOS), the service
//     does not start while the desktop user holds either address, and names
//     it; while the service runs, the desktop user can have neither.

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// netns is a private network namespace, held by a sleeping process, with its
// loopback up.
type netns struct{ pid string }

func newNetns(t *testing.T) netns {
	t.Helper()
	holder := exec.Command("unshare", "-n", "sleep", "3600")
	require.NoError(t, holder.Start())
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	ns := netns{pid: strconv.Itoa(holder.Process.Pid)}
	// The namespace exists once the holder's link differs from ours.
	waitForOr(t, "the private network namespace", func() bool {
		mine, _ := os.Readlink("/proc/self/ns/net")
		its, _ := os.Readlink("/proc/" + ns.pid + "/ns/net")
		return its != "" && its != mine
	}, func() string { return "" })
	out, err := exec.Command("nsenter", "-t", ns.pid, "-n", "ip", "link", "set", "lo", "up").CombinedOutput()
	require.NoError(t, err, "lo up: %s", out)
	return ns
}

// command runs name in the namespace, as u when u is set (else root).
func (ns netns) command(ctx context.Context, u *creds, name string, args ...string) *exec.Cmd {
	pre := []string{"-t", ns.pid, "-n"}
	if u != nil {
		pre = append(pre, "-S", strconv.Itoa(int(u.uid)), "-G", strconv.Itoa(int(u.gid)))
	}
	return exec.CommandContext(ctx, "nsenter", append(append(pre, "--"), append([]string{name}, args...)...)...)
}

// squat has u listen on addr:port in ns; it returns what the kernel said
// ("listening" or the error) and a function that lets go of the address.
func (ns netns) squat(t *testing.T, u creds, addr string, port int) (string, func()) {
	t.Helper()
	script := `use IO::Socket::IP; $| = 1; my $s = IO::Socket::IP->new(LocalHost => $ARGV[0], LocalPort => $ARGV[1], Listen => 1, ReuseAddr => 0) or do { print "refused: $!\n"; exit 0 }; print "listening\n"; <STDIN>;`
	cmd := ns.command(context.Background(), &u, "perl", "-e", script, addr, strconv.Itoa(port))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	release := func() { stdin.Close(); _, _ = io.Copy(io.Discard, stdout); _ = cmd.Wait() }
	t.Cleanup(release)
	return strings.TrimSpace(line), release
}

func TestServicePageAddressesCannotBeTakenByADesktopUser(t *testing.T) {
	requireRoot(t)
	for _, tool := range []string{"unshare", "nsenter", "ip", "perl", "useradd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: %v", tool, err)
		}
	}
	ns := newNetns(t)
	desk := addUser(t, rootTestDesktop37)
	const low = 746 // service.DefaultPagePort
	high := 17464
	addrs := []string{"::1", "127.0.0.1"}

	// serve starts the service (root, as `service run` is before it becomes
	// its user) on page port in ns and returns its log and a stop.
	serve := func(t *testing.T, port int) (*syncBuffer, *exec.Cmd, func()) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		dir := t.TempDir()
		svc := ns.command(ctx, nil, binary, "service", "run", "--env", "--dev", "--socket", filepath.Join(dir, "mcp.sock"), "--page-port", strconv.Itoa(port))
		svc.Env = cleanEnv("WALLETGATE_STATE_DIR="+filepath.Join(dir, "state"), "WALLETGATE_CONFIRM=human",
			"WALLETGATE_CAP_PER_TX=ETH=1", "WALLETGATE_CAP_PER_SESSION=ETH=1", "WALLETGATE_CAP_PER_DAY=ETH=1")
		log := &syncBuffer{}
		svc.Stdout, svc.Stderr = log, log
		require.NoError(t, svc.Start())
		stop := func() {
			_ = svc.Process.Signal(syscall.SIGTERM)
			_ = svc.Wait()
			cancel()
		}
		t.Cleanup(stop)
		return log, svc, stop
	}

	t.Run("the default port is no desktop user's, the service up or down", func(t *testing.T) {
		for _, a := range addrs {
			said, _ := ns.squat(t, desk, a, low)
			require.Contains(t, said, "refused: Permission denied", "the desktop user listens on %s:%d while the service is down", a, low)
		}
		log, _, stop := serve(t, low)
		waitForOr(t, "the service", func() bool { return strings.Contains(log.String(), "serving MCP on the service socket") }, log.String)
		require.Contains(t, log.String(), "the page holds every address of localhost: 127.0.0.1:746, [::1]:746")
		require.NotContains(t, log.String(), "held only while the service runs", "port 746 is no other user's, up or down")
		for _, a := range addrs {
			said, _ := ns.squat(t, desk, a, low)
			require.Contains(t, said, "refused:", "the desktop user listens on %s:%d while the service runs", a, low)
		}
		stop()
		for _, a := range addrs {
			said, _ := ns.squat(t, desk, a, low)
			require.Contains(t, said, "refused: Permission denied", "the desktop user takes %s:%d once the service stopped (a restart)", a, low)
		}
	})

	t.Run("a port any user may bind: held before the start", func(t *testing.T) {
		for _, a := range addrs {
			said, release := ns.squat(t, desk, a, high)
			require.Equal(t, "listening", said)
			log, svc, _ := serve(t, high)
			err := svc.Wait()
			require.Error(t, err, "the service started while the desktop user held %s:%d: %s", a, high, log.String())
			at := a + ":" + strconv.Itoa(high)
			if strings.Contains(a, ":") {
				at = "[" + a + "]:" + strconv.Itoa(high)
			}
			require.Contains(t, log.String(), at+" is already in use by another program")
			require.NotContains(t, log.String(), "serving MCP")
			release()
		}
	})

	t.Run("a port any user may bind: held while it runs", func(t *testing.T) {
		log, _, _ := serve(t, high)
		waitForOr(t, "the service", func() bool { return strings.Contains(log.String(), "serving MCP on the service socket") }, log.String)
		require.Contains(t, log.String(), "held only while the service runs", "the log says a port any user may bind is held only while the service runs")
		for _, a := range addrs {
			said, _ := ns.squat(t, desk, a, high)
			require.Equal(t, "refused: Address already in use", said, "the desktop user listens on %s:%d beside the page", a, high)
		}
	})
}
