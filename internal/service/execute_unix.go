//go:build unix

package service

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strconv"
	"time"

	"github.com/walletgate/walletgate/approval"
)

// isAdmin reports whether this process runs as root.
func isAdmin() bool { return os.Geteuid() == 0 }

// gatherFacts is what PlanInstall needs to know of this machine: the desktop
// users' ids, whether the service user exists, and on macOS the ids in use.
func gatherFacts(o InstallOptions) (Facts, error) {
	var f Facts
	for _, name := range o.Users {
		u, err := user.Lookup(name)
		if err != nil {
			return Facts{}, fmt.Errorf("desktop user %q: %w", name, err)
		}
		uid, err := strconv.ParseUint(u.Uid, 10, 32)
		if err != nil {
			return Facts{}, fmt.Errorf("desktop user %q: user id %q: %w", name, u.Uid, err)
		}
		f.Peers = append(f.Peers, Peer{Name: name, UID: uint32(uid)})
	}
	if su, err := user.Lookup(o.User); err == nil {
		f.UserExists, f.ServiceUID = true, su.Uid
	}
	if runtime.GOOS == "darwin" && !f.UserExists {
		for _, list := range [][]string{{"/Users", "UniqueID"}, {"/Groups", "PrimaryGroupID"}} {
			out, err := exec.Command("dscl", ".", "-list", list[0], list[1]).Output()
			if err != nil {
				return Facts{}, fmt.Errorf("list the ids in use (dscl . -list %s %s): %w", list[0], list[1], err)
			}
			f.UsedIDs = append(f.UsedIDs, ParseDsclIDs(string(out))...)
		}
	}
	return f, nil
}

// ids are a step's owner and group as numbers ("" is root's, 0).
func ids(s Step) (uid, gid int, err error) {
	if s.Owner != "" {
		u, err := user.Lookup(s.Owner)
		if err != nil {
			return 0, 0, fmt.Errorf("the user %s: %w", s.Owner, err)
		}
		if uid, err = strconv.Atoi(u.Uid); err != nil {
			return 0, 0, err
		}
	}
	if s.Group != "" {
		g, err := user.LookupGroup(s.Group)
		if err != nil {
			return 0, 0, fmt.Errorf("the group %s: %w", s.Group, err)
		}
		if gid, err = strconv.Atoi(g.Gid); err != nil {
			return 0, 0, err
		}
	}
	return uid, gid, nil
}

func executeStep(s Step, run func(string, ...string) error, out *outcome) error {
	if done, err := commonStep(s, run); done {
		return err
	}
	switch s.Op {
	case OpCreateService, OpStartService, OpDeleteService:
		return fmt.Errorf("%s is a Windows step", s.Op)
	}
	uid, gid, err := ids(s)
	if err != nil {
		return err
	}
	switch s.Op {
	case OpDir:
		if err := os.MkdirAll(s.Path, s.Mode); err != nil {
			return err
		}
		if err := os.Chown(s.Path, uid, gid); err != nil {
			return err
		}
		return os.Chmod(s.Path, s.Mode)
	}
	if done, err := fileStep(s, s.Mode, uid, gid, out); done {
		return err
	}
	return fmt.Errorf("unknown step %q", s.Op)
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
	fmt.Fprintln(out, "If a passkey is enrolled already, the new one approves nothing until an enrolled passkey approves its enrolment on the approval page, which lists every enrolment waiting.")
	return nil
}
