package service

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The install and uninstall plans of every system, checked here on any
// system: the code that carries them out is build-tagged, and only Linux's
// is run end to end (cmd/walletgate's TestServiceTheDesktopUserCannotGetInAndThePersonCan).

// stepAt is the index of the first step matching, or -1.
func stepAt(plan Plan, match func(Step) bool) int { return slices.IndexFunc(plan.Steps, match) }

func runs(argv ...string) func(Step) bool {
	return func(s Step) bool { return s.Op == OpRun && slices.Equal(s.Argv, argv) }
}

func at(op Op, path string) func(Step) bool {
	return func(s Step) bool { return s.Op == op && s.Path == path }
}

// keySources are the two ways to give the key, and the copies each makes.
var keySources = map[string]struct {
	opts   func(InstallOptions) InstallOptions
	user   []string          // the user's files (none: the service makes its own key)
	copies map[string]string // env variable -> the copy's name in the home
}{
	"its own key": {opts: func(o InstallOptions) InstallOptions { return o }},
	"key file": {
		opts: func(o InstallOptions) InstallOptions { o.KeyFile = "/home/alice/wallet.key"; return o },
		user: []string{"/home/alice/wallet.key"}, copies: map[string]string{"WALLETGATE_KEY_FILE": "key"},
	},
	"keystore and password file": {
		opts: func(o InstallOptions) InstallOptions {
			o.Keystore, o.Password = "/home/alice/ks/UTC--x", "/home/alice/pw"
			return o
		},
		user: []string{"/home/alice/ks/UTC--x", "/home/alice/pw"}, copies: map[string]string{"WALLETGATE_KEYSTORE": "keystore.json", "WALLETGATE_PASSWORD_FILE": "password"},
	},
}

// requireKeyImported checks that the plan copies each of the user's files
// into home, 0600 and the service user's (owner "" on Windows, where the
// ACL decides), after the step that makes home private; checks the copy
// loads; removes the user's file only after every other file step (the
// enrolment included); and points the configuration at the copies.
func requireKeyImported(t *testing.T, plan Plan, p Paths, owner string, user []string, copies map[string]string, private int) {
	t.Helper()
	require.Equal(t, user, plan.Imported, "the install names the user's files, to say it removed them")
	require.Empty(t, plan.NewKey, "an import makes no key")
	check := stepAt(plan, func(s Step) bool { return s.Op == OpCheckKey })
	require.GreaterOrEqual(t, check, 0, "the import is checked")
	enrol := stepAt(plan, func(s Step) bool { return s.Op == OpEnrol })
	for env, name := range copies {
		dst := p.join(p.Home, name)
		require.Equal(t, dst, plan.Config.Env[env])
		i := stepAt(plan, at(OpCopy, dst))
		require.GreaterOrEqual(t, i, 0, "%s is imported", dst)
		s := plan.Steps[i]
		require.Contains(t, user, s.Src)
		require.False(t, s.Replace, "an import never overwrites")
		require.False(t, s.Optional)
		require.Equal(t, os.FileMode(0o600), s.Mode, dst)
		require.Equal(t, owner, s.Owner, dst)
		require.Greater(t, i, private, "%s is copied in once its directory is private", dst)
		require.Less(t, i, check, "%s is checked once copied", dst)
		rm := stepAt(plan, at(OpRemove, s.Src))
		require.Greater(t, rm, check, "the user's copy %s is removed once the import is checked", s.Src)
		require.Greater(t, rm, enrol, "and once everything else is in place")
	}
	for _, s := range plan.Steps {
		for _, f := range user {
			require.False(t, s.Path == f && s.Op != OpRemove, "the user's copy is only removed: %s", s)
			require.NotContains(t, s.Argv, f, "the user's copy is left alone: %s", s)
		}
	}
	for _, v := range plan.Config.Env {
		require.NotContains(t, user, v, "the service reads its copies, not the user's files")
	}
	require.Equal(t, p.State(), plan.Config.Env["WALLETGATE_STATE_DIR"])
	require.Equal(t, "human", plan.Config.Env["WALLETGATE_CONFIRM"], "human mode is the service's default")
}

