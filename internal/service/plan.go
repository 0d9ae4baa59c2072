package service

// The install and the uninstall as plans: what each system's install does,
// step by step (commands to run, directories and files with their modes and
// owners, the Windows service to register), made by pure functions so that
// tests check the Linux, macOS and Windows sequences on any machine. The code
// that carries a plan out is build-tagged (execute_unix.go,
// execute_windows.go).
//
// Rules of this file: a planner reads nothing from the machine (what it
// needs, it is given in Facts) and runs nothing; a step names owners by name
// ("" is root), resolved when the step runs, since the service user exists
// only once an earlier step made it; by default the service makes its own key;
// a user's key is imported only when asked, copied in (never over an
// existing file), checked, and the user's copy removed once all else is in
// place; on Windows the directories are ACL'd
// before anything secret is put in them, so that what is copied in inherits
// the ACL.

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Op is what a Step does.
type Op string

// The steps.
const (
	OpRun    Op = "run"     // run Argv
	OpDir    Op = "dir"     // make the directory Path (and its parents), then set Mode and Owner:Group
	OpCopy   Op = "copy"    // copy Src to Path, with Mode and Owner:Group
	OpWrite  Op = "write"   // write Data to Path whole (atomicfile), with Mode and Owner:Group
	OpEnrol  Op = "enrol"   // write a passkey enrolment into the state directory Path, owned by Owner; its one-time link goes to the installing terminal only
	OpNewKey Op = "new-key" // make a new key, written to the key file Path with Mode and Owner:Group; its address goes to the installing terminal
	// OpCheckKey loads the imported key at Path (a keystore with the
	// password file Src, or a key file) and fails if it does not load:
	// before the person's copy is removed.
	OpCheckKey Op = "check-key"
	OpRemove   Op = "remove" // remove Path (the tree under it with All); a missing one is no error
	// Windows: register Service with the service manager, start it, stop
	// and delete it.
	OpCreateService Op = "create-service"
	OpStartService  Op = "start-service"
	OpDeleteService Op = "delete-service"
)

// Step is one step of a plan.
type Step struct {
	Op    Op
	Path  string
	Src   string      // OpCopy
	Data  []byte      // OpWrite
	Mode  os.FileMode // OpDir, OpCopy, OpWrite (ignored on Windows: the directory's ACL decides)
	Owner string      // a user's name; "" is root
	Group string      // a group's name; "" is root's group
	Argv  []string    // OpRun
	// Replace lets OpCopy replace an existing file (the binaries); without
	// it an existing file is refused.
	Replace bool
	// RootSource makes OpCopy refuse a Src that someone other than root
	// could change (a binary root installs and runs).
	RootSource bool
	// Optional: OpCopy skips a missing Src (walletgate-devnet); OpRun's and
	// OpDeleteService's failures are not errors (stopping what may not run).
	Optional bool
	All      bool            // OpRemove: the whole tree
	Service  *WindowsService // OpCreateService, OpStartService, OpDeleteService
}

// String is the step as a line of a log or an error.
func (s Step) String() string {
	switch s.Op {
	case OpRun:
		return "run " + strings.Join(s.Argv, " ")
	case OpCopy:
		return fmt.Sprintf("copy %s to %s", s.Src, s.Path)
	case OpCreateService, OpStartService, OpDeleteService:
		return fmt.Sprintf("%s %s", s.Op, s.Service.Name)
	}
	return fmt.Sprintf("%s %s", s.Op, s.Path)
}

// WindowsService is the service registered with Windows's service manager.
type WindowsService struct {
	Name        string
	DisplayName string
	Description string
	Exe         string
	Args        []string
	// Account is the account it runs as: its virtual account, NT
	// SERVICE\<Name>, which needs no password and which the service
	// manager makes with the service.
	Account string
}

// Plan is an install's or an uninstall's steps, and what it tells the
// person.
type Plan struct {
	Steps []Step
	// Config is the configuration an install writes.
	Config Config
	// Imported are the user's files an install copied in, checked and then
	// removed (the last file step).
	Imported []string
	// NewKey is the key file the install makes, when it imports none.
	NewKey string
	// Started says how the service was started, or "" when nothing starts
	// it here.
	Started string
}

