//go:build linux

package main_test

// The service's terminal approval in a desktop user's terminal (issue 37),
// as root: the desktop user owns a tmux pane and drives it with send-keys
// and capture-pane. `walletgate approvals --service` refuses to run there —
// typed by the desktop user, run by root with that pane as its terminal (as
// sudo is), and run in a fresh terminal of root's own inside it (as sudo's
// use_pty does) — and runs in a terminal of root's own.

import (
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

const rootTestDesktop37 = "wgdesk37"

func TestServiceTerminalApprovalRefusesADesktopUsersTerminal(t *testing.T) {
	requireRoot(t)
	for _, tool := range []string{"tmux", "script", "useradd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: %v", tool, err)
		}
	}
	desk := addUser(t, rootTestDesktop37)
	// A directory the desktop user can reach (t.TempDir's parent is root's
	// alone).
	dir, err := os.MkdirTemp("", "walletgate-terminal-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	cfg := filepath.Join(dir, "service.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"user":"nobody","users":[{"name":"`+desk.name+`","uid":`+strconv.Itoa(int(desk.uid))+`}],"socket":"`+dir+`/mcp.sock","env":{"WALLETGATE_STATE_DIR":"`+dir+`/state"}}`), 0o644))
	bin := filepath.Join(dir, "walletgate")
	b, err := os.ReadFile(binary) // beside the configuration, reachable by them
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	command := bin + " approvals --service --config " + cfg

	// The desktop user's tmux, its socket in a directory of theirs.
	tdir := filepath.Join(dir, "tmux")
	require.NoError(t, os.Mkdir(tdir, 0o700))
	require.NoError(t, os.Chown(tdir, int(desk.uid), int(desk.gid)))
	tsock := filepath.Join(tdir, "s")
	tmux := func(args ...string) string {
		t.Helper()
		out, err := desk.run("tmux", append([]string{"-S", tsock}, args...)...)
		require.NoError(t, err, "tmux %v: %s", args, out)
		return out
	}
	tmux("new-session", "-d", "-x", "200", "-y", "50", "sh")
	server := "/proc/" + strings.TrimSpace(tmux("display-message", "-p", "#{pid}"))
	t.Cleanup(func() {
		// The server and its panes end before the user is deleted.
		_, _ = desk.run("tmux", "-S", tsock, "kill-server")
		for i := 0; i < 100; i++ {
			if _, err := os.Stat(server); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	pane := func() string { return tmux("capture-pane", "-p", "-J", "-S", "-200") }
	waitFor := func(what, want string) {
		t.Helper()
		waitForOr(t, what, func() bool { return strings.Contains(pane(), want) }, pane)
	}

	// (a) Typed into the pane by the desktop user, with send-keys.
	tmux("send-keys", command+"; echo exit=$?", "Enter")
	waitFor("the refusal in the desktop user's pane", "exit=1")
	require.Contains(t, pane(), "TERMINAL_NOT_TRUSTED")
	require.Contains(t, pane(), "belongs to "+desk.name+", a desktop user named at install")
	require.NotContains(t, pane(), "Waiting for previews")

	// (b) Run by root with the pane as its controlling terminal, as the
	// person's sudo would be; (c) inside a fresh terminal of root's own
	// opened there, as sudo's use_pty does (the walk finds the pane).
	tty := strings.TrimSpace(tmux("display-message", "-p", "#{pane_tty}"))
	require.True(t, strings.HasPrefix(tty, "/dev/pts/"), tty)
	fi, err := os.Stat(tty)
	require.NoError(t, err)
	require.Equal(t, desk.uid, fi.Sys().(*syscall.Stat_t).Uid, "the pane's terminal is the desktop user's")
	for name, argv := range map[string][]string{
		"as sudo runs it":          {bin, "approvals", "--service", "--config", cfg},
		"in a terminal of its own": {"script", "-qec", command, "/dev/null"},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := os.OpenFile(tty, os.O_RDWR, 0)
			require.NoError(t, err)
			defer f.Close()
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = f, f, f
			cmd.Env = cleanEnv()
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			done := make(chan error, 1)
			require.NoError(t, cmd.Start())
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("the terminal approval ran in the desktop user's terminal: %s", pane())
			}
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "it must refuse: %s", pane())
			require.Equal(t, 1, ee.ExitCode())
			require.Contains(t, pane(), "TERMINAL_NOT_TRUSTED")
		})
	}

	// (d) In a terminal of root's own, not the desktop user's, it runs.
	rsock := filepath.Join(dir, "root-tmux")
	rt := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", rsock}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	rt("new-session", "-d", "-x", "200", "-y", "50", command)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", rsock, "kill-server").Run() })
	waitForOr(t, "the terminal approval in root's own terminal", func() bool {
		return strings.Contains(rt("capture-pane", "-p", "-J"), "Waiting for previews")
	}, func() string { return rt("capture-pane", "-p", "-J") })
}