// requireOwnKey checks that, importing nothing, the plan makes the service's
// key in its home (0600, the service user's), once the home is private,
// and removes nothing of the user's.
func requireOwnKey(t *testing.T, plan Plan, p Paths, owner string, private int) {
	t.Helper()
	key := p.join(p.Home, "key")
	require.Equal(t, key, plan.NewKey)
	require.Empty(t, plan.Imported)
	i := stepAt(plan, at(OpNewKey, key))
	require.Greater(t, i, private, "the key is made once its directory is private")
	require.Equal(t, Step{Op: OpNewKey, Path: key, Mode: 0o600, Owner: owner, Group: owner}, plan.Steps[i])
	require.Equal(t, key, plan.Config.Env["WALLETGATE_KEY_FILE"])
	require.Equal(t, -1, stepAt(plan, func(s Step) bool { return s.Op == OpCheckKey || s.Op == OpCopy && strings.HasPrefix(s.Path, p.Home) }))
	for _, s := range plan.Steps {
		require.False(t, s.Op == OpRemove, "nothing is removed: %s", s)
	}
}

// requireKey is requireOwnKey or requireKeyImported, as the key source says.
func requireKey(t *testing.T, plan Plan, p Paths, owner string, user []string, copies map[string]string, private int) {
	t.Helper()
	if user == nil {
		requireOwnKey(t, plan, p, owner, private)
		return
	}
	requireKeyImported(t, plan, p, owner, user, copies, private)
}

func base(p Paths, binary string) InstallOptions {
	return InstallOptions{Paths: p, Users: []string{"alice"}, Binary: binary, Env: map[string]string{"WALLETGATE_CAP_PER_TX": "ETH=0.01"}}
}

func TestLinuxInstallPlan(t *testing.T) {
	p := LinuxPaths
	for name, src := range keySources {
		for _, systemd := range []bool{false, true} {
			t.Run(name, func(t *testing.T) {
				o := src.opts(base(p, "/home/alice/go/bin/walletgate"))
				o.SystemdRuns = systemd
				plan, err := PlanInstall("linux", o, Facts{Peers: []Peer{{Name: "alice", UID: 1000}}})
				require.NoError(t, err)
				require.Equal(t, 0, stepAt(plan, runs("useradd", "--system", "--user-group", "--home-dir", "/var/lib/walletgate", "--no-create-home", "--shell", "/usr/sbin/nologin", "walletgate")), "the service user is made first")
				home := stepAt(plan, at(OpDir, "/var/lib/walletgate"))
				require.Equal(t, Step{Op: OpDir, Path: "/var/lib/walletgate", Mode: 0o700, Owner: "walletgate", Group: "walletgate"}, plan.Steps[home])
				requireKey(t, plan, p, "walletgate", src.user, src.copies, home)
				cfg := plan.Steps[stepAt(plan, at(OpWrite, "/etc/walletgate/service.json"))]
				require.Equal(t, os.FileMode(0o640), cfg.Mode)
				require.Equal(t, "", cfg.Owner, "root's")
				require.Equal(t, "walletgate", cfg.Group, "the service reads it")
				require.Equal(t, plan.Config.Marshal(), cfg.Data)
				require.Equal(t, []Peer{{Name: "alice", UID: 1000}}, plan.Config.Users)
				require.Equal(t, "/run/walletgate/mcp.sock", plan.Config.Socket)
				bin := plan.Steps[stepAt(plan, at(OpCopy, "/usr/local/lib/walletgate/walletgate"))]
				require.Equal(t, Step{Op: OpCopy, Src: "/home/alice/go/bin/walletgate", Path: "/usr/local/lib/walletgate/walletgate", Mode: 0o755, Replace: true, RootSource: true}, bin, "root's binary, from a file only root can change")
				require.True(t, plan.Steps[stepAt(plan, at(OpCopy, "/usr/local/lib/walletgate/walletgate-devnet"))].RootSource, "walletgate-devnet too")
				require.Equal(t, "/home/alice/go/bin/walletgate-devnet", plan.Steps[stepAt(plan, at(OpCopy, "/usr/local/lib/walletgate/walletgate-devnet"))].Src)
				enrol := stepAt(plan, at(OpEnrol, "/var/lib/walletgate/state"))
				require.Equal(t, "walletgate", plan.Steps[enrol].Owner)
				start := stepAt(plan, runs("systemctl", "enable", "--now", "walletgate.service"))
				if systemd {
					require.Greater(t, start, enrol, "the service starts once everything is in place")
					require.Equal(t, "systemctl status walletgate", plan.Started)
				} else {
					require.Equal(t, -1, start, "no systemd: nothing starts it")
					require.Empty(t, plan.Started)
				}
			})
		}
	}
	// An existing service user is not made again, and cannot be a desktop user.
	o := keySources["key file"].opts(base(p, "/usr/bin/walletgate"))
	plan, err := PlanInstall("linux", o, Facts{UserExists: true, ServiceUID: "998", Peers: []Peer{{Name: "alice", UID: 1000}}})
	require.NoError(t, err)
	require.Equal(t, -1, stepAt(plan, func(s Step) bool { return s.Op == OpRun && s.Argv[0] == "useradd" }))
	_, err = PlanInstall("linux", o, Facts{UserExists: true, ServiceUID: "1000", Peers: []Peer{{Name: "alice", UID: 1000}}})
	require.ErrorContains(t, err, "is the service user")
	_, err = PlanInstall("linux", o, Facts{Peers: []Peer{{Name: "root", UID: 0}}})
	require.ErrorContains(t, err, "is root")
	_, err = PlanInstall("freebsd", o, Facts{Peers: []Peer{{Name: "alice", UID: 1000}}})
	require.ErrorContains(t, err, "not freebsd", "no Linux commands on another system")
}

