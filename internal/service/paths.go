package service

import "path/filepath"

// Paths are where an install puts each part. Every directory but State and
// Socket's belongs to root; the key, the password and the state belong to
// the service user alone.
type Paths struct {
	Config string // the configuration file: root writes it, the service user reads it
	Lib    string // the installed binaries (root's: the desktop user cannot swap them)
	Home   string // the service user's own directory: key, password, state
	Run    string // the socket's directory
	Unit   string // the systemd unit
}

// DefaultPaths are the Linux paths.
var DefaultPaths = Paths{
	Config: DefaultConfig,
	Lib:    "/usr/local/lib/walletgate",
	Home:   "/var/lib/walletgate",
	Run:    "/run/walletgate",
	Unit:   "/etc/systemd/system/walletgate.service",
}

// DefaultSocket is the service's socket on Linux and macOS.
const DefaultSocket = "/run/walletgate/mcp.sock"

// StartHint says how a person starts the service.
const StartHint = "`sudo systemctl start walletgate` where systemd runs, or `sudo walletgate service run` in a terminal where no init system runs"

// Binary is the installed walletgate.
func (p Paths) Binary() string { return filepath.Join(p.Lib, "walletgate") }

// State is the journal's directory (WALLETGATE_STATE_DIR).
func (p Paths) State() string { return filepath.Join(p.Home, "state") }

// Socket is the socket in Run.
func (p Paths) Socket() string { return filepath.Join(p.Run, "mcp.sock") }
