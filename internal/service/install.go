package service

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/walletgate/walletgate/internal/atomicfile"
)

// InstallOptions are what `walletgate service install` was asked.
type InstallOptions struct {
	Paths       Paths
	User        string   // the service user to create (DefaultUser)
	Users       []string // the desktop users allowed to connect
	KeyFile     string   // the key to import, or
	Keystore    string   // a keystore file to import, with
	Password    string   // its password file
	Env         map[string]string
	Binary      string // the walletgate to install (this one); walletgate-devnet beside it is installed too
	SystemdRuns bool   // systemd is the init system here: enable and start the unit
	PagePort    int    // the passkey approval page's port (DefaultPagePort when 0)
	// Run runs a command (useradd, systemctl); nil: os/exec.
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
// mode perm, owned by uid:gid.
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
	if err := out.Chown(uid, gid); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Chmod(perm); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// WriteConfig writes c to path, root's, readable by the service's group.
func WriteConfig(path string, c Config, gid int) error {
	if err := c.Check(); err != nil {
		return err
	}
	return atomicfile.Write(path, c.Marshal(), 0o640, 0, gid)
}

// ErrNotRoot says an install step needs root.
var ErrNotRoot = errors.New("this needs root: run it with sudo")