func TestInstallPlanRefusesWhatCannotBeInstalled(t *testing.T) {
	peers := Facts{Peers: []Peer{{Name: "alice", UID: 1000, SID: "S-1-5-21-1-2-3-1001"}}}
	for name, c := range map[string]struct {
		o    func(InstallOptions) InstallOptions
		f    Facts
		want string
	}{
		"two keys":                {func(o InstallOptions) InstallOptions { o.KeyFile, o.Keystore = "/k", "/ks"; return o }, peers, "give one key to import"},
		"a keystore, no password": {func(o InstallOptions) InstallOptions { o.Keystore = "/ks"; return o }, peers, "needs --password-file"},
		"a password, no keystore": {func(o InstallOptions) InstallOptions { o.Password = "/pw"; return o }, peers, "goes with --import-keystore"},
		"no desktop user":         {func(o InstallOptions) InstallOptions { o.KeyFile = "/k"; return o }, Facts{}, "--users"},
		"a key variable": {func(o InstallOptions) InstallOptions {
			o.KeyFile, o.Env = "/k", map[string]string{"WALLETGATE_KEY_FILE": "/x"}
			return o
		}, peers, "set by the install"},
	} {
		for _, goos := range []string{"linux", "darwin", "windows"} {
			o := c.o(base(PathsFor(goos, func(string) string { return "" }), "/b/walletgate"))
			_, err := PlanInstall(goos, o, c.f)
			require.ErrorContains(t, err, c.want, "%s on %s", name, goos)
		}
	}
}

