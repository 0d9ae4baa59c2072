//go:build unix

package service

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/internal/atomicfile"
)

// Install creates the service user, imports the key, installs the binary,
// writes the configuration and the unit, and starts the unit where systemd
// runs. It prints to out what the person does next. It refuses to run over
// an existing install.
func Install(o InstallOptions, out io.Writer) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("walletgate service install creates the user and the unit on Linux only; on %s follow README's manual steps (a dedicated user, the launchd daemon from `walletgate service plist`)", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	if o.User == "" {
		o.User = DefaultUser
	}
	if o.Run == nil {
		o.Run = func(name string, args ...string) error {
			cmd := exec.Command(name, args...)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			return cmd.Run()
		}
	}
	if err := CheckEnv(o.Env); err != nil {
		return err
	}
	if (o.KeyFile == "") == (o.Keystore == "") {
		return errors.New("give the key to import: --key-file PATH, or --keystore PATH with --password-file PATH")
	}
	if o.Keystore != "" && o.Password == "" {
		return errors.New("--keystore needs --password-file")
	}
	if len(o.Users) == 0 {
		return errors.New("name the desktop users who may connect: --users NAME[,NAME] (the user who runs the assistant)")
	}
	p := o.Paths
	if _, err := os.Lstat(p.Config); err == nil {
		return fmt.Errorf("an install exists (%s): run `sudo walletgate service uninstall` first, or change it with `sudo walletgate service config set`", p.Config)
	}
	var peers []Peer
	for _, name := range o.Users {
		u, err := user.Lookup(name)
		if err != nil {
			return fmt.Errorf("desktop user %q: %w", name, err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		if uid == 0 {
			return fmt.Errorf("desktop user %q is root: name the user who runs the assistant", name)
		}
		peers = append(peers, Peer{Name: name, UID: uint32(uid)})
	}
	// The service user.
	if _, err := user.Lookup(o.User); err != nil {
		if err := o.Run("useradd", "--system", "--user-group", "--home-dir", p.Home, "--no-create-home", "--shell", "/usr/sbin/nologin", o.User); err != nil {
			return fmt.Errorf("create the service user %s: %w", o.User, err)
		}
	}
	su, err := user.Lookup(o.User)
	if err != nil {
		return fmt.Errorf("the service user %s: %w", o.User, err)
	}
	for _, p := range peers {
		if strconv.FormatUint(uint64(p.UID), 10) == su.Uid {
			return fmt.Errorf("desktop user %q is the service user", p.Name)
		}
	}
	uid, _ := strconv.Atoi(su.Uid)
	gid, _ := strconv.Atoi(su.Gid)
	// Directories: the service's own (0700), root's (0755, 0750).
	dirs := []struct {
		path     string
		perm     os.FileMode
		uid, gid int
	}{
		{p.Home, 0o700, uid, gid}, {p.State(), 0o700, uid, gid}, {p.Run, 0o755, uid, gid},
		{p.Lib, 0o755, 0, 0}, {filepath.Dir(p.Config), 0o750, 0, gid},
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d.path, d.perm); err != nil {
			return err
		}
		if err := os.Chown(d.path, d.uid, d.gid); err != nil {
			return err
		}
		if err := os.Chmod(d.path, d.perm); err != nil {
			return err
		}
	}
	// The binaries: root's, so that nobody else can swap what runs.
	for _, name := range []string{"walletgate", "walletgate-devnet"} {
		src := filepath.Join(filepath.Dir(o.Binary), name)
		if name == "walletgate" {
			src = o.Binary
		} else if _, err := os.Stat(src); err != nil {
			continue
		}
		dst := filepath.Join(p.Lib, name)
		os.Remove(dst)
		if err := copyFile(src, dst, 0o755, 0, 0); err != nil {
			return fmt.Errorf("install %s: %w", name, err)
		}
	}
	// The key: a copy owned by the service user, 0600.
	env := map[string]string{}
	for k, v := range o.Env {
		env[k] = v
	}
	var imported []string
	if o.KeyFile != "" {
		dst := filepath.Join(p.Home, "key")
		if err := copyFile(o.KeyFile, dst, 0o600, uid, gid); err != nil {
			return fmt.Errorf("import the key file: %w", err)
		}
		env["WALLETGATE_KEY_FILE"] = dst
		imported = append(imported, o.KeyFile)
	} else {
		ks, pw := filepath.Join(p.Home, "keystore.json"), filepath.Join(p.Home, "password")
		if err := copyFile(o.Keystore, ks, 0o600, uid, gid); err != nil {
			return fmt.Errorf("import the keystore: %w", err)
		}
		if err := copyFile(o.Password, pw, 0o600, uid, gid); err != nil {
			return fmt.Errorf("import the password file: %w", err)
		}
		env["WALLETGATE_KEYSTORE"], env["WALLETGATE_PASSWORD_FILE"] = ks, pw
		imported = append(imported, o.Keystore, o.Password)
	}
	env["WALLETGATE_STATE_DIR"] = p.State()
	if _, ok := env["WALLETGATE_CONFIRM"]; !ok {
		env["WALLETGATE_CONFIRM"] = "human"
	}
	if o.PagePort == 0 {
		o.PagePort = DefaultPagePort
	}
	c := Config{User: o.User, Users: peers, Socket: p.Socket(), Env: env, PagePort: o.PagePort}
	if err := WriteConfig(p.Config, c, gid); err != nil {
		return fmt.Errorf("write the configuration: %w", err)
	}
	if err := atomicfile.Write(p.Unit, []byte(SystemdUnit(p, o.User)), 0o644, 0, 0); err != nil {
		return fmt.Errorf("write the unit: %w", err)
	}
	fmt.Fprintf(out, "walletgate service installed for %s, running as user %s.\n", userNames(peers), o.User)
	fmt.Fprintf(out, "  configuration: %s (root changes it: sudo walletgate service config set KEY=VALUE)\n", p.Config)
	for _, f := range imported {
		fmt.Fprintf(out, "  imported %s. Your copy is left alone: delete it once you have a backup elsewhere (shred -u %s), or the assistant can still read it.\n", f, f)
	}
	if o.SystemdRuns {
		if err := o.Run("systemctl", "daemon-reload"); err != nil {
			return err
		}
		if err := o.Run("systemctl", "enable", "--now", "walletgate.service"); err != nil {
			return fmt.Errorf("start the unit: %w", err)
		}
		fmt.Fprintf(out, "  started: systemctl status walletgate\n")
	} else {
		fmt.Fprintf(out, "  no init system runs here (no systemd): the unit is written at %s; start the service in the foreground with: sudo %s service run\n", p.Unit, p.Binary())
	}
	fmt.Fprintf(out, "Client configuration (Claude Desktop, Claude Code, Cursor): {\"mcpServers\": {\"walletgate\": {\"command\": %q, \"args\": [\"connect\"]}}}\n", p.Binary())
	// The enrolment link: its secret goes to this terminal only; the service
	// keeps its hash.
	secret, err := approval.NewEnrolment(p.State(), approval.EnrolmentTTL, uid, gid)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Approvals: the person approves each write on the approval page, %s/, with a passkey (Touch ID, Windows Hello, a security key, a phone), or in a terminal with `sudo -u %s %s approvals --service`.\n", approval.PasskeyOrigin(o.PagePort), o.User, p.Binary())
	fmt.Fprintf(out, "Enrol the passkey now, in a browser on this computer (this link works once, for %d minutes, and is shown only here; a fresh one: sudo %s service enrol):\n  %s\n", int(approval.EnrolmentTTL/time.Minute), p.Binary(), EnrolmentURL(o.PagePort, secret))
	return nil
}

func userNames(ps []Peer) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += ", "
		}
		s += p.Name
	}
	return s
}

