package approval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// shortDir returns a fresh 0700 directory whose path is short enough for a
// unix socket (sun_path holds 108 bytes).
func shortDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if len(dir) > 80 {
		var err error
		dir, err = os.MkdirTemp("", "wgs")
		require.NoError(t, err)
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
	}
	require.NoError(t, os.Chmod(dir, 0o700))
	return dir
}

var testInfo = ServerInfo{PID: 4242, Wallet: "0x00000000000000000000000000000000000000aa", ChainID: 11155111, Network: "Sepolia"}

type socketFixture struct {
	broker *Broker
	clock  *fakeClock
	rv     *revokes
	svc    *Service
	path   string
}

func newTestSocket(t testing.TB) *socketFixture {
	t.Helper()
	b, c, rv := newTestBroker(t)
	dir := shortDir(t)
	require.NoError(t, PrepareDir(dir))
	path := SocketPath(dir, testInfo.PID)
	svc, err := ListenSocket(path, b, testInfo)
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close() })
	return &socketFixture{broker: b, clock: c, rv: rv, svc: svc, path: path}
}

func dial(t testing.TB, path string) *Client {
	t.Helper()
	c, err := Dial(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func do(t testing.TB, c *Client, op, id string) Answer {
	t.Helper()
	a, err := c.Do(op, id)
	require.NoError(t, err)
	return a
}

// rawConn is a connection that writes raw lines, for requests Client would
// never send.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func dialRaw(t testing.TB, path string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	return &rawConn{Conn: c, r: bufio.NewReaderSize(c, 1<<20)}
}

func (c *rawConn) roundTrip(t testing.TB, line string) Answer {
	t.Helper()
	_, err := c.Write([]byte(line + "\n"))
	require.NoError(t, err)
	return c.read(t)
}

func (c *rawConn) read(t testing.TB) Answer {
	t.Helper()
	b, err := c.r.ReadBytes('\n')
	require.NoError(t, err)
	var a Answer
	require.NoError(t, json.Unmarshal(b, &a), string(b))
	return a
}

// ---------------------------------------------------------------------------

func TestPaths(t *testing.T) {
	require.Equal(t, filepath.Join("/state", "approvals"), Dir("/state"))
	require.Equal(t, filepath.Join("/state", "approvals", "12.sock"), SocketPath(Dir("/state"), 12))
	require.Equal(t, filepath.Join("/state", "approvals", "12.url"), URLPath(Dir("/state"), 12))
}

func TestPrepareDir(t *testing.T) {
	root := t.TempDir()

	t.Run("creates 0700", func(t *testing.T) {
		dir := filepath.Join(root, "new", "approvals")
		require.NoError(t, PrepareDir(dir))
		fi, err := os.Lstat(dir)
		require.NoError(t, err)
		require.True(t, fi.IsDir())
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
		require.NoError(t, PrepareDir(dir), "an existing 0700 directory is fine")
	})
	for _, mode := range []os.FileMode{0o755, 0o750, 0o701, 0o710, 0o707, 0o777} {
		t.Run("refuses "+mode.String(), func(t *testing.T) {
			dir := filepath.Join(root, "open"+mode.String())
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chmod(dir, mode))
			err := PrepareDir(dir)
			require.ErrorContains(t, err, "0700")
			fi, err := os.Lstat(dir)
			require.NoError(t, err)
			require.Equal(t, mode, fi.Mode().Perm(), "a refused directory is left as it was")
		})
	}
	t.Run("refuses a file", func(t *testing.T) {
		path := filepath.Join(root, "file")
		require.NoError(t, os.WriteFile(path, []byte("x"), 0o600))
		require.Error(t, PrepareDir(path))
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, "x", string(b))
	})
	t.Run("refuses a symlink", func(t *testing.T) {
		target := filepath.Join(root, "target")
		require.NoError(t, os.Mkdir(target, 0o700))
		link := filepath.Join(root, "link")
		require.NoError(t, os.Symlink(target, link))
		require.ErrorContains(t, PrepareDir(link), "not a directory")
	})
}