func TestDarwinInstallPlan(t *testing.T) {
	p := DarwinPaths
	for name, src := range keySources {
		t.Run(name, func(t *testing.T) {
			o := src.opts(base(p, "/Users/alice/bin/walletgate"))
			used := ParseDsclIDs("_www 70\n_nobody -2\n_one 499\n_two 498\nalice 501\n")
			plan, err := PlanInstall("darwin", o, Facts{Peers: []Peer{{Name: "alice", UID: 501}}, UsedIDs: used})
			require.NoError(t, err)
			// A hidden daemon user and its group, id 497: the highest free
			// below 500.
			for _, argv := range [][]string{
				{"dscl", ".", "-create", "/Groups/_walletgate", "PrimaryGroupID", "497"},
				{"dscl", ".", "-create", "/Users/_walletgate", "UniqueID", "497"},
				{"dscl", ".", "-create", "/Users/_walletgate", "PrimaryGroupID", "497"},
				{"dscl", ".", "-create", "/Users/_walletgate", "UserShell", "/usr/bin/false"},
				{"dscl", ".", "-create", "/Users/_walletgate", "NFSHomeDirectory", "/var/db/walletgate"},
				{"dscl", ".", "-create", "/Users/_walletgate", "Password", "*"},
				{"dscl", ".", "-create", "/Users/_walletgate", "IsHidden", "1"},
				{"dscl", ".", "-append", "/Users/_walletgate", "RecordName", "walletgate"},
			} {
				require.GreaterOrEqual(t, stepAt(plan, runs(argv...)), 0, "%v", argv)
			}
			made := stepAt(plan, runs("dscl", ".", "-create", "/Users/_walletgate", "UniqueID", "497"))
			home := stepAt(plan, at(OpDir, "/var/db/walletgate"))
			require.Greater(t, home, made, "the home is the user's once the user exists")
			require.Equal(t, Step{Op: OpDir, Path: "/var/db/walletgate", Mode: 0o700, Owner: "_walletgate", Group: "_walletgate"}, plan.Steps[home])
			requireKey(t, plan, p, "_walletgate", src.user, src.copies, home)
			require.Equal(t, "/Library/Application Support/walletgate/run/mcp.sock", plan.Config.Socket)
			require.Equal(t, Step{Op: OpDir, Path: "/Library/Application Support/walletgate/run", Mode: 0o755, Owner: "_walletgate", Group: "_walletgate"},
				plan.Steps[stepAt(plan, at(OpDir, "/Library/Application Support/walletgate/run"))], "the service makes its socket there; the desktop users reach it")
			cfg := plan.Steps[stepAt(plan, at(OpWrite, "/etc/walletgate/service.json"))]
			require.Equal(t, [3]any{os.FileMode(0o640), "", "_walletgate"}, [3]any{cfg.Mode, cfg.Owner, cfg.Group})
			plist := stepAt(plan, at(OpWrite, "/Library/LaunchDaemons/dev.walletgate.service.plist"))
			require.GreaterOrEqual(t, plist, 0)
			s := plan.Steps[plist]
			require.Equal(t, [2]any{os.FileMode(0o644), ""}, [2]any{s.Mode, s.Owner}, "launchd loads only root's plists")
			require.Equal(t, LaunchdPlist(p, "_walletgate"), string(s.Data))
			require.Contains(t, string(s.Data), "<key>UserName</key><string>_walletgate</string>")
			enrol := stepAt(plan, at(OpEnrol, "/var/db/walletgate/state"))
			boot := stepAt(plan, runs("launchctl", "bootstrap", "system", "/Library/LaunchDaemons/dev.walletgate.service.plist"))
			require.Equal(t, len(plan.Steps)-1, boot, "bootstrapped last")
			require.Greater(t, boot, enrol)
			require.Greater(t, boot, plist)
			require.Equal(t, "sudo launchctl print system/dev.walletgate.service", plan.Started)
		})
	}
	o := keySources["key file"].opts(base(p, "/b/walletgate"))
	plan, err := PlanInstall("darwin", o, Facts{UserExists: true, ServiceUID: "497", Peers: []Peer{{Name: "alice", UID: 501}}})
	require.NoError(t, err)
	require.Equal(t, -1, stepAt(plan, func(s Step) bool { return s.Op == OpRun && s.Argv[0] == "dscl" }), "an existing user is not made again")
}

func TestFreeDaemonIDIsBelow500AndFreeForUserAndGroup(t *testing.T) {
	id, err := FreeDaemonID(nil)
	require.NoError(t, err)
	require.Equal(t, 499, id)
	id, err = FreeDaemonID([]int{499, 497, 498, 0, 501})
	require.NoError(t, err)
	require.Equal(t, 496, id)
	var all []int
	for i := 300; i < 500; i++ {
		all = append(all, i)
	}
	_, err = FreeDaemonID(all)
	require.ErrorContains(t, err, "no user or group id")
	require.Equal(t, []int{-2, 0, 499}, ParseDsclIDs("nobody               -2\nroot 0\n\n_walletgate 499\nbroken line\n"))
}

