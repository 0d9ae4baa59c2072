package service

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/connlimit"
)

// lines decodes every stdout line as a JSON-RPC 2.0 message.
func lines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var msgs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "stdout carries JSON-RPC only: %q", l)
		require.Equal(t, "2.0", m["jsonrpc"])
		msgs = append(msgs, m)
	}
	return msgs
}

func TestRelayAnswersEveryRequestWhenTheServiceIsDown(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{}}`,
		`not json at all`,
	}, "\n") + "\n"
	var out bytes.Buffer
	dial := func() (net.Conn, error) {
		return nil, errors.New("dial unix /run/walletgate/mcp.sock: connect: no such file or directory")
	}
	require.NoError(t, Relay(strings.NewReader(in), &out, dial, func(err error) string { return "down: " + err.Error() + "; start it" }))
	msgs := lines(t, out.String())
	require.Len(t, msgs, 3, "two requests and one unreadable line are answered; the notification is not")
	for i, id := range []any{float64(1), "x", nil} {
		require.Equal(t, id, msgs[i]["id"])
		e := msgs[i]["error"].(map[string]any)
		require.Equal(t, float64(DownCode), e["code"])
		require.Contains(t, e["message"], "start it")
	}
}

func TestRelayAnswersWhenTheServiceLeavesMidSession(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		r := bufio.NewReader(c)
		line, _ := r.ReadString('\n')
		c.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"echo":` + strings.TrimSpace(line) + `}}` + "\n"))
		c.Close() // the service stops
	}()
	pr, pw := net.Pipe()
	var out syncBuf
	done := make(chan error, 1)
	go func() {
		done <- Relay(pr, &out, func() (net.Conn, error) { return net.Dial("unix", filepath.Join(dir, "s.sock")) }, func(error) string { return "the service stopped" })
	}()
	pw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	for !strings.Contains(out.String(), `"echo"`) {
		waitOutput(&out)
	}
	pw.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"))
	pw.Close()
	require.NoError(t, <-done)
	msgs := lines(t, out.String())
	require.Len(t, msgs, 2)
	require.Equal(t, float64(2), msgs[1]["id"])
	require.Equal(t, "the service stopped", msgs[1]["error"].(map[string]any)["message"])
}

func TestListenLetsOnlyTheNamedUsersIn(t *testing.T) {
	me := uint32(os.Getuid())
	for _, c := range []struct {
		name    string
		users   []Peer
		allowed bool
	}{
		{"named", []Peer{{Name: "me", UID: me}}, true},
		{"not named", []Peer{{Name: "someone", UID: me + 1}}, false},
		{"nobody named", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "mcp.sock")
			refused := make(chan uint32, 1)
			ln, err := Listen(Config{Socket: sock, Users: c.users}, func(uid uint32, err error) { refused <- uid }, nil)
			require.NoError(t, err)
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				conn, err := ln.Accept()
				if err == nil {
					accepted <- conn
				}
			}()
			conn, err := Dial(sock)
			require.NoError(t, err)
			defer conn.Close()
			if c.allowed {
				(<-accepted).Close()
				return
			}
			require.Equal(t, me, <-refused, "the refusal names the peer's uid")
			_, err = conn.Read(make([]byte, 1))
			require.Error(t, err, "a refused peer's connection is closed")
		})
	}
}

// A desktop user holds at most MaxConnsPerUser connections at once: the
// next is closed before a byte is read, the refusal says so, and a place
// given back is taken again.
func TestTheSocketBoundsAUsersConnections(t *testing.T) {
	me := uint32(os.Getuid())
	sock := filepath.Join(t.TempDir(), "mcp.sock")
	refused := make(chan error, 1)
	ln, err := Listen(Config{Socket: sock, Users: []Peer{{Name: "me", UID: me}}}, func(uid uint32, err error) { refused <- err }, nil)
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, MaxConnsPerUser+1)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- conn
		}
	}()
	var served []net.Conn
	for range MaxConnsPerUser {
		c, err := Dial(sock)
		require.NoError(t, err)
		defer c.Close()
		served = append(served, <-accepted)
	}
	over, err := Dial(sock)
	require.NoError(t, err)
	defer over.Close()
	require.ErrorIs(t, <-refused, connlimit.ErrTooMany)
	_, err = over.Read(make([]byte, 1))
	require.Error(t, err, "the connection over the bound is closed")
	served[0].Close()
	again, err := Dial(sock)
	require.NoError(t, err)
	defer again.Close()
	(<-accepted).Close()
	for _, c := range served[1:] {
		c.Close()
	}
}

func TestParseConfigIsStrict(t *testing.T) {
	good := `{"user":"walletgate","users":[{"name":"alice","uid":1000}],"socket":"/run/walletgate/mcp.sock","env":{"WALLETGATE_CONFIRM":"human"}}`
	c, err := ParseConfig([]byte(good))
	require.NoError(t, err)
	require.True(t, c.Allowed(1000))
	require.False(t, c.Allowed(1001))
	require.Equal(t, []string{"WALLETGATE_CONFIRM=human"}, c.Environ())
	for name, bad := range map[string]string{
		"unknown field":    `{"socket":"/s","extra":1}`,
		"no socket":        `{"users":[]}`,
		"foreign env":      `{"socket":"/s","env":{"LD_PRELOAD":"/tmp/x.so"}}`,
		"two values":       good + good,
		"not an object":    `[]`,
		"uid out of range": `{"socket":"/s","users":[{"name":"a","uid":-1}]}`,
	} {
		_, err := ParseConfig([]byte(bad))
		require.Error(t, err, name)
	}
}