func TestWriteURL(t *testing.T) {
	dir := shortDir(t)
	path := URLPath(dir, 7)
	require.NoError(t, WriteURL(path, "http://127.0.0.1:1/a/s/"))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:1/a/s/\n", string(b))
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// An existing file, however open and however long, is replaced.
	require.NoError(t, os.Chmod(path, 0o644))
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("old ", 100)), 0o644))
	require.NoError(t, WriteURL(path, "http://127.0.0.1:2/a/t/"))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:2/a/t/\n", string(b))
	fi, err = os.Lstat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// A symlink planted at the path is replaced, its target untouched.
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(target, path))
	require.NoError(t, WriteURL(path, "http://127.0.0.1:3/a/u/"))
	b, err = os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "keep", string(b))
	fi, err = os.Lstat(path)
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular())
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	require.Error(t, WriteURL(filepath.Join(dir, "missing", "x.url"), "u"))
}

func TestListenSocketMode(t *testing.T) {
	f := newTestSocket(t)
	fi, err := os.Lstat(f.path)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSocket, "a socket")
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestListenSocketReplacesStaleFile(t *testing.T) {
	dir := shortDir(t)
	path := SocketPath(dir, 9)
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	b, _, _ := newTestBroker(t)
	svc, err := ListenSocket(path, b, testInfo)
	require.NoError(t, err)
	defer svc.Close()
	require.True(t, do(t, dial(t, path), "list", "").OK)
}

func TestSocketList(t *testing.T) {
	f := newTestSocket(t)
	c := dial(t, f.path)

	a := do(t, c, "list", "")
	require.True(t, a.OK)
	require.Equal(t, &testInfo, a.Server)
	require.Empty(t, a.Approvals)
	require.Empty(t, a.ErrorCode)

	d := Display{Title: "Send 25 USDT", Network: "Sepolia, chain id 11155111", Marker: "testnet",
		Amounts: []Amount{{Label: "Send", Rounded: "25 USDT"}}, Unverified: []string{"FOO (0x…)"}, Warnings: []string{"w"}, Text: "all\nof it"}
	first := addDisplay(t, f.broker, "a", d)
	second := add(t, f.broker, "b")
	code := approve(t, f.broker, first)

	a = do(t, c, "list", "")
	require.True(t, a.OK)
	require.Equal(t, &testInfo, a.Server)
	require.Len(t, a.Approvals, 2)
	require.Equal(t, second, a.Approvals[0].ID, "pending first")
	require.Equal(t, Pending, a.Approvals[0].State)
	require.Equal(t, View{ID: first, Tool: "wallet_send", State: Approved, Expires: t0.Add(ttl), Code: code, Display: d, Now: t0}, a.Approvals[1])
	for _, v := range a.Approvals {
		require.True(t, v.Expires.Equal(t0.Add(ttl)))
	}
}

func TestSocketApprove(t *testing.T) {
	f := newTestSocket(t)
	c := dial(t, f.path)
	id := add(t, f.broker, "a")

	ch := f.broker.Changed()
	a := do(t, c, "approve", id)
	require.True(t, a.OK, a.Error)
	requireClosed(t, ch)
	require.Regexp(t, codeRE, a.Code)
	require.NotNil(t, a.Expires)
	require.True(t, a.Expires.Equal(t0.Add(ttl)))
	v := view(t, f.broker, id)
	require.Equal(t, Approved, v.State)
	require.Equal(t, v.Code, a.Code)

	tok, err := f.broker.Redeem(a.Code, fp("a"))
	require.NoError(t, err, "the code the socket gave confirms the preview")
	require.Equal(t, "tok-a", tok)

	a = do(t, c, "approve", id)
	require.False(t, a.OK)
	require.Equal(t, CodeNotPending, a.ErrorCode)
	require.Empty(t, a.Code)
	require.Nil(t, a.Expires)
	require.Contains(t, a.Error, "already used")
}