func TestWindowsInstallPlan(t *testing.T) {
	p := WindowsPaths(`D:\ProgramData`, `D:\Program Files`)
	const account = `NT SERVICE\walletgate`
	alice := Peer{Name: "alice", SID: "S-1-5-21-1-2-3-1001"}
	for name, src := range keySources {
		t.Run(name, func(t *testing.T) {
			o := src.opts(base(p, `C:\Users\alice\walletgate.exe`))
			o.User = UserFor("windows")
			plan, err := PlanInstall("windows", o, Facts{Peers: []Peer{alice}})
			require.NoError(t, err)
			create := stepAt(plan, func(s Step) bool { return s.Op == OpCreateService })
			require.GreaterOrEqual(t, create, 0)
			require.Equal(t, &WindowsService{
				Name: "walletgate", DisplayName: "walletgate", Description: "walletgate: a wallet for AI assistants, under its own account",
				Exe: `D:\Program Files\walletgate\walletgate.exe`, Args: []string{"service", "run", "--config", `D:\ProgramData\walletgate\service.json`}, Account: account,
			}, plan.Steps[create].Service, "a service run by its virtual account")
			bin := stepAt(plan, at(OpCopy, `D:\Program Files\walletgate\walletgate.exe`))
			require.Less(t, bin, create)
			require.Equal(t, `C:\Users\alice\walletgate.exe`, plan.Steps[bin].Src)
			require.Equal(t, `C:\Users\alice\walletgate-devnet.exe`, plan.Steps[stepAt(plan, at(OpCopy, `D:\Program Files\walletgate\walletgate-devnet.exe`))].Src)
			// Each directory is made the Administrators' and stripped of
			// what was set on it by hand before its ACL is set: a folder a
			// desktop user made first in ProgramData is theirs no more.
			for _, dir := range []string{`D:\ProgramData\walletgate`, `D:\ProgramData\walletgate\home`, `D:\Program Files\walletgate`} {
				own := stepAt(plan, runs("icacls", dir, "/setowner", "*S-1-5-32-544", "/T", "/C"))
				reset := stepAt(plan, runs("icacls", dir, "/reset", "/T", "/C"))
				acl := stepAt(plan, func(s Step) bool {
					return s.Op == OpRun && len(s.Argv) > 2 && s.Argv[1] == dir && s.Argv[2] == "/inheritance:r"
				})
				require.True(t, own >= 0 && own < reset && reset < acl, "%s: owned, reset, then its ACL (%d, %d, %d)", dir, own, reset, acl)
			}
			require.Less(t, stepAt(plan, runs("icacls", `D:\Program Files\walletgate`, "/setowner", "*S-1-5-32-544", "/T", "/C")), bin, "the binaries' folder is the Administrators' before they are copied in")
			// The home: a protected ACL for the system, the administrators
			// and the service alone, set once the account exists and before
			// the key is copied in.
			homeACL := stepAt(plan, runs("icacls", `D:\ProgramData\walletgate\home`, "/inheritance:r", "/grant:r",
				"*S-1-5-18:(OI)(CI)F", "*S-1-5-32-544:(OI)(CI)F", account+":(OI)(CI)F"))
			require.Greater(t, homeACL, create)
			requireKey(t, plan, p, "", src.user, src.copies, homeACL)
			require.Equal(t, `D:\ProgramData\walletgate\home\state`, plan.Config.Env["WALLETGATE_STATE_DIR"])
			// The configuration's directory: the service reads, only the
			// administrators write, the desktop users get nothing.
			cfgACL := stepAt(plan, runs("icacls", `D:\ProgramData\walletgate`, "/inheritance:r", "/grant:r",
				"*S-1-5-18:(OI)(CI)F", "*S-1-5-32-544:(OI)(CI)F", account+":(OI)(CI)RX"))
			require.Greater(t, cfgACL, create)
			cfg := stepAt(plan, at(OpWrite, `D:\ProgramData\walletgate\service.json`))
			require.Greater(t, cfg, cfgACL, "the configuration is written once its directory is closed")
			for _, s := range plan.Steps {
				require.NotContains(t, strings.Join(s.Argv, " "), alice.SID, "no ACL of the files names the desktop user")
			}
			// The pipe: only the named users, by SID.
			require.Equal(t, `\\.\pipe\walletgate`, plan.Config.Socket)
			sddl, err := PipeSDDL(plan.Config)
			require.NoError(t, err)
			require.Equal(t, "D:P(A;;GA;;;SY)(A;;GA;;;OW)(A;;0x0012019b;;;S-1-5-21-1-2-3-1001)", sddl)
			enrol := stepAt(plan, at(OpEnrol, `D:\ProgramData\walletgate\home\state`))
			owner := stepAt(plan, runs("icacls", `D:\ProgramData\walletgate\home`, "/setowner", account, "/T"))
			require.Greater(t, owner, enrol, "the service owns its state, the enrolment included")
			start := stepAt(plan, func(s Step) bool { return s.Op == OpStartService })
			require.Equal(t, len(plan.Steps)-1, start, "started last")
		})
	}
	o := keySources["key file"].opts(base(p, `C:\walletgate.exe`))
	o.User = UserFor("windows")
	_, err := PlanInstall("windows", o, Facts{Peers: []Peer{{Name: "alice"}}})
	require.ErrorContains(t, err, "no SID")
	o.User = "walletgate"
	_, err = PlanInstall("windows", o, Facts{Peers: []Peer{alice}})
	require.ErrorContains(t, err, "virtual account")
}

