//go:build linux

package main_test

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// abusedService is a `walletgate service run --env` with its passkey page,
// for the tests that try to end it as any local account could.
type abusedService struct {
	t    *testing.T
	cmd  *exec.Cmd
	log  *syncBuffer
	sock string
	page string // 127.0.0.1:PORT
}

func startAbusedService(t *testing.T) *abusedService {
	t.Helper()
	info := startDevnet(t)
	s := &abusedService{t: t, log: &syncBuffer{}, sock: filepath.Join(t.TempDir(), "mcp.sock")}
	port := freeLocalPort(t)
	s.page = "127.0.0.1:" + strconv.Itoa(port)
	s.cmd = exec.Command(binary, "service", "run", "--env", "--socket", s.sock, "--page-port", strconv.Itoa(port))
	s.cmd.Env = append(capsEnv(info, t.TempDir()), "WALLETGATE_CONFIRM=human")
	s.cmd.Stderr = s.log
	require.NoError(t, s.cmd.Start())
	exited := make(chan struct{})
	go func() { s.cmd.Wait(); close(exited) }()
	t.Cleanup(func() { s.cmd.Process.Signal(os.Interrupt); <-exited })
	waitForOr(t, "the service's socket", func() bool { return strings.Contains(s.log.String(), "serving MCP on the service socket") }, s.log.String)
	return s
}

// serves opens a session through walletgate connect and lists the tools:
// the service still does its work.
func (s *abusedService) serves() {
	s.t.Helper()
	cmd := exec.Command(binary, "connect", "--socket", s.sock)
	cmd.Env = cleanEnv()
	c := startCommand(s.t, cmd)
	c.initialize()
	res := c.callTool("wallet_policy", map[string]any{})
	require.Nil(s.t, res["isError"], "%v\n%s", res, s.log.String())
	// The page gives back a closed connection's place once it has read
	// the close: until then a new one may be refused.
	waitForOr(s.t, "the approval page to answer", func() bool {
		req, err := http.NewRequest(http.MethodGet, "http://"+s.page+"/", nil)
		require.NoError(s.t, err)
		req.Host = strings.Replace(s.page, "127.0.0.1", "localhost", 1) // the page's own origin
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, s.log.String)
}

// dialAll opens n connections to network addr (those the listener refuses
// included) and closes them at the test's end.
func dialAll(t *testing.T, n int, network, addr string) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.Dial(network, addr)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

// closedByPeer counts the connections the other end closed (within 2 s: an
// open one sends nothing and is waited on that long).
func closedByPeer(conns []net.Conn) int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	n := 0
	for _, c := range conns {
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, err := c.Read(make([]byte, 1))
			if err != nil && !os.IsTimeout(err) {
				mu.Lock()
				n++
				mu.Unlock()
			}
			_ = c.SetReadDeadline(time.Time{})
		})
	}
	wg.Wait()
	return n
}

// peakRSS is the process's peak resident memory (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	require.NoError(t, err)
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// Many connections at once, from one local account: the socket holds 16 of
// a user's and the page 32, every other is closed at once (and logged), and
// the service still serves once they are gone.
func TestTheServiceBoundsConnectionsOnItsSocketAndItsPage(t *testing.T) {
	s := startAbusedService(t)
	sock := dialAll(t, 100, "unix", s.sock)
	require.Equal(t, 100-16, closedByPeer(sock), "the socket serves 16 connections of one user at once")
	require.Contains(t, s.log.String(), "too many connections at once")
	page := dialAll(t, 100, "tcp", s.page)
	require.Equal(t, 100-32, closedByPeer(page), "the page serves 32 connections at once")
	require.Contains(t, s.log.String(), "the approval page refused a connection")
	for _, c := range append(sock, page...) {
		c.Close()
	}
	s.serves()
}

// Unfinished lines: 40 connections each send 4 MiB with no newline (a
// message never ended). What the service holds for them is bounded (its
// peak memory grows by less than 80 MiB, where each connection held about
// 7 MiB before), and it serves once they are gone.
func TestTheServiceHoldsBoundedMemoryForUnfinishedLines(t *testing.T) {
	s := startAbusedService(t)
	s.serves()
	before := peakRSS(t, s.cmd.Process.Pid)
	conns := dialAll(t, 40, "unix", s.sock)
	line := bytes.Repeat([]byte("x"), 4<<20-1)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { _, _ = c.Write(line) }) // a refused one fails: no matter
	}
	wg.Wait() // each write is read by the service (held or dropped) or refused
	grew := peakRSS(t, s.cmd.Process.Pid) - before
	require.Less(t, grew, int64(80<<20), "the service's peak memory grew by %d MiB", grew>>20)
	page := dialAll(t, 40, "tcp", s.page)
	header := append([]byte("GET / HTTP/1.1\r\nHost: localhost\r\nX: "), bytes.Repeat([]byte("y"), 1<<20)...)
	for _, c := range page {
		wg.Go(func() { _, _ = c.Write(header) })
	}
	wg.Wait()
	grew = peakRSS(t, s.cmd.Process.Pid) - before
	require.Less(t, grew, int64(80<<20), "the service's peak memory grew by %d MiB", grew>>20)
	for _, c := range append(conns, page...) {
		c.Close()
	}
	s.serves()
}

// File descriptors run out: the service's limit is lowered to a few more
// than it holds, and connections take the rest. Accept fails with "too many
// open files" on the socket and on the page; each waits and tries again (and
// says so) and never ends the service, which serves again once the
// connections are gone.
func TestTheServiceOutlivesFileDescriptorExhaustion(t *testing.T) {
	s := startAbusedService(t)
	pid := s.cmd.Process.Pid
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	require.NoError(t, err)
	var old unix.Rlimit
	require.NoError(t, unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old))
	low := unix.Rlimit{Cur: uint64(len(fds) + 4), Max: old.Max} // Go raises the soft limit only at start
	require.NoError(t, unix.Prlimit(pid, unix.RLIMIT_NOFILE, &low, nil))
	conns := dialAll(t, 12, "unix", s.sock)
	waitForOr(t, "the socket's accept failing for want of file descriptors", func() bool {
		return strings.Contains(s.log.String(), "accepting a connection failed; trying again")
	}, s.log.String)
	require.Contains(t, s.log.String(), "too many open files")
	conns = append(conns, dialAll(t, 12, "tcp", s.page)...)
	waitForOr(t, "the page's accept failing for want of file descriptors", func() bool {
		return strings.Contains(s.log.String(), "the approval page could not accept a connection; trying again")
	}, s.log.String)
	require.NoError(t, unix.Prlimit(pid, unix.RLIMIT_NOFILE, &old, nil))
	for _, c := range conns {
		c.Close()
	}
	require.NoError(t, s.cmd.Process.Signal(syscall.Signal(0)), "the service still runs")
	s.serves()
}
