//go:build linux

package main_test

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// abuser is testdata/abuse_client.py run as the desktop user: it holds its
// connections until closed.
type abuser struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startAbuser(t *testing.T, desk creds, script string, args ...string) *abuser {
	t.Helper()
	cmd := desk.as(exec.Command("/usr/bin/python3", append([]string{script}, args...)...))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	a := &abuser{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(a.stop)
	return a
}

// closed is how many of its connections the service closed at once.
func (a *abuser) closed(t *testing.T) int {
	t.Helper()
	line, err := a.out.ReadString('\n')
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "closed ")))
	require.NoError(t, err, line)
	held, err := a.out.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "held\n", held)
	return n
}

func (a *abuser) stop() {
	if a.stdin != nil {
		a.stdin.Close()
		a.stdin = nil
		a.cmd.Wait()
	}
}

// The installed service, run as its user, abused by the desktop user it
// serves, as the assistant with a shell could: many connections to the
// socket and to the page, unfinished 4 MiB lines, its file descriptors run
// out. Each is bounded or waited out, and the service serves the person
// after each.
func TestServiceAsInstalledOutlivesTheDesktopUsersAbuse(t *testing.T) {
	if !privateRoot(t) {
		return
	}
	info := startDevnet(t)
	desk := addUser(t, rootTestDesktop)
	out, err := install(t, binary, desk.name, "--set", "WALLETGATE_RPC="+info.RPC)
	t.Cleanup(func() {
		_, _ = exec.Command(installedBin, "service", "uninstall", "--purge").CombinedOutput()
		_ = exec.Command("userdel", rootTestService).Run()
	})
	require.NoError(t, err, out)
	script := filepath.Join("/home", desk.name, "abuse_client.py")
	b, err := os.ReadFile("testdata/abuse_client.py")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(script, b, 0o644))

	svc := exec.Command(installedBin, "service", "run")
	svc.Env = cleanEnv()
	log := &syncBuffer{}
	svc.Stdout, svc.Stderr = log, log
	require.NoError(t, svc.Start())
	exited := make(chan error, 1)
	go func() { exited <- svc.Wait() }()
	t.Cleanup(func() {
		_ = svc.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			svc.Process.Kill()
		}
	})
	waitForOr(t, "the service's session log", func() bool { return strings.Contains(log.String(), "serving MCP on the service socket") }, log.String)
	lists, err := filepath.Glob("/proc/" + strconv.Itoa(svc.Process.Pid) + "/task/*/children")
	require.NoError(t, err)
	var child []string
	for _, l := range lists {
		c, err := os.ReadFile(l)
		require.NoError(t, err)
		child = append(child, strings.Fields(string(c))...)
	}
	require.Len(t, child, 1)
	pid, err := strconv.Atoi(child[0])
	require.NoError(t, err)
	page := "127.0.0.1:746" // the default page port (trust37)
	serves := func() {
		t.Helper()
		c := startCommand(t, desk.as(exec.Command(installedBin, "connect")))
		c.initialize()
		res := c.callTool("wallet_policy", map[string]any{})
		require.Nil(t, res["isError"], "%v\n%s", res, log.String())
		c.stdin.Close() // the session ends: its place is given back
		c.cmd.Wait()
		waitForOr(t, "the approval page to answer", func() bool {
			req, _ := http.NewRequest(http.MethodGet, "http://"+page+"/", nil)
			req.Host = "localhost:746"
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, log.String)
	}
	serves()

	// Many connections.
	waitForOr(t, "the session to end", func() bool { return strings.Count(log.String(), "session ended") == 1 }, log.String)
	sock := startAbuser(t, desk, script, "conns", serviceSocket, "40")
	require.Equal(t, 40-16, sock.closed(t), "the socket serves 16 of the user's connections at once")
	pg := startAbuser(t, desk, script, "conns", page, "40")
	require.Equal(t, 40-32, pg.closed(t), "the page serves 32 at once")
	sock.stop()
	pg.stop()
	serves()

	// Unfinished lines.
	before := peakRSS(t, pid)
	lines := startAbuser(t, desk, script, "lines", serviceSocket, "40")
	lines.closed(t)
	grew := peakRSS(t, pid) - before
	require.Less(t, grew, int64(80<<20), "the service's peak memory grew by %d MiB", grew>>20)
	lines.stop()
	serves()

	// File descriptors run out.
	fds, err := os.ReadDir("/proc/" + child[0] + "/fd")
	require.NoError(t, err)
	// As the service's user: this root may lack CAP_SYS_RESOURCE (a
	// container), which changing another user's limits takes.
	svcUser := lookupCreds(t, rootTestService)
	nofile := func(soft string) {
		t.Helper()
		out, err := svcUser.run("prlimit", "--pid", child[0], "--nofile="+soft+":")
		require.NoError(t, err, "prlimit: %s", out)
	}
	var old unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &old)) // what the service was given: this process's
	nofile(strconv.Itoa(len(fds) + 4))
	exhaust := startAbuser(t, desk, script, "conns", serviceSocket, "12")
	waitForOr(t, "the socket's accept failing for want of file descriptors", func() bool {
		return strings.Contains(log.String(), "accepting a connection failed; trying again")
	}, log.String)
	exhaustPage := startAbuser(t, desk, script, "conns", page, "12")
	waitForOr(t, "the page's accept failing for want of file descriptors", func() bool {
		return strings.Contains(log.String(), "the approval page could not accept a connection; trying again")
	}, log.String)
	require.Contains(t, log.String(), "too many open files")
	nofile(strconv.FormatUint(old.Cur, 10))
	exhaust.stop()
	exhaustPage.stop()
	require.NoError(t, syscall.Kill(pid, 0), "the service still runs")
	serves()

	// When the service must stop (here it is killed), `service run` ends
	// non-zero: what systemd's Restart=on-failure, launchd's KeepAlive and
	// Windows's recovery start it again on. No init system runs in this
	// namespace, so the exit code is what is checked.
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	select {
	case err := <-exited:
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "service run ends with an error when its service dies")
		require.NotZero(t, ee.ExitCode())
		exited <- err // for the cleanup
	case <-time.After(20 * time.Second):
		t.Fatal("service run did not end when its service was killed")
	}
}