func TestUninstallPlansKeepTheKeyAndTheJournalUnlessPurged(t *testing.T) {
	for _, c := range []struct {
		goos       string
		p          Paths
		stop, user []string
	}{
		{"linux", LinuxPaths, []string{"systemctl", "disable", "--now", "walletgate.service"}, []string{"userdel", "walletgate"}},
		{"darwin", DarwinPaths, []string{"launchctl", "bootout", "system/dev.walletgate.service"}, []string{"dscl", ".", "-delete", "/Users/_walletgate"}},
		{"windows", WindowsPaths("", ""), nil, nil},
	} {
		for _, purge := range []bool{false, true} {
			plan := PlanUninstall(c.goos, c.p, "", true, purge, true)
			if c.stop != nil {
				i := stepAt(plan, runs(c.stop...))
				require.Equal(t, 0, i, "%s: stopped first", c.goos)
				require.True(t, plan.Steps[i].Optional, "a service that does not run is no error")
			} else {
				require.Equal(t, OpDeleteService, plan.Steps[0].Op, c.goos)
			}
			require.GreaterOrEqual(t, stepAt(plan, at(OpRemove, c.p.Config)), 0, c.goos)
			require.GreaterOrEqual(t, stepAt(plan, at(OpRemove, c.p.Lib)), 0, c.goos)
			home := stepAt(plan, at(OpRemove, c.p.Home))
			if !purge {
				require.Equal(t, -1, home, "%s: the key and the journal are kept", c.goos)
				for _, s := range plan.Steps {
					require.False(t, s.All && strings.HasPrefix(c.p.Home, s.Path), "%s: nothing removes the home: %s", c.goos, s)
				}
				continue
			}
			require.GreaterOrEqual(t, home, 0, c.goos)
			if c.user != nil {
				require.Greater(t, stepAt(plan, runs(c.user...)), home, "%s: the user goes last", c.goos)
				require.Equal(t, -1, stepAt(PlanUninstall(c.goos, c.p, "", false, true, true), runs(c.user...)), "%s: a missing user is not removed", c.goos)
			}
		}
	}
}

// The Windows folders come from Windows (the known folders), not from the
// environment: a %ProgramData% of the user's making changes nothing.
func TestDefaultPathsTakeNothingFromTheEnvironment(t *testing.T) {
	t.Setenv("ProgramData", `C:\Users\mallory\pd`)
	t.Setenv("ProgramFiles", `C:\Users\mallory\pf`)
	w := PathsFor("windows", systemFolder)
	require.NotContains(t, w.Config, "mallory")
	require.NotContains(t, w.Lib, "mallory")
}

func TestPathsForEachSystem(t *testing.T) {
	w := PathsFor("windows", func(k string) string {
		return map[string]string{"ProgramData": `E:\PD\`, "ProgramFiles": `E:\PF`}[k]
	})
	require.Equal(t, `E:\PF\walletgate\walletgate.exe`, w.Binary())
	require.Equal(t, `E:\PD\walletgate\service.json`, w.Config)
	require.Equal(t, `E:\PD\walletgate\home\state`, w.State())
	require.Equal(t, `\\.\pipe\walletgate`, w.Socket())
	require.Equal(t, `C:\ProgramData\walletgate\service.json`, WindowsPaths("", "").Config)
	require.Equal(t, "/run/walletgate/mcp.sock", PathsFor("linux", nil).Socket())
	require.Equal(t, "/usr/local/lib/walletgate/walletgate", PathsFor("freebsd", nil).Binary())
	require.Equal(t, "/Library/Application Support/walletgate/run/mcp.sock", PathsFor("darwin", nil).Socket())
	require.Equal(t, "/var/db/walletgate/state", PathsFor("darwin", nil).State())
}