func TestUnitsRunTheServiceAsItsUser(t *testing.T) {
	u := SystemdUnit(LinuxPaths, "walletgate")
	for _, want := range []string{"User=walletgate\n", "ExecStart=/usr/local/lib/walletgate/walletgate service run --config /etc/walletgate/service.json\n", "NoNewPrivileges=true", "ProtectHome=true", "RuntimeDirectory=walletgate\n",
		// The page's port is below 1024: only this capability binds it.
		"CapabilityBoundingSet=CAP_NET_BIND_SERVICE\n", "AmbientCapabilities=CAP_NET_BIND_SERVICE\n"} {
		require.Contains(t, u, want)
	}
	p := LaunchdPlist(DarwinPaths, "wallet<gate>")
	require.Contains(t, p, "<key>Label</key><string>dev.walletgate.service</string>")
	require.Contains(t, p, "<key>UserName</key><string>wallet&lt;gate&gt;</string>")
	require.Contains(t, p, "<string>/usr/local/lib/walletgate/walletgate</string><string>service</string><string>run</string><string>--config</string><string>/etc/walletgate/service.json</string>")
	require.Contains(t, p, "<key>StandardErrorPath</key><string>/var/db/walletgate/service.log</string>", "the log is in the service's home")
}

// A desktop user may connect to the pipe, read and write, and never create
// an instance of it (FILE_CREATE_PIPE_INSTANCE, part of GW): a rogue server
// on \\.\pipe\walletgate is refused by Windows. What the client asks for is
// within what it is granted.
func TestPipeUsersCannotCreateInstances(t *testing.T) {
	s, err := PipeSDDL(Config{Users: []Peer{{Name: "alice", SID: "S-1-5-21-1-2-3-1001"}}})
	require.NoError(t, err)
	require.NotContains(t, s, "GW", "generic write includes FILE_CREATE_PIPE_INSTANCE")
	require.NotContains(t, s, "GA;;;S-1-5-21")
	require.Zero(t, PipeUserRights&fileCreatePipeInstance)
	require.NotZero(t, PipeUserRights&0x2, "FILE_WRITE_DATA: the client writes")
	require.Zero(t, PipeClientAccess&0x7fffffff&^PipeUserRights, "the client asks for no right it is not granted")
}

func TestPipeSDDLAllowsOnlyTheNamedUsers(t *testing.T) {
	s, err := PipeSDDL(Config{Users: []Peer{{Name: "alice", SID: "S-1-5-21-1-2-3-1001"}}})
	require.NoError(t, err)
	require.Equal(t, "D:P(A;;GA;;;SY)(A;;GA;;;OW)(A;;0x0012019b;;;S-1-5-21-1-2-3-1001)", s)
	_, err = PipeSDDL(Config{Users: []Peer{{Name: "mallory", SID: "S-1-1-0)(A;;GA;;;WD"}}})
	require.Error(t, err, "a SID cannot widen the ACL")
	_, err = PipeSDDL(Config{Users: []Peer{{Name: "nosid"}}})
	require.Error(t, err)
}

func TestCheckEnvRefusesWhatTheInstallSets(t *testing.T) {
	require.NoError(t, CheckEnv(map[string]string{"WALLETGATE_CAP_PER_TX": "ETH=0.01"}))
	for _, k := range []string{"WALLETGATE_KEY_FILE", "WALLETGATE_STATE_DIR", "WALLETGATE_PASSWORD_FILE", "PATH"} {
		require.Error(t, CheckEnv(map[string]string{k: "x"}), k)
	}
}

func TestRelayAnswersWhatTheServiceLeftUnanswered(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
	require.NoError(t, err)
	defer ln.Close()
	read := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		bufio.NewReader(c).ReadString('\n')
		close(read)
		c.Close() // gone without an answer
	}()
	in := `{"method":"tools/call","params":{"name":"wallet_send"},"jsonrpc":"2.0","id":41}` + "\n"
	var out bytes.Buffer
	require.NoError(t, Relay(strings.NewReader(in), &out, func() (net.Conn, error) { return net.Dial("unix", filepath.Join(dir, "s.sock")) }, func(error) string { return "the service stopped" }))
	<-read
	msgs := lines(t, out.String())
	require.Len(t, msgs, 1, "the request the service took and never answered is answered")
	require.Equal(t, float64(41), msgs[0]["id"])
	require.Equal(t, float64(DownCode), msgs[0]["error"].(map[string]any)["code"])
}

func TestTopLevelReadsTheIDAndTheMethod(t *testing.T) {
	for line, want := range map[string]struct {
		id      string
		request bool
	}{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`:                     {"1", true},
		`{"method":"ping","params":{"id":9},"jsonrpc":"2.0","id":"a"}`: {`"a"`, true},
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:       {"", false},
		`{"jsonrpc":"2.0","id":7,"result":{}}`:                         {"7", false},
		`{"jsonrpc":"2.0","id":null,"method":"x"}`:                     {"", false},
		`[1,2]`:   {"", false},
		`garbage`: {"", false},
	} {
		id, req := topLevel([]byte(line), true)
		require.Equal(t, want.id, string(id), line)
		require.Equal(t, want.request, req, line)
	}
}
