package service

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strings"
	"time"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/internal/atomicfile"
)

// InstallOptions are what `walletgate service install` was asked.
type InstallOptions struct {
	Paths       Paths
	User        string   // the service user to create (DefaultUser; on Windows its virtual account)
	Users       []string // the desktop users allowed to connect
	KeyFile     string   // the key to import, or
	Keystore    string   // a keystore file to import, with
	Password    string   // its password file
	Env         map[string]string
	Binary      string // the walletgate to install (this one); walletgate-devnet beside it is installed too
	SystemdRuns bool   // Linux: systemd is the init system here: enable and start the unit
	PagePort    int    // the passkey approval page's port (DefaultPagePort when 0)
	// Run runs a plan's command (useradd, systemctl, dscl, launchctl,
	// icacls); nil: os/exec.
	Run func(name string, args ...string) error
}

// keyVars are the variables an install turns into imported copies, and the
// ones it sets itself.
var keyVars = []string{"WALLETGATE_KEY_FILE", "WALLETGATE_KEYSTORE", "WALLETGATE_PASSWORD_FILE", "WALLETGATE_STATE_DIR", "WALLETGATE_STATE_URL"}

// CheckEnv refuses, in an install's settings, the variables an install sets
// itself.
func CheckEnv(env map[string]string) error {
	for _, k := range keyVars {
		if _, ok := env[k]; ok {
			return fmt.Errorf("%s is set by the install itself (the key is imported with --key-file or --keystore, the state is the service's own): drop it", k)
		}
	}
	for k := range env {
		if !strings.HasPrefix(k, "WALLETGATE_") {
			return fmt.Errorf("%q is not a WALLETGATE_ variable", k)
		}
	}
	return nil
}

// SystemdRuns reports whether systemd is the running init system (as
// sd_booted(3) decides).
func SystemdRuns() bool {
	fi, err := os.Stat("/run/systemd/system")
	return err == nil && fi.IsDir()
}

// copyFile copies src to a new file dst (never over an existing one) with
// mode perm, owned by uid:gid (neither changed when both are -1).
func copyFile(src, dst string, perm os.FileMode, uid, gid int) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", src)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if uid >= 0 || gid >= 0 {
		if err := out.Chown(uid, gid); err != nil {
			out.Close()
			os.Remove(dst)
			return err
		}
	}
	if err := out.Chmod(perm); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Install creates the service user, imports the key, installs the binary,
// writes the configuration and the unit (the launchd daemon, the Windows
// service), and starts the service where an init system runs: the plan
// PlanInstall makes for this system, carried out. It prints to out what the
// person does next, the passkey enrolment link included (to out only). It
// refuses to run over an existing install.
func Install(o InstallOptions, out io.Writer) error {
	if !isAdmin() {
		return ErrNotRoot
	}
	if o.User == "" {
		o.User = DefaultUser
	}
	if o.Run == nil {
		o.Run = runCommand
	}
	if _, err := os.Lstat(o.Paths.Config); err == nil {
		return fmt.Errorf("an install exists (%s): run `sudo walletgate service uninstall` first, or change it with `sudo walletgate service config set`", o.Paths.Config)
	}
	if err := CheckEnv(o.Env); err != nil {
		return err
	}
	f, err := gatherFacts(o)
	if err != nil {
		return err
	}
	plan, err := PlanInstall(runtime.GOOS, o, f)
	if err != nil {
		return err
	}
	secret, err := execute(plan, o.Run)
	if err != nil {
		return err
	}
	p := plan.Config
	fmt.Fprintf(out, "walletgate service installed for %s, running as user %s.\n", userNames(p.Users), p.User)
	fmt.Fprintf(out, "  configuration: %s (an administrator changes it: sudo walletgate service config set KEY=VALUE)\n", o.Paths.Config)
	for _, f := range plan.Imported {
		fmt.Fprintf(out, "  imported %s. Your copy is left alone: delete it once you have a backup elsewhere (%s), or the assistant can still read it.\n", f, deleteHint(runtime.GOOS, f))
	}
	if plan.Started != "" {
		fmt.Fprintf(out, "  started: %s\n", plan.Started)
	} else {
		fmt.Fprintf(out, "  no init system runs here (no systemd): the unit is written at %s; start the service in the foreground with: sudo %s service run\n", o.Paths.Unit, o.Paths.Binary())
	}
	fmt.Fprintf(out, "Client configuration (Claude Desktop, Claude Code, Cursor): {\"mcpServers\": {\"walletgate\": {\"command\": %q, \"args\": [\"connect\"]}}}\n", o.Paths.Binary())
	fmt.Fprintf(out, "Approvals: the person approves each write on the approval page, %s/, with a passkey (Touch ID, Windows Hello, a security key, a phone)%s.\n", approval.PasskeyOrigin(p.PagePort), terminalApprovals(runtime.GOOS, p.User, o.Paths.Binary()))
	fmt.Fprintf(out, "Enrol the passkey now, in a browser on this computer (this link works once, for %d minutes, and is shown only here; a fresh one: sudo %s service enrol):\n  %s\n", int(approval.EnrolmentTTL/time.Minute), o.Paths.Binary(), EnrolmentURL(p.PagePort, secret))
	return nil
}

// deleteHint is how the person deletes their copy of f on goos.
func deleteHint(goos, f string) string {
	switch goos {
	case "darwin":
		return "rm " + f
	case "windows":
		return "del " + f
	}
	return "shred -u " + f
}

// terminalApprovals names the terminal path to approve, where there is one.
func terminalApprovals(goos, user, bin string) string {
	if goos != "linux" {
		return "" // the service's terminal approval runs on Linux only
	}
	return fmt.Sprintf(", or in a terminal no desktop user owns (a text console login, SSH from another machine) with `sudo -u %s %s approvals --service`", user, bin)
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

// Uninstall stops and removes the service, the binaries, the configuration
// and the socket. The service's home (the key and the journal) is kept
// unless purge is set; then the service user is removed too.
func Uninstall(p Paths, userName string, purge, systemdRuns bool, run func(string, ...string) error, out io.Writer) error {
	if !isAdmin() {
		return ErrNotRoot
	}
	if run == nil {
		run = runCommand
	}
	if userName == "" {
		userName = DefaultUser
	}
	_, err := user.Lookup(userName)
	plan := PlanUninstall(runtime.GOOS, p, userName, err == nil, purge, systemdRuns)
	if _, err := execute(plan, run); err != nil {
		return err
	}
	if !purge {
		fmt.Fprintf(out, "walletgate service removed. The key and the journal are kept in %s (remove them with --purge).\n", p.Home)
		return nil
	}
	fmt.Fprintf(out, "walletgate service removed, with its key, its journal and the user %s.\n", userName)
	return nil
}

// runCommand runs a step's command, its output to stderr.
func runCommand(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// WriteConfig writes c to path, root's, readable by the service's group
// (gid -1: owner and group left as the directory gives them, as on
// Windows, where the directory's ACL decides).
func WriteConfig(path string, c Config, gid int) error {
	if err := c.Check(); err != nil {
		return err
	}
	uid := 0
	if gid < 0 {
		uid = -1
	}
	return atomicfile.Write(path, c.Marshal(), 0o640, uid, gid)
}

// ErrNotRoot says an install step needs root.
var ErrNotRoot = errors.New("this needs root: run it with sudo")
