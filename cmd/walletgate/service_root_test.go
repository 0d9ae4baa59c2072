//go:build linux

package main_test

// The service under its own user, tested as root: install it with the
// install command, run it in the foreground as its user (no init system runs
// here), and then, as the desktop user the install named, try every way in
// the assistant would have and see each fail with nothing moved; then the
// person's path, which lands the send exactly as previewed.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"
)

// Names no real install uses: the test refuses to run over an install.
const (
	rootTestService = "wgsvc26"
	rootTestDesktop = "wgdesk26"
	rootTestOther   = "wgother26"
	installedBin    = "/usr/local/lib/walletgate/walletgate"
	serviceSocket   = "/run/walletgate/mcp.sock"
)

// requireRoot skips a test that needs root, or fails it when
// WALLETGATE_REQUIRE_ROOT=1 (CI runs as root).
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("WALLETGATE_REQUIRE_ROOT") == "1" {
		t.Fatal("this test must run as root (it creates users and installs the service) and WALLETGATE_REQUIRE_ROOT=1")
	}
	t.Skip("skipped: not root. This test creates system users and installs the service under /etc, /var/lib and /run; run it as root (WALLETGATE_REQUIRE_ROOT=1 makes this a failure)")
}

// creds is a user's id, to run a command as them.
type creds struct {
	name     string
	uid, gid uint32
}

func addUser(t *testing.T, name string) creds {
	t.Helper()
	_ = exec.Command("userdel", "-r", name).Run() // a leftover of a killed run
	out, err := exec.Command("useradd", "--create-home", "--shell", "/bin/sh", name).CombinedOutput()
	require.NoError(t, err, "useradd %s: %s", name, out)
	t.Cleanup(func() { _ = exec.Command("userdel", "-r", name).Run() })
	return lookupCreds(t, name)
}

func lookupCreds(t *testing.T, name string) creds {
	t.Helper()
	u, err := user.Lookup(name)
	require.NoError(t, err)
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return creds{name: name, uid: uint32(uid), gid: uint32(gid)}
}

// as runs cmd as the user u, with no groups but theirs.
func (u creds) as(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid, Groups: []uint32{u.gid}}}
	home := "/home/" + u.name
	if u.name == rootTestService {
		home = "/var/lib/walletgate"
	}
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home}
	cmd.Dir = "/"
	return cmd
}

// run runs name with args as u and returns its combined output and error.
func (u creds) run(name string, args ...string) (string, error) {
	out, err := u.as(exec.Command(name, args...)).CombinedOutput()
	return string(out), err
}