// Uninstall stops and removes the unit, the binaries, the configuration and
// the socket. The service's home (the key and the journal) is kept unless
// purge is set; then the service user is removed too.
func Uninstall(p Paths, userName string, purge, systemdRuns bool, run func(string, ...string) error, out io.Writer) error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	if run == nil {
		run = func(name string, args ...string) error {
			cmd := exec.Command(name, args...)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			return cmd.Run()
		}
	}
	if systemdRuns {
		_ = run("systemctl", "disable", "--now", "walletgate.service")
	}
	for _, path := range []string{p.Unit, p.Config} {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	_ = os.Remove(filepath.Dir(p.Config))
	for _, path := range []string{p.Lib, p.Run} {
		if err := os.RemoveAll(path); err != nil {
			return err
		}
	}
	if !purge {
		fmt.Fprintf(out, "walletgate service removed. The key and the journal are kept in %s (remove them with --purge).\n", p.Home)
		return nil
	}
	if err := os.RemoveAll(p.Home); err != nil {
		return err
	}
	if userName == "" {
		userName = DefaultUser
	}
	if _, err := user.Lookup(userName); err == nil {
		if err := run("userdel", userName); err != nil {
			return fmt.Errorf("remove the service user %s: %w", userName, err)
		}
	}
	fmt.Fprintf(out, "walletgate service removed, with its key, its journal and the user %s.\n", userName)
	return nil
}

// Enrol writes a fresh passkey enrolment secret for the installed service
// (root only) and prints its one-time link to out, and nowhere else.
func Enrol(p Paths, c Config, out io.Writer) error {
	if c.User != "" && os.Geteuid() != 0 {
		return ErrNotRoot // the file goes to the service user, and the configuration is root's
	}
	if c.PagePort == 0 {
		return fmt.Errorf("this service has no passkey approval page (page_port is 0 in %s): set page_port there, as root, and restart the service", p.Config)
	}
	dir := c.Env["WALLETGATE_STATE_DIR"]
	if dir == "" {
		dir = p.State()
	}
	uid, gid := -1, -1
	if c.User != "" {
		u, err := user.Lookup(c.User)
		if err != nil {
			return fmt.Errorf("the service user %s: %w", c.User, err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	}
	secret, err := approval.NewEnrolment(dir, approval.EnrolmentTTL, uid, gid)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Enrol a passkey, in a browser on this computer (this link works once, for %d minutes, and is shown only here):\n  %s\n", int(approval.EnrolmentTTL/time.Minute), EnrolmentURL(c.PagePort, secret))
	return nil
}
