package service

import (
	"path"
	"runtime"
	"strings"
)

// Paths are where an install puts each part. Every directory but State and
// Socket's belongs to root (the Administrators on Windows); the key, the
// password and the state belong to the service user alone.
type Paths struct {
	Config string // the configuration file: root writes it, the service user reads it
	Lib    string // the installed binaries (root's: the desktop user cannot swap them)
	Home   string // the service user's own directory: key, password, state
	Run    string // the socket's directory ("" on Windows)
	Unit   string // the systemd unit, or the launchd daemon's plist ("" on Windows)
	// Pipe is, on Windows, the named pipe served instead of a socket in Run.
	Pipe string
	// Windows says the paths are Windows paths: joined with \, the
	// binaries' names end in .exe.
	Windows bool
}

// LinuxPaths are the paths on Linux (and every Unix but macOS).
var LinuxPaths = Paths{
	Config: DefaultConfig,
	Lib:    "/usr/local/lib/walletgate",
	Home:   "/var/lib/walletgate",
	Run:    "/run/walletgate",
	Unit:   "/etc/systemd/system/walletgate.service",
}

// DarwinPaths are the paths on macOS. The socket's directory is not in
// /var/run, which macOS empties at boot and only root may write: the
// service, started by launchd as its user, could not make it again.
var DarwinPaths = Paths{
	Config: DefaultConfig,
	Lib:    "/usr/local/lib/walletgate",
	Home:   "/var/db/walletgate",
	Run:    "/Library/Application Support/walletgate/run",
	Unit:   "/Library/LaunchDaemons/" + LaunchdLabel + ".plist",
}

// WindowsPaths are the paths on Windows, under the machine's ProgramData
// and Program Files directories (C:\ProgramData, C:\Program Files when
// empty).
func WindowsPaths(programData, programFiles string) Paths {
	if programData == "" {
		programData = `C:\ProgramData`
	}
	if programFiles == "" {
		programFiles = `C:\Program Files`
	}
	data := winJoin(programData, "walletgate")
	return Paths{
		Config:  winJoin(data, "service.json"),
		Lib:     winJoin(programFiles, "walletgate"),
		Home:    winJoin(data, "home"),
		Pipe:    `\\.\pipe\walletgate`,
		Windows: true,
	}
}

// PathsFor are the paths on the system goos, with folder for Windows's
// ProgramData and ProgramFiles (never the environment's: see systemFolder).
func PathsFor(goos string, folder func(string) string) Paths {
	switch goos {
	case "darwin":
		return DarwinPaths
	case "windows":
		return WindowsPaths(folder("ProgramData"), folder("ProgramFiles"))
	}
	return LinuxPaths
}

// DefaultPaths are this system's paths. No location comes from the
// environment.
var DefaultPaths = PathsFor(runtime.GOOS, systemFolder)

// DefaultSocket is the service's socket (its named pipe on Windows) on this
// system.
var DefaultSocket = DefaultPaths.Socket()

// StartHint says how a person starts the service on this system.
var StartHint = startHint(runtime.GOOS)

// RestartHint says how a person restarts the service on this system, to
// apply a changed configuration.
var RestartHint = restartHint(runtime.GOOS)

func restartHint(goos string) string {
	switch goos {
	case "darwin":
		return "sudo launchctl kickstart -k system/" + LaunchdLabel
	case "windows":
		return "sc.exe stop walletgate, then sc.exe start walletgate, in an administrator's terminal"
	}
	return "sudo systemctl restart walletgate, or stop and start walletgate service run"
}

func startHint(goos string) string {
	switch goos {
	case "darwin":
		return "`sudo launchctl kickstart system/" + LaunchdLabel + "`"
	case "windows":
		return "`sc.exe start walletgate` in an administrator's terminal"
	}
	return "`sudo systemctl start walletgate` where systemd runs, or `sudo walletgate service run` in a terminal where no init system runs"
}

func winJoin(dir, name string) string { return strings.TrimRight(dir, `\`) + `\` + name }

// join is dir/name in the paths' own syntax.
func (p Paths) join(dir, name string) string {
	if p.Windows {
		return winJoin(dir, name)
	}
	return path.Join(dir, name)
}

// dir is the directory of file, in the paths' own syntax.
func (p Paths) dir(file string) string {
	if p.Windows {
		if i := strings.LastIndex(file, `\`); i > 0 {
			return file[:i]
		}
		return file
	}
	return path.Dir(file)
}

// exe is name as an executable's file name.
func (p Paths) exe(name string) string {
	if p.Windows {
		return name + ".exe"
	}
	return name
}

// Binary is the installed walletgate.
func (p Paths) Binary() string { return p.join(p.Lib, p.exe("walletgate")) }

// State is the journal's directory (WALLETGATE_STATE_DIR).
func (p Paths) State() string { return p.join(p.Home, "state") }

// Socket is the socket in Run, or the named pipe.
func (p Paths) Socket() string {
	if p.Pipe != "" {
		return p.Pipe
	}
	return p.join(p.Run, "mcp.sock")
}
