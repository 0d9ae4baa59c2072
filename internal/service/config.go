// Package service runs walletgate as a system service under a user of its
// own: its configuration (root's to change), the local socket that serves
// MCP to the desktop users named at install (checked by peer credentials),
// the keyless relay `walletgate connect`, and the install of the user, the
// key and the unit.
//
// Rules of this package: the configuration is read from a file only root can
// write; a connection from a user not named in it is closed before a byte of
// MCP is read; the relay opens no key, no journal and no configuration.
package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
)

// DefaultConfig is the configuration file on Linux and macOS (see Paths
// for the others).
const DefaultConfig = "/etc/walletgate/service.json"

// DefaultUser is the service's own user on this system (UserFor).
var DefaultUser = UserFor(runtime.GOOS)

// UserFor is the service's own user on the system goos: walletgate on
// Linux; _walletgate on macOS (daemons' names start with an underscore
// there; walletgate is its alias); on Windows the service's virtual
// account, which the service manager creates with the service.
func UserFor(goos string) string {
	switch goos {
	case "darwin":
		return "_walletgate"
	case "windows":
		return `NT SERVICE\walletgate`
	}
	return "walletgate"
}

// Config is the service's configuration file: who runs it, who may connect,
// where it listens, and the walletgate variables it serves with (caps,
// opt-ins, mode, key source, state directory). Its zero value names no
// user: every connection is refused.
type Config struct {
	// User is the service's own system user.
	User string `json:"user"`
	// Users are the desktop users allowed to connect, by name and id.
	Users []Peer `json:"users"`
	// Socket is the unix socket (a named pipe on Windows) MCP is served on.
	Socket string `json:"socket"`
	// Env holds the WALLETGATE_* variables the service runs with.
	Env map[string]string `json:"env"`
	// PagePort is the approval page's port: the page is served at
	// http://localhost:PagePort/ and approves only with an enrolled passkey
	// (the port is part of the origin the passkey is bound to). 0: no
	// passkey page; the page keeps a secret address, as in stdio mode.
	PagePort int `json:"page_port,omitempty"`
}

// DefaultPagePort is the approval page's port an install configures. It is
// below 1024: on Linux no unprivileged user can listen there, not even while
// the service is down or restarting (the service binds it as root before it
// becomes its user, or with the unit's CAP_NET_BIND_SERVICE). macOS and
// Windows let any user bind it: there the page's holding every address of
// localhost while it runs, and refusing to start otherwise, is the bound.
const DefaultPagePort = 746

// EnrolmentURL is the one-time passkey enrolment link for the page on port.
func EnrolmentURL(port int, secret string) string {
	return fmt.Sprintf("http://localhost:%d/enrol/%s", port, secret)
}

// Peer is a desktop user allowed to connect.
type Peer struct {
	Name string `json:"name"`
	UID  uint32 `json:"uid"`
	// SID is the user's security identifier on Windows ("" elsewhere).
	SID string `json:"sid,omitempty"`
}

// maxConfigBytes bounds the configuration file.
const maxConfigBytes = 1 << 20

// LoadConfig reads and checks the configuration file at path.
func LoadConfig(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, fmt.Errorf("service configuration: %w", err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxConfigBytes+1)); err != nil {
		return Config{}, fmt.Errorf("service configuration %s: %w", path, err)
	}
	if buf.Len() > maxConfigBytes {
		return Config{}, fmt.Errorf("service configuration %s: larger than %d bytes", path, maxConfigBytes)
	}
	return ParseConfig(buf.Bytes())
}

// ParseConfig decodes a configuration strictly (no unknown fields) and checks
// it.
func ParseConfig(b []byte) (Config, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("service configuration: %w", err)
	}
	if dec.More() {
		return Config{}, errors.New("service configuration: more than one JSON value")
	}
	return c, c.Check()
}

// Check refuses a configuration that could not run safely.
func (c Config) Check() error {
	if c.Socket == "" {
		return errors.New("service configuration: no socket")
	}
	if c.PagePort < 0 || c.PagePort > 65535 {
		return fmt.Errorf("service configuration: page_port %d is not a port (1 to 65535, or 0 for no passkey page)", c.PagePort)
	}
	for k := range c.Env {
		if !strings.HasPrefix(k, "WALLETGATE_") {
			return fmt.Errorf("service configuration: env holds %q, which is not a WALLETGATE_ variable", k)
		}
	}
	return nil
}

// Environ is Env as KEY=VALUE lines, sorted, for policy.Load.
func (c Config) Environ() []string {
	var env []string
	for k, v := range c.Env {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// Allowed reports whether the user id may connect.
func (c Config) Allowed(uid uint32) bool {
	return slices.ContainsFunc(c.Users, func(p Peer) bool { return p.UID == uid })
}

// Marshal is the configuration as the file holds it.
func (c Config) Marshal() []byte {
	b, _ := json.MarshalIndent(c, "", "  ")
	return append(b, '\n')
}