func TestSocketReject(t *testing.T) {
	f := newTestSocket(t)
	c := dial(t, f.path)
	id := add(t, f.broker, "a")

	a := do(t, c, "reject", id)
	require.True(t, a.OK, a.Error)
	require.Equal(t, &testInfo, a.Server)
	require.Equal(t, Rejected, state(t, f.broker, id))
	require.Equal(t, []string{"tok-a"}, f.rv.got())

	a = do(t, c, "reject", id)
	require.False(t, a.OK)
	require.Equal(t, CodeNotPending, a.ErrorCode)
	a = do(t, c, "approve", id)
	require.False(t, a.OK)
	require.Equal(t, CodeNotPending, a.ErrorCode)
	require.Empty(t, a.Code)
	require.Equal(t, Rejected, state(t, f.broker, id))
	require.Equal(t, []string{"tok-a"}, f.rv.got())
}

func TestSocketErrors(t *testing.T) {
	f := newTestSocket(t)
	c := dial(t, f.path)
	f.broker.random = &scriptReader{script: []byte{0, 0, 0, 0, 1, 1, 1, 1}}
	expired := add(t, f.broker, "a")
	f.clock.advance(ttl)
	live := add(t, f.broker, "b")
	require.Equal(t, "BBBB", live) // so that its lower case names nothing

	for _, tc := range []struct{ op, id, code string }{
		{"approve", "ZZZZ", CodeNotFound},
		{"reject", "ZZZZ", CodeNotFound},
		{"approve", "", CodeNotFound},
		{"approve", strings.ToLower(live), CodeNotFound},
		{"approve", expired, CodeExpired},
		{"reject", expired, CodeExpired},
	} {
		a := do(t, c, tc.op, tc.id)
		require.False(t, a.OK, "%s %q", tc.op, tc.id)
		require.Equal(t, tc.code, a.ErrorCode, "%s %q: %s", tc.op, tc.id, a.Error)
		require.NotEmpty(t, a.Error)
		require.Empty(t, a.Code)
		require.Nil(t, a.Server)
	}
	require.Equal(t, Pending, state(t, f.broker, live))
	require.Empty(t, f.rv.got())
}

func TestSocketMalformed(t *testing.T) {
	f := newTestSocket(t)
	id := add(t, f.broker, "a")
	c := dialRaw(t, f.path)

	for _, line := range []string{
		"not json",
		"",
		"   ",
		"{",
		"[]",
		`"approve"`,
		"null",
		`{}`,
		`{"op":""}`,
		`{"op":"delete","id":"` + id + `"}`,
		`{"op":"approve ","id":"` + id + `"}`,
		`{"op":"APPROVE","id":"` + id + `"}`,
		`{"op":"approve","id":"` + id + `","force":true}`,
		`{"op":"reject","id":"` + id + `","reason":"x"}`,
		`{"op":1,"id":"` + id + `"}`,
		`{"op":"approve","id":1}`,
		`{"op":["approve"],"id":"` + id + `"}`,
	} {
		ch := f.broker.Changed()
		a := c.roundTrip(t, line)
		require.False(t, a.OK, "%q", line)
		require.Equal(t, "BAD_REQUEST", a.ErrorCode, "%q", line)
		require.NotEmpty(t, a.Error)
		require.Nil(t, a.Server)
		require.Empty(t, a.Approvals)
		require.Empty(t, a.Code)
		requireOpen(t, ch)
		require.Equal(t, Pending, state(t, f.broker, id), "%q changed nothing", line)
	}
	require.Empty(t, f.rv.got())

	// The connection still serves well-formed requests.
	a := c.roundTrip(t, `{"op":"list"}`)
	require.True(t, a.OK)
	require.Len(t, a.Approvals, 1)
	a = c.roundTrip(t, `{"op":"approve","id":"`+id+`"}`)
	require.True(t, a.OK)
	require.Equal(t, Approved, state(t, f.broker, id))
}

func TestSocketTrailingData(t *testing.T) {
	// The rule "anything malformed is answered with an error and changes
	// nothing" covers a valid object followed by more on the same line.
	f := newTestSocket(t)
	id := add(t, f.broker, "a")
	c := dialRaw(t, f.path)
	for _, line := range []string{
		`{"op":"reject","id":"` + id + `"} junk`,
		`{"op":"reject","id":"` + id + `"}{"op":"list"}`,
	} {
		a := c.roundTrip(t, line)
		require.False(t, a.OK, "%q", line)
		require.Equal(t, "BAD_REQUEST", a.ErrorCode)
		require.Equal(t, Pending, state(t, f.broker, id))
	}
}