// Facts are what a planner needs to know of the machine, gathered before it
// runs.
type Facts struct {
	// UserExists: the service user exists already (it is not made again).
	UserExists bool
	// Peers are the desktop users named at install, resolved: their ids on
	// Unix, their SIDs on Windows.
	Peers []Peer
	// ServiceUID is, when UserExists, the service user's id.
	ServiceUID string
	// UsedIDs are, on macOS, the user and group ids in use (a new service
	// user gets one that is free in both).
	UsedIDs []int
}

// LaunchdLabel is the launchd daemon's label on macOS.
const LaunchdLabel = "dev.walletgate.service"

// WindowsServiceName is the service's name in Windows's service manager.
const WindowsServiceName = "walletgate"

// Well-known Windows SIDs the ACLs name.
const (
	sidSystem         = "*S-1-5-18"
	sidAdministrators = "*S-1-5-32-544"
	sidUsers          = "*S-1-5-32-545"
)

// PlanInstall is the install on the system goos of what o asks, on a
// machine described by f.
func PlanInstall(goos string, o InstallOptions, f Facts) (Plan, error) {
	if goos != "linux" && goos != "darwin" && goos != "windows" {
		return Plan{}, fmt.Errorf("walletgate service install knows Linux, macOS and Windows, not %s: make a user for the service, import the key for it (0600) and run `walletgate service run --config FILE` as that user from your init system", goos)
	}
	if o.User == "" {
		o.User = UserFor(goos)
	}
	if err := CheckEnv(o.Env); err != nil {
		return Plan{}, err
	}
	if o.KeyFile != "" && o.Keystore != "" {
		return Plan{}, errors.New("give one key to import: --import-key-file PATH, or --import-keystore PATH with --password-file PATH (or neither: the service makes its own key)")
	}
	if o.Keystore != "" && o.Password == "" {
		return Plan{}, errors.New("--import-keystore needs --password-file")
	}
	if o.Password != "" && o.Keystore == "" {
		return Plan{}, errors.New("--password-file goes with --import-keystore")
	}
	if len(f.Peers) == 0 {
		return Plan{}, errors.New("name the desktop users who may connect: --users NAME[,NAME] (the user who runs the assistant)")
	}
	for _, p := range f.Peers {
		if goos == "windows" {
			if p.SID == "" {
				return Plan{}, fmt.Errorf("desktop user %q has no SID", p.Name)
			}
			continue
		}
		if p.UID == 0 {
			return Plan{}, fmt.Errorf("desktop user %q is root: name the user who runs the assistant", p.Name)
		}
		if f.UserExists && strconv.FormatUint(uint64(p.UID), 10) == f.ServiceUID {
			return Plan{}, fmt.Errorf("desktop user %q is the service user", p.Name)
		}
	}
	if o.PagePort == 0 {
		o.PagePort = DefaultPagePort
	}
	switch goos {
	case "windows":
		return planWindows(o, f)
	case "darwin":
		return planDarwin(o, f)
	}
	return planLinux(o, f)
}

// imports are the steps that make the service's key, or that copy the key
// to import (or the keystore and its password file) into the service's home
// and check it; the variables that point at the service's copies; and the
// steps that remove the user's copies, for the planner to put last.
func imports(o InstallOptions, p Paths, owner string) (steps []Step, env map[string]string, imported []string, newKey string, removals []Step) {
	env = map[string]string{}
	for k, v := range o.Env {
		env[k] = v
	}
	file := func(src, name string) string {
		dst := p.join(p.Home, name)
		steps = append(steps, Step{Op: OpCopy, Src: src, Path: dst, Mode: 0o600, Owner: owner, Group: owner})
		imported = append(imported, src)
		removals = append(removals, Step{Op: OpRemove, Path: src})
		return dst
	}
	switch {
	case o.KeyFile != "":
		env["WALLETGATE_KEY_FILE"] = file(o.KeyFile, "key")
		steps = append(steps, Step{Op: OpCheckKey, Path: env["WALLETGATE_KEY_FILE"]})
	case o.Keystore != "":
		env["WALLETGATE_KEYSTORE"] = file(o.Keystore, "keystore.json")
		env["WALLETGATE_PASSWORD_FILE"] = file(o.Password, "password")
		steps = append(steps, Step{Op: OpCheckKey, Path: env["WALLETGATE_KEYSTORE"], Src: env["WALLETGATE_PASSWORD_FILE"]})
	default:
		newKey = p.join(p.Home, "key")
		env["WALLETGATE_KEY_FILE"] = newKey
		steps = append(steps, Step{Op: OpNewKey, Path: newKey, Mode: 0o600, Owner: owner, Group: owner})
	}
	env["WALLETGATE_STATE_DIR"] = p.State()
	if _, ok := env["WALLETGATE_CONFIRM"]; !ok {
		env["WALLETGATE_CONFIRM"] = "human"
	}
	return steps, env, imported, newKey, removals
}

