package service

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/atomicfile"
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
// mode perm, owned by uid:gid (neither changed when both are -1). src is
// opened without following a link and must be a regular file; with
// rootSource, one no one but root can change (a binary root installs).
func copyFile(src, dst string, perm os.FileMode, uid, gid int, rootSource bool) error {
	in, fi, err := openSource(src, rootSource)
	if err != nil {
		return err
	}
	defer in.Close()
	if !rootSource && links(fi) > 1 {
		return fmt.Errorf("%s has %d names (hard links): the install removes the copy it imports, and the others would stay; remove them, or import a copy with one name", src, links(fi))
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
	if err := CheckExecutable(o.Binary); err != nil {
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
	if err := checkTargets(targetDirs(o.Paths), serviceUID(f)...); err != nil {
		return err
	}
	if err := checkSources(plan); err != nil {
		return err
	}
	done, err := execute(plan, o.Run)
	if err != nil {
		return err
	}
	secret := done.secret
	p := plan.Config
	fmt.Fprintf(out, "walletgate service installed for %s, running as user %s.\n", userNames(p.Users), p.User)
	fmt.Fprintf(out, "  configuration: %s (an administrator changes it: sudo walletgate service config set KEY=VALUE)\n", o.Paths.Config)
	if plan.NewKey != "" {
		fmt.Fprintf(out, "  the service made its own key (%s, readable by the service alone). Fund its address: %s\n", plan.NewKey, done.address)
	}
	for _, f := range plan.Imported {
		fmt.Fprintf(out, "  imported %s (the key of %s), checked, and removed it: the service's copy is the only one the install knows of. Remove any other copy you keep where the assistant can read it.\n", f, done.address)
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

// checkSources opens, before any step runs, every file the plan copies:
// each must be a regular file reached through no link, a binary one only
// root can change, an import one with a single name. Nothing is made when
// one is refused.
func checkSources(plan Plan) error {
	for _, s := range plan.Steps {
		if s.Op != OpCopy {
			continue
		}
		if _, err := os.Lstat(s.Src); s.Optional && errors.Is(err, os.ErrNotExist) {
			continue
		}
		f, fi, err := openSource(s.Src, s.RootSource)
		if err != nil {
			if s.RootSource {
				return fmt.Errorf("refusing to install %s: %w. %s", s.Src, err, SafeInstallHint)
			}
			return fmt.Errorf("refusing to import %s: %w", s.Src, err)
		}
		f.Close()
		if !s.RootSource && links(fi) > 1 {
			return fmt.Errorf("refusing to import %s: it has %d names (hard links); the install removes the copy it imports, and the others would stay: remove them, or import a copy with one name", s.Src, links(fi))
		}
	}
	return nil
}

// targetDirs are the directories an install puts things in, each checked
// (with every directory above it) before anything is written.
func targetDirs(p Paths) []string {
	dirs := []string{p.Lib, p.dir(p.Config), p.Home}
	if p.Run != "" {
		dirs = append(dirs, p.Run, p.dir(p.Run))
	}
	if p.Unit != "" {
		dirs = append(dirs, p.dir(p.Unit))
	}
	return dirs
}

// serviceUID is the existing service user's id, the one owner besides root
// its own directories (the home, the socket's) may have from an earlier
// install.
func serviceUID(f Facts) []uint32 {
	if !f.UserExists {
		return nil
	}
	uid, err := strconv.ParseUint(f.ServiceUID, 10, 32)
	if err != nil || uid == 0 {
		return nil
	}
	return []uint32{uint32(uid)}
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