func TestSocketLongLine(t *testing.T) {
	f := newTestSocket(t)
	id := add(t, f.broker, "a")

	// Just under the limit: still answered.
	c := dialRaw(t, f.path)
	pad := strings.Repeat("x", maxLine-100)
	a := c.roundTrip(t, `{"op":"list","id":"`+pad+`"}`)
	require.True(t, a.OK)

	// Over the limit: refused, the connection closed, nothing changed.
	c = dialRaw(t, f.path)
	line := `{"op":"reject","id":"` + id + `","pad":"` + strings.Repeat("y", maxLine) + `"}` + "\n"
	go func() { _, _ = c.Write([]byte(line)) }()
	a = c.read(t)
	require.False(t, a.OK)
	require.Equal(t, "BAD_REQUEST", a.ErrorCode)
	require.Contains(t, a.Error, "64 KiB")
	_, err := c.r.ReadBytes('\n')
	require.Error(t, err, "the connection is closed after an overlong line")
	require.Equal(t, Pending, state(t, f.broker, id))

	// An overlong line whose JSON would be valid: reject for the real id,
	// padded with spaces.
	c = dialRaw(t, f.path)
	line = `{"op":"reject","id":"` + id + `"` + strings.Repeat(" ", maxLine) + "}\n"
	go func() { _, _ = c.Write([]byte(line)) }()
	a = c.read(t)
	require.Equal(t, "BAD_REQUEST", a.ErrorCode)
	require.Equal(t, Pending, state(t, f.broker, id))
	require.Empty(t, f.rv.got())
}

func TestSocketManyRequestsOneConnection(t *testing.T) {
	f := newTestSocket(t)
	c := dial(t, f.path)
	var ids []string
	for _, name := range []string{"a", "b", "c"} {
		ids = append(ids, add(t, f.broker, name))
	}
	for i, id := range ids {
		op := "approve"
		if i == 1 {
			op = "reject"
		}
		require.True(t, do(t, c, op, id).OK)
	}
	a := do(t, c, "list", "")
	require.Len(t, a.Approvals, 3)
	got := map[string]State{}
	for _, v := range a.Approvals {
		got[v.ID] = v.State
	}
	require.Equal(t, map[string]State{ids[0]: Approved, ids[1]: Rejected, ids[2]: Approved}, got)
}

func TestSocketClose(t *testing.T) {
	b, _, _ := newTestBroker(t)
	dir := shortDir(t)
	path := SocketPath(dir, 1)
	svc, err := ListenSocket(path, b, testInfo)
	require.NoError(t, err)
	require.True(t, do(t, dial(t, path), "list", "").OK)

	require.NoError(t, svc.Close())
	_, err = os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "Close removes the socket")
	_, err = Dial(path)
	require.Error(t, err)
}

func TestListenSocketFails(t *testing.T) {
	b, _, _ := newTestBroker(t)
	_, err := ListenSocket(filepath.Join(shortDir(t), "missing", "1.sock"), b, testInfo)
	require.ErrorContains(t, err, "approvals socket")
}

func TestDialMissing(t *testing.T) {
	_, err := Dial(filepath.Join(shortDir(t), "nobody.sock"))
	require.Error(t, err)
}

func TestSocketCloseEndsConnections(t *testing.T) {
	// Close "stops answering": a terminal connected before Close must not be
	// able to approve afterwards.
	b, _, _ := newTestBroker(t)
	path := SocketPath(shortDir(t), 3)
	svc, err := ListenSocket(path, b, testInfo)
	require.NoError(t, err)
	c := dial(t, path)
	require.True(t, do(t, c, "list", "").OK)
	id := add(t, b, "a")
	require.NoError(t, svc.Close())
	a, err := c.Do("approve", id)
	require.False(t, err == nil && a.OK, "answered after Close")
	require.Equal(t, Pending, state(t, b, id))
}

func TestPrepareDirRefusesAnotherUsersDir(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	dir := filepath.Join(t.TempDir(), "approvals")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.Chown(dir, 65534, 65534))
	require.ErrorContains(t, PrepareDir(dir), "belongs to another user")
}