// binaries are the steps that install walletgate and, when it is beside it,
// walletgate-devnet, root's.
func binaries(o InstallOptions, p Paths) []Step {
	srcDir := o.Binary[:strings.LastIndexAny(o.Binary, `/\`)+1]
	return []Step{
		{Op: OpCopy, Src: o.Binary, Path: p.Binary(), Mode: 0o755, Replace: true, RootSource: true},
		{Op: OpCopy, Src: srcDir + p.exe("walletgate-devnet"), Path: p.join(p.Lib, p.exe("walletgate-devnet")), Mode: 0o755, Replace: true, Optional: true, RootSource: true},
	}
}

// unixLayout is what Linux and macOS install alike once the user exists:
// its home and state, the socket's directory (and its parent, where that
// is not the system's: runParent), the binaries, the key, the config and
// the unit, and the passkey enrolment.
func unixLayout(o InstallOptions, f Facts, unit string, runParent bool) ([]Step, Config, []string, string) {
	p, u := o.Paths, o.User
	steps := []Step{
		{Op: OpDir, Path: p.Home, Mode: 0o700, Owner: u, Group: u},
		{Op: OpDir, Path: p.State(), Mode: 0o700, Owner: u, Group: u},
	}
	if runParent {
		steps = append(steps, Step{Op: OpDir, Path: p.dir(p.Run), Mode: 0o755})
	}
	steps = append(steps,
		Step{Op: OpDir, Path: p.Run, Mode: 0o755, Owner: u, Group: u},
		Step{Op: OpDir, Path: p.Lib, Mode: 0o755},
		Step{Op: OpDir, Path: p.dir(p.Config), Mode: 0o750, Group: u},
	)
	steps = append(steps, binaries(o, p)...)
	keys, env, imported, newKey, removals := imports(o, p, u)
	steps = append(steps, keys...)
	c := Config{User: u, Users: f.Peers, Socket: p.Socket(), Env: env, PagePort: o.PagePort}
	steps = append(steps,
		Step{Op: OpWrite, Path: p.Config, Data: c.Marshal(), Mode: 0o640, Group: u},
		Step{Op: OpWrite, Path: p.Unit, Data: []byte(unit), Mode: 0o644},
		Step{Op: OpEnrol, Path: p.State(), Owner: u, Group: u},
	)
	return append(steps, removals...), c, imported, newKey
}

func planLinux(o InstallOptions, f Facts) (Plan, error) {
	p, u := o.Paths, o.User
	var steps []Step
	if !f.UserExists {
		steps = append(steps, Step{Op: OpRun, Argv: []string{"useradd", "--system", "--user-group", "--home-dir", p.Home, "--no-create-home", "--shell", "/usr/sbin/nologin", u}})
	}
	layout, c, imported, newKey := unixLayout(o, f, SystemdUnit(p, u), false)
	steps = append(steps, layout...)
	plan := Plan{Config: c, Imported: imported, NewKey: newKey}
	if o.SystemdRuns {
		steps = append(steps,
			Step{Op: OpRun, Argv: []string{"systemctl", "daemon-reload"}},
			Step{Op: OpRun, Argv: []string{"systemctl", "enable", "--now", "walletgate.service"}})
		plan.Started = "systemctl status walletgate"
	}
	plan.Steps = steps
	return plan, nil
}

// darwinIDs are the ids a macOS service user may take: below 500, so that
// the login window does not list it, and above the ones macOS itself takes.
const darwinIDLow, darwinIDHigh = 300, 499

// FreeDaemonID is the highest id in 300 to 499 that no user and no group
// holds, for a macOS daemon's user and its group.
func FreeDaemonID(used []int) (int, error) {
	for id := darwinIDHigh; id >= darwinIDLow; id-- {
		if !slices.Contains(used, id) {
			return id, nil
		}
	}
	return 0, fmt.Errorf("no user or group id from %d to %d is free for the service user: free one, or make the user yourself and name it with --service-user", darwinIDLow, darwinIDHigh)
}

// ParseDsclIDs reads the ids out of `dscl . -list /Users UniqueID` (or
// /Groups PrimaryGroupID): a name and a number a line.
func ParseDsclIDs(out string) []int {
	var ids []int
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		if id, err := strconv.Atoi(fields[len(fields)-1]); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func planDarwin(o InstallOptions, f Facts) (Plan, error) {
	p, u := o.Paths, o.User
	var steps []Step
	if !f.UserExists {
		id, err := FreeDaemonID(f.UsedIDs)
		if err != nil {
			return Plan{}, err
		}
		ids := strconv.Itoa(id)
		g, usr := "/Groups/"+u, "/Users/"+u
		dscl := func(args ...string) Step {
			return Step{Op: OpRun, Argv: append([]string{"dscl", "."}, args...)}
		}
		steps = append(steps,
			dscl("-create", g),
			dscl("-create", g, "PrimaryGroupID", ids),
			dscl("-create", g, "Password", "*"),
			dscl("-create", g, "RealName", "walletgate service"),
			dscl("-create", usr),
			dscl("-create", usr, "UniqueID", ids),
			dscl("-create", usr, "PrimaryGroupID", ids),
			dscl("-create", usr, "UserShell", "/usr/bin/false"),
			dscl("-create", usr, "NFSHomeDirectory", p.Home),
			dscl("-create", usr, "RealName", "walletgate service"),
			dscl("-create", usr, "Password", "*"),
			dscl("-create", usr, "IsHidden", "1"),
		)
		if alias := strings.TrimPrefix(u, "_"); alias != u {
			steps = append(steps, dscl("-append", usr, "RecordName", alias), dscl("-append", g, "RecordName", alias))
		}
	}
	layout, c, imported, newKey := unixLayout(o, f, LaunchdPlist(p, u), true)
	steps = append(steps, layout...)
	steps = append(steps,
		// enable clears a disable left by an earlier bootout; bootstrap
		// loads the daemon, and RunAtLoad starts it.
		Step{Op: OpRun, Argv: []string{"launchctl", "enable", "system/" + LaunchdLabel}},
		Step{Op: OpRun, Argv: []string{"launchctl", "bootstrap", "system", p.Unit}},
	)
	return Plan{Steps: steps, Config: c, Imported: imported, NewKey: newKey, Started: "sudo launchctl print system/" + LaunchdLabel}, nil
}

// windowsACL is icacls's command that gives dir a protected ACL (nothing
// inherited from above) granting each of grants, inherited by what is put
// in it.
func windowsACL(dir string, grants ...string) Step {
	argv := []string{"icacls", dir, "/inheritance:r", "/grant:r"}
	for _, g := range grants {
		argv = append(argv, g+":(OI)(CI)"+"F")
	}
	return Step{Op: OpRun, Argv: argv}
}

// windowsOwn are icacls's commands that make dir (and what is in it) the
// Administrators' and drop every ACE set on it by hand, leaving what it
// inherits: a folder a desktop user made first (ProgramData lets them) is
// then no longer theirs to change, before windowsACL sets its ACL.
func windowsOwn(dir string) []Step {
	return []Step{
		{Op: OpRun, Argv: []string{"icacls", dir, "/setowner", sidAdministrators, "/T", "/C"}},
		{Op: OpRun, Argv: []string{"icacls", dir, "/reset", "/T", "/C"}},
	}
}

func planWindows(o InstallOptions, f Facts) (Plan, error) {
	p, u := o.Paths, o.User
	if u != `NT SERVICE\`+WindowsServiceName {
		return Plan{}, fmt.Errorf("on Windows the service runs as its virtual account NT SERVICE\\%s, which the service manager makes; --service-user %q is not supported", WindowsServiceName, u)
	}
	data := p.dir(p.Config)
	svc := &WindowsService{
		Name: WindowsServiceName, DisplayName: "walletgate",
		Description: "walletgate: a wallet for AI assistants, under its own account",
		Exe:         p.Binary(), Args: []string{"service", "run", "--config", p.Config}, Account: u,
	}
	steps := []Step{{Op: OpDir, Path: p.Lib}}
	steps = append(steps, windowsOwn(p.Lib)...)
	lib := windowsACL(p.Lib, sidSystem, sidAdministrators)
	lib.Argv = append(lib.Argv, sidUsers+":(OI)(CI)RX") // they run walletgate connect
	steps = append(steps, lib)
	steps = append(steps, binaries(o, p)...)
	// The account exists once the service does: register it first, then
	// name it in the ACLs.
	steps = append(steps, Step{Op: OpCreateService, Service: svc})
	acl := windowsACL(data, sidSystem, sidAdministrators)
	// The configuration's directory: the service reads it, nobody else.
	acl.Argv = append(acl.Argv, u+":(OI)(CI)RX")
	steps = append(steps, Step{Op: OpDir, Path: data})
	steps = append(steps, windowsOwn(data)...)
	steps = append(steps, acl, Step{Op: OpDir, Path: p.Home})
	steps = append(steps, windowsOwn(p.Home)...)
	steps = append(steps, windowsACL(p.Home, sidSystem, sidAdministrators, u))
	keys, env, imported, newKey, removals := imports(o, p, "")
	steps = append(steps, keys...)
	c := Config{User: u, Users: f.Peers, Socket: p.Socket(), Env: env, PagePort: o.PagePort}
	steps = append(steps,
		Step{Op: OpWrite, Path: p.Config, Data: c.Marshal()},
		Step{Op: OpEnrol, Path: p.State()},
		// The service's own files are the service's: the state directory's
		// owner-only check asks for that.
		Step{Op: OpRun, Argv: []string{"icacls", p.Home, "/setowner", u, "/T"}},
	)
	steps = append(steps, removals...)
	steps = append(steps, Step{Op: OpStartService, Service: svc})
	return Plan{Steps: steps, Config: c, Imported: imported, NewKey: newKey, Started: "sc.exe query walletgate"}, nil
}

// PlanUninstall is the uninstall on the system goos: stop and remove the
// service, the binaries, the configuration and the socket; with purge, also
// the service's home (the key and the journal) and its user.
// userExists says whether the service user is there to remove.
func PlanUninstall(goos string, p Paths, userName string, userExists, purge, systemdRuns bool) Plan {
	if userName == "" {
		userName = UserFor(goos)
	}
	var steps []Step
	switch goos {
	case "windows":
		steps = append(steps, Step{Op: OpDeleteService, Service: &WindowsService{Name: WindowsServiceName}, Optional: true})
	case "darwin":
		steps = append(steps, Step{Op: OpRun, Argv: []string{"launchctl", "bootout", "system/" + LaunchdLabel}, Optional: true})
	default:
		if systemdRuns {
			steps = append(steps, Step{Op: OpRun, Argv: []string{"systemctl", "disable", "--now", "walletgate.service"}, Optional: true})
		}
	}
	if p.Unit != "" {
		steps = append(steps, Step{Op: OpRemove, Path: p.Unit})
	}
	steps = append(steps, Step{Op: OpRemove, Path: p.Config}, Step{Op: OpRemove, Path: p.Lib, All: true})
	if p.Run != "" {
		steps = append(steps, Step{Op: OpRemove, Path: p.Run, All: true})
	}
	if goos == "darwin" {
		steps = append(steps, Step{Op: OpRemove, Path: p.dir(p.Run), Optional: true})
	}
	if goos != "windows" {
		// Root's, and empty once the configuration is gone (Optional: it
		// stays if something else was put there).
		steps = append(steps, Step{Op: OpRemove, Path: p.dir(p.Config), Optional: true})
	}
	if !purge {
		return Plan{Steps: steps}
	}
	steps = append(steps, Step{Op: OpRemove, Path: p.Home, All: true})
	if goos == "windows" {
		steps = append(steps, Step{Op: OpRemove, Path: p.dir(p.Config), All: true})
	}
	if !userExists {
		return Plan{Steps: steps}
	}
	switch goos {
	case "windows": // the virtual account went with the service
	case "darwin":
		steps = append(steps,
			Step{Op: OpRun, Argv: []string{"dscl", ".", "-delete", "/Users/" + userName}},
			Step{Op: OpRun, Argv: []string{"dscl", ".", "-delete", "/Groups/" + userName}})
	default:
		steps = append(steps, Step{Op: OpRun, Argv: []string{"userdel", userName}})
	}
	return Plan{Steps: steps}
}