func TestServiceTheDesktopUserCannotGetInAndThePersonCan(t *testing.T) {
	if !privateRoot(t) {
		return
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Fatalf("useradd is missing: %v", err)
	}
	for _, p := range []string{"/etc/walletgate", "/var/lib/walletgate", "/usr/local/lib/walletgate"} {
		if _, err := os.Lstat(p); err == nil {
			t.Fatalf("%s exists: a walletgate service is installed on this machine; this test does not run over it", p)
		}
	}
	info := startDevnet(t)
	view := newChainView(t, info)
	desk := addUser(t, rootTestDesktop)
	other := addUser(t, rootTestOther)

	// The desktop user's keystore and its password file, in their home, as
	// a person keeps them: the install imports both.
	keystoreFile, passwordFile := desktopKeystore(t, desk, info.KeyFile)
	userCopies := map[string][]byte{}
	for _, f := range []string{keystoreFile, passwordFile} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		userCopies[f] = b
	}

	// Install, as root, with the install command.
	install := exec.Command(binary, "service", "install", "--import-keystore", keystoreFile, "--password-file", passwordFile, "--users", desk.name,
		"--service-user", rootTestService,
		"--set", "WALLETGATE_RPC="+info.RPC, "--set", "WALLETGATE_CHAIN_ID=1337",
		"--set", "WALLETGATE_CAP_PER_TX=ETH=1,USDT=100", "--set", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=1000",
		"--set", "WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100", "--set", "WALLETGATE_HUMAN_ABOVE=USDT=1")
	install.Env = cleanEnv()
	out, err := install.CombinedOutput()
	t.Cleanup(func() {
		un := exec.Command(installedBin, "service", "uninstall", "--purge")
		if o, err := un.CombinedOutput(); err != nil {
			t.Logf("uninstall: %v: %s", err, o)
		}
		_ = exec.Command("userdel", rootTestService).Run()
	})
	require.NoError(t, err, "install: %s", out)
	said := string(out)
	for f, b := range userCopies {
		require.Contains(t, said, "imported "+f+" (the key of "+devAddress(t, info.KeyFile)+"), checked, and removed it", "the install says it removed the user's copy of %s", f)
		_, err := os.Lstat(f)
		require.ErrorIs(t, err, os.ErrNotExist, "no copy of %s is left in the desktop user's reach", f)
		_ = b
	}
	ks, err := os.ReadFile("/var/lib/walletgate/keystore.json")
	require.NoError(t, err)
	require.Equal(t, userCopies[keystoreFile], ks, "the service's copy is the user's keystore")
	_, err = os.Stat("/var/lib/walletgate/key")
	require.ErrorIs(t, err, os.ErrNotExist, "a keystore install imports no key file")
	require.Contains(t, said, `"command": "`+installedBin+`", "args": ["connect"]`)
	require.Contains(t, said, "no init system runs here")
	enrolLink := regexp.MustCompile(`http://localhost:746/enrol/[0-9a-f]{64}`).FindString(said)
	require.NotEmpty(t, enrolLink, "install prints the passkey enrolment link: %s", said)
	svc := lookupCreds(t, rootTestService)
	for path, want := range map[string]struct {
		mode os.FileMode
		uid  uint32
	}{
		"/var/lib/walletgate/keystore.json": {0o600, svc.uid},
		"/var/lib/walletgate/password":      {0o600, svc.uid},
		"/var/lib/walletgate":               {0o700 | os.ModeDir, svc.uid},
		"/etc/walletgate/service.json":      {0o640, 0},
		installedBin:                        {0o755, 0},
	} {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, want.mode, fi.Mode()&(os.ModePerm|os.ModeDir), path)
		require.Equal(t, want.uid, fi.Sys().(*syscall.Stat_t).Uid, path)
	}

	// The service in the foreground, started as root: it becomes its user.
	svcCmd := exec.Command(installedBin, "service", "run")
	// Root's environment does not reach the service.
	svcCmd.Env = cleanEnv("GODEBUG=http2debug=2", "HTTPS_PROXY=http://127.0.0.1:9", "SSL_CERT_FILE=/nonexistent")
	svcLog := &syncBuffer{}
	svcCmd.Stdout, svcCmd.Stderr = svcLog, svcLog
	require.NoError(t, svcCmd.Start())
	t.Cleanup(func() {
		_ = svcCmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { svcCmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			svcCmd.Process.Kill()
		}
	})
	waitForOr(t, "the service's socket", func() bool { _, err := os.Stat(serviceSocket); return err == nil }, svcLog.String)
	waitForOr(t, "the service's session log", func() bool { return strings.Contains(svcLog.String(), "serving MCP on the service socket") }, svcLog.String)
	// A child is listed under the thread that forked it, which in a Go
	// process is any of its threads: read every thread's list.
	pid := strconv.Itoa(svcCmd.Process.Pid)
	lists, err := filepath.Glob("/proc/" + pid + "/task/*/children")
	require.NoError(t, err)
	var child []string
	for _, l := range lists {
		children, err := os.ReadFile(l)
		require.NoError(t, err)
		child = append(child, strings.Fields(string(children))...)
	}
	require.Len(t, child, 1, "walletgate service run, started as root, runs the service as a child")
	status, err := os.ReadFile("/proc/" + child[0] + "/status")
	require.NoError(t, err)
	require.Regexp(t, fmt.Sprintf(`(?m)^Uid:\t%d\t%d\t%d\t%d$`, svc.uid, svc.uid, svc.uid, svc.uid), string(status), "the service runs as its own user")
	environ, err := os.ReadFile("/proc/" + child[0] + "/environ")
	require.NoError(t, err)
	for _, v := range []string{"GODEBUG", "HTTPS_PROXY", "SSL_CERT_FILE", "WALLETGATE_"} {
		require.NotContains(t, string(environ), v, "the service starts with a clean environment")
	}

	// The desktop user's assistant: an MCP client through walletgate connect.
	client := startCommand(t, desk.as(exec.Command(installedBin, "connect")))
	client.initialize()
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e26")
	args := map[string]any{"to": to.Hex(), "amount": "7.25", "asset": "USDT"}
	before := view.usdtOf(to)
	nonce := view.nonce()
	res := client.callTool("wallet_send", args)
	require.Nil(t, res["isError"], text(res))
	sc := res["structuredContent"].(map[string]any)
	id := sc["approval"].(map[string]any)["id"].(string)
	raw, _ := json.Marshal(res)
	said = string(raw)
	require.Contains(t, said, "ask the person to approve preview "+id+" on the approval page")
	for _, leak := range []string{"walletgate approvals", "/var/lib/walletgate", "state directory", "wgc_", "log"} {
		require.NotContains(t, said, leak, "the preview names only what the person does")
	}
	pol, _ := json.Marshal(client.callTool("wallet_policy", map[string]any{}))
	require.NotContains(t, string(pol), "/var/lib/walletgate", "wallet_policy names no path of the state directory")

	// Every way in, as the desktop user; each fails.
	journals, _ := filepath.Glob("/var/lib/walletgate/state/*/*")
	require.NotEmpty(t, journals, "the journal exists (as root sees it)")
	for _, f := range append([]string{"/var/lib/walletgate/keystore.json", "/var/lib/walletgate/password", "/etc/walletgate/service.json"}, journals...) {
		out, err := desk.run("cat", f)
		require.Error(t, err, "the desktop user read %s: %s", f, out)
		require.Contains(t, out, "Permission denied", f)
	}
	out2, err := desk.run("ls", "/var/lib/walletgate")
	require.Error(t, err, "the desktop user listed the service's home (the password file, the key): %s", out2)
	out2, err = desk.run("sh", "-c", "echo '{}' > /etc/walletgate/service.json")
	require.Error(t, err, "the desktop user rewrote the configuration: %s", out2)
	out2, err = desk.run(installedBin, "service", "config", "set", "WALLETGATE_CAP_PER_TX=USDT=1000000")
	require.Error(t, err, "the desktop user changed the configuration: %s", out2)
	out2, err = desk.run(installedBin, "approvals", "--service")
	require.Error(t, err, "walletgate approvals --service ran for the desktop user: %s", out2)
	socks, _ := filepath.Glob("/var/lib/walletgate/state/approvals/*.sock")
	require.Len(t, socks, 1, "the approvals socket exists (as root sees it)")
	out2, err = desk.run(installedBin, "approvals", "--socket", socks[0])
	require.Error(t, err, "walletgate approvals reached the service's socket: %s", out2)
	require.NotRegexp(t, `\d{3}-\d{3}`, out2, "no code for the desktop user")
	// A forged code above the threshold.
	refused := client.callTool("wallet_send", withConfirm(args, "123-456"))
	require.Equal(t, true, refused["isError"], text(refused))
	// Raw frames on the MCP socket: the approvals protocol, and junk.
	rawOut, err := desk.run("sh", "-c", fmt.Sprintf(`printf '{"op":"approve","id":"%s"}\n\x00\xff garbage\n' | %s connect`, id, installedBin))
	require.NoError(t, err, rawOut)
	require.NotRegexp(t, `\d{3}-\d{3}`, rawOut, "no code comes back to raw frames")
	// A user not named at install: the service closes the connection.
	otherOut, err := other.run("sh", "-c", `printf '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n' | `+installedBin+` connect`)
	require.NoError(t, err, otherOut)
	require.Contains(t, otherOut, `"code":-32001`, "the relay says the service is not reachable")
	require.NotContains(t, otherOut, "wallet_send")
	waitForOr(t, "the refusal in the service's log", func() bool {
		return strings.Contains(svcLog.String(), "refused a connection") && strings.Contains(svcLog.String(), fmt.Sprintf("uid=%d", other.uid))
	}, svcLog.String)
	require.Equal(t, before, view.usdtOf(to), "nothing moved")
	require.Equal(t, nonce, view.nonce(), "nothing was sent")

	// The page, in the desktop user's own Chromium. The person enrols the
	// passkey with the link only the installing terminal saw; then the
	// desktop user (the assistant) tries the page with no passkey and with
	// one that was not enrolled.
	require.NotContains(t, svcLog.String(), enrolLink[strings.LastIndex(enrolLink, "/")+1:], "the enrolment secret is in no log")
	browser := startBrowserAs(t, desk)
	procs, err := exec.Command("pgrep", "-u", desk.name, "chromium").Output()
	require.NoError(t, err, "Chromium runs as the desktop user")
	require.NotEmpty(t, strings.TrimSpace(string(procs)))
	person := newTab(t, browser)
	enrolled := person.addAuthenticator()
	person.navigate(enrolLink)
	resp := person.click("enrol")
	person.requireStatus(resp, 200, "the person enrols")
	require.True(t, person.has("enrolled"), person.body())
	require.Equal(t, 1, person.credentials(enrolled))
	for _, f := range []string{"/var/lib/walletgate/state/passkeys.json"} {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), f)
		require.Equal(t, svc.uid, fi.Sys().(*syscall.Stat_t).Uid, f)
		out, err := desk.run("cat", f)
		require.Error(t, err, "the desktop user read the passkeys: %s", out)
	}
	_, err = os.Stat("/var/lib/walletgate/state/passkey-enrolment.json")
	require.ErrorIs(t, err, os.ErrNotExist, "the enrolment is spent")
	page := "http://localhost:746/p/" + id
	nobody := newTab(t, browser)
	nobody.navigate(page)
	require.Equal(t, "pending", nobody.text("state"))
	require.EqualValues(t, 403, nobody.submit("approve"), "no passkey approves nothing")
	require.Equal(t, "pending", nobody.text("state"))
	stranger := newTab(t, browser)
	stranger.addForeignPasskey(stranger.addAuthenticatorWith(true))
	stranger.navigate(page)
	resp = stranger.click("approve")
	stranger.requireStatus(resp, 403, "a passkey that was not enrolled approves nothing")
	require.False(t, stranger.has("code"))
	require.Equal(t, before, view.usdtOf(to), "nothing moved")
	require.Equal(t, nonce, view.nonce(), "nothing was sent")

	// The person's path: the enrolled passkey approves on the page, and the
	// send lands exactly as previewed.
	person.navigate(page)
	resp = person.click("approve")
	person.requireStatus(resp, 200, "the enrolled passkey approves")
	pageCode := person.text("code")
	require.Regexp(t, `^\d{3}-\d{3}$`, pageCode)
	landed := client.callTool("wallet_send", withConfirm(args, pageCode))
	require.NotEqual(t, true, landed["isError"], text(landed))
	require.Equal(t, "confirmed", landed["structuredContent"].(map[string]any)["status"], text(landed))
	require.Equal(t, new(big.Int).Add(before, big.NewInt(7_250_000)), view.usdtOf(to), "the send landed exactly as previewed")
	before = view.usdtOf(to)
	args = map[string]any{"to": to.Hex(), "amount": "1.5", "asset": "USDT"}
	res = client.callTool("wallet_send", args)
	require.Nil(t, res["isError"], text(res))
	id = res["structuredContent"].(map[string]any)["approval"].(map[string]any)["id"].(string)

	// The other path: the terminal, as the service user, in a terminal of
	// its own (a tmux of the service user's; never a desktop user's: see
	// terminal_root_test.go), where the person types.
	tsock := filepath.Join(os.TempDir(), "walletgate-root-test-tmux")
	tmux := func(args ...string) string {
		cmd := svc.as(exec.Command("tmux", append([]string{"-S", tsock}, args...)...))
		cmd.Env = append(cmd.Env, "SHELL=/bin/sh") // the service user's own shell is nologin
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	tmux("new-session", "-d", "-x", "200", "-y", "60", installedBin+" approvals --service; sleep 600")
	t.Cleanup(func() { _, _ = svc.run("tmux", "-S", tsock, "kill-server"); os.Remove(tsock) })
	screen := func() string { return tmux("capture-pane", "-p", "-J", "-S", "-1000") }
	waitForOr(t, "the terminal's question", func() bool { return strings.Contains(screen(), "Approve preview "+id+"?") }, screen)
	tmux("send-keys", "a", "Enter")
	codeRe := regexp.MustCompile(`one-time code:\s+(\d{3}-\d{3})`)
	waitForOr(t, "the one-time code", func() bool { return codeRe.MatchString(screen()) }, screen)
	code := codeRe.FindStringSubmatch(screen())[1]
	done := client.callTool("wallet_send", withConfirm(args, code))
	require.NotEqual(t, true, done["isError"], text(done))
	require.Equal(t, "confirmed", done["structuredContent"].(map[string]any)["status"], text(done))
	require.Equal(t, new(big.Int).Add(before, big.NewInt(1_500_000)), view.usdtOf(to), "the send landed exactly as previewed")
}