// TestSocketRefusesOtherUsers connects as another user (the socket and its
// directory opened up for the test) and expects FORBIDDEN and no change: the
// SO_PEERCRED check, not only the file modes, keeps others out.
func TestSocketRefusesOtherUsers(t *testing.T) {
	if runtime.GOOS != "linux" || os.Getuid() != 0 {
		t.Skip("needs Linux (SO_PEERCRED) and root to run a process as another user")
	}
	// t.TempDir's parent is 0700: use a directory of our own that the other
	// user can enter.
	shared, err := os.MkdirTemp("", "wgp")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(shared) })
	require.NoError(t, os.Chmod(shared, 0o755))

	b, _, _ := newTestBroker(t)
	dir := filepath.Join(shared, "approvals")
	require.NoError(t, PrepareDir(dir))
	path := SocketPath(dir, 5)
	svc, err := ListenSocket(path, b, testInfo)
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close() })
	id := add(t, b, "a")
	require.NoError(t, os.Chmod(dir, 0o711))
	require.NoError(t, os.Chmod(path, 0o666))

	// The test binary, copied where the other user can run it.
	exe, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(shared, "approval.test")
	copyFile(t, exe, bin, 0o755)

	cmd := exec.Command(bin, "-test.run=^TestSocketPeerHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WALLETGATE_PEER_SOCKET="+path, "WALLETGATE_PEER_ID="+id)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), `peer answer: {"ok":false,"error_code":"FORBIDDEN"`)
	require.Contains(t, string(out), "uid 65534")
	require.Equal(t, Pending, state(t, b, id))

	// Control: this user, through the same opened-up socket, is served.
	require.True(t, do(t, dial(t, path), "list", "").OK)
}

// TestSocketPeerHelper is the other user's side of TestSocketRefusesOtherUsers.
func TestSocketPeerHelper(t *testing.T) {
	path := os.Getenv("WALLETGATE_PEER_SOCKET")
	if path == "" {
		t.Skip("helper process for TestSocketRefusesOtherUsers")
	}
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	_, _ = c.Write([]byte(`{"op":"approve","id":"` + os.Getenv("WALLETGATE_PEER_ID") + `"}` + "\n"))
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	fmt.Printf("peer answer: %s", line)
}

func copyFile(t testing.TB, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, errors.Join(err, dst.Close()))
}

func TestClientRedialsAfterIdleHangUp(t *testing.T) {
	// The person may read a preview for longer than the server keeps an
	// idle connection: the terminal's next request must still get through.
	old := idleTimeout
	idleTimeout = 50 * time.Millisecond
	t.Cleanup(func() { idleTimeout = old })
	f := newTestSocket(t)
	id := add(t, f.broker, "a")
	c := dial(t, f.path)
	require.True(t, do(t, c, "list", "").OK)
	// The server hangs up meanwhile: the connection reads its end (the
	// deadline only bounds a server that never does).
	require.NoError(t, c.conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err := c.r.Peek(1)
	require.ErrorIs(t, err, io.EOF, "the server hung up the idle connection")
	a := do(t, c, "approve", id)
	require.True(t, a.OK, a.Error)
	require.Equal(t, Approved, state(t, f.broker, id))
}

func TestRemoveStaleKeepsLiveServersOnly(t *testing.T) {
	dir := shortDir(t)
	require.NoError(t, PrepareDir(dir))
	live, dead := os.Getpid(), 0x3ffffff0 // no process has the second pid
	for _, pid := range []int{live, dead} {
		require.NoError(t, WriteURL(URLPath(dir, pid), "http://127.0.0.1:1/a/x/"))
		require.NoError(t, os.WriteFile(SocketPath(dir, pid), nil, 0o600))
	}
	other := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(other, nil, 0o600))
	RemoveStale(dir)
	for _, p := range []string{URLPath(dir, live), SocketPath(dir, live), other} {
		require.FileExists(t, p)
	}
	for _, p := range []string{URLPath(dir, dead), SocketPath(dir, dead)} {
		require.NoFileExists(t, p)
	}
}