// devAddress is the address of the key in keyFile.
func devAddress(t *testing.T, keyFile string) string {
	t.Helper()
	b, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	key, err := crypto.HexToECDSA(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return crypto.PubkeyToAddress(key.PublicKey).Hex()
}

// startBrowserAs starts headless Chromium as the user u (through setpriv),
// with a profile of theirs.
func startBrowserAs(t *testing.T, u creds) context.Context {
	t.Helper()
	profile := filepath.Join("/home", u.name, "chromium-profile")
	require.NoError(t, os.MkdirAll(profile, 0o700))
	require.NoError(t, os.Chown(profile, int(u.uid), int(u.gid)))
	wrapper := filepath.Join(t.TempDir(), "chromium-as-"+u.name)
	script := fmt.Sprintf("#!/bin/sh\nexec env HOME=/home/%s setpriv --reuid=%d --regid=%d --clear-groups %s \"$@\"\n", u.name, u.uid, u.gid, chromiumPath)
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(wrapper), 0o755))
	return startBrowserWith(t, append(browserOptions(profile), chromedp.ExecPath(wrapper)))
}

// desktopKeystore writes, in u's home and owned by u (0600), a keystore
// holding the key in keyFile (light scrypt, to keep the test fast) and its
// password file.
func desktopKeystore(t *testing.T, u creds, keyFile string) (keystoreFile, passwordFile string) {
	t.Helper()
	keyBytes, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	key, err := crypto.HexToECDSA(strings.TrimSpace(string(keyBytes)))
	require.NoError(t, err)
	const password = "desk-keystore-pw-26"
	dir := filepath.Join("/home", u.name, ".walletgate")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	ks := keystore.NewKeyStore(filepath.Join(dir, "keystore"), keystore.LightScryptN, keystore.LightScryptP)
	acct, err := ks.ImportECDSA(key, password)
	require.NoError(t, err)
	keystoreFile, passwordFile = acct.URL.Path, filepath.Join(dir, "password")
	require.NoError(t, os.WriteFile(passwordFile, []byte(password+"\n"), 0o600))
	for _, f := range []string{dir, filepath.Dir(keystoreFile), keystoreFile, passwordFile} {
		require.NoError(t, os.Chown(f, int(u.uid), int(u.gid)))
	}
	require.NoError(t, os.Chmod(keystoreFile, 0o600))
	return keystoreFile, passwordFile
}
