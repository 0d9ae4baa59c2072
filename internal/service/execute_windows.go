package service

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"time"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/walletgate/walletgate/approval"
)

// isAdmin reports whether this process runs elevated (an administrator's
// terminal).
func isAdmin() bool { return windows.GetCurrentProcessToken().IsElevated() }

// gatherFacts is what PlanInstall needs to know of this machine: the desktop
// users' SIDs (os/user gives a SID as a user's id on Windows).
func gatherFacts(o InstallOptions) (Facts, error) {
	var f Facts
	for _, name := range o.Users {
		u, err := user.Lookup(name)
		if err != nil {
			return Facts{}, fmt.Errorf("desktop user %q: %w", name, err)
		}
		if _, err := windows.StringToSid(u.Uid); err != nil {
			return Facts{}, fmt.Errorf("desktop user %q: SID %q: %w", name, u.Uid, err)
		}
		f.Peers = append(f.Peers, Peer{Name: name, SID: u.Uid})
	}
	return f, nil
}

// executeStep carries out one step on Windows. Modes and owners are not
// set: each directory's ACL (icacls, earlier in the plan) decides.
func executeStep(s Step, run func(string, ...string) error, out *outcome) error {
	if done, err := commonStep(s, run); done {
		return err
	}
	switch s.Op {
	case OpDir:
		return os.MkdirAll(s.Path, 0o755)
	case OpCreateService:
		return createService(s.Service)
	case OpStartService:
		return withService(s.Service.Name, func(sv *mgr.Service) error { return sv.Start() })
	case OpDeleteService:
		return withService(s.Service.Name, stopAndDelete)
	}
	if done, err := fileStep(s, 0o644, -1, -1, out); done {
		return err
	}
	return fmt.Errorf("unknown step %q", s.Op)
}

// createService registers ws with the service manager: started at boot, as
// its virtual account, with a service SID the ACLs can name, and started
// again 2 s after it fails, however often (a service that stops with an
// error, exit code 1, counts as failed as a crash does).
func createService(ws *WindowsService) error {
	m, err := mgr.Connect()
	if err != nil {
		return fmt.Errorf("connect to the service manager: %w", err)
	}
	defer m.Disconnect()
	sv, err := m.CreateService(ws.Name, ws.Exe, mgr.Config{
		StartType:        mgr.StartAutomatic,
		DisplayName:      ws.DisplayName,
		Description:      ws.Description,
		ServiceStartName: ws.Account,
		SidType:          windows.SERVICE_SID_TYPE_UNRESTRICTED,
	}, ws.Args...)
	if err != nil {
		return err
	}
	defer sv.Close()
	restart := mgr.RecoveryAction{Type: mgr.ServiceRestart, Delay: 2 * time.Second}
	if err := sv.SetRecoveryActions([]mgr.RecoveryAction{restart, restart, restart}, 60); err != nil {
		return fmt.Errorf("set the service's recovery (restart on failure): %w", err)
	}
	if err := sv.SetRecoveryActionsOnNonCrashFailures(true); err != nil {
		return fmt.Errorf("set the service's recovery on an exit with an error: %w", err)
	}
	return nil
}

func withService(name string, f func(*mgr.Service) error) error {
	m, err := mgr.Connect()
	if err != nil {
		return fmt.Errorf("connect to the service manager: %w", err)
	}
	defer m.Disconnect()
	sv, err := m.OpenService(name)
	if err != nil {
		return err
	}
	defer sv.Close()
	return f(sv)
}

// stopAndDelete stops the service, waits (30 s at most) until it has, so
// that its binary can be removed, and deletes it.
func stopAndDelete(sv *mgr.Service) error {
	if st, err := sv.Query(); err == nil && st.State != svc.Stopped {
		if _, err := sv.Control(svc.Stop); err == nil {
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
				if st, err := sv.Query(); err != nil || st.State == svc.Stopped {
					break
				}
			}
		}
	}
	return sv.Delete()
}

// Enrol writes a fresh passkey enrolment secret for the installed service
// (an administrator only) and prints its one-time link to out, and nowhere
// else.
func Enrol(p Paths, c Config, out io.Writer) error {
	if c.User != "" && !isAdmin() {
		return ErrNotRoot
	}
	if c.PagePort == 0 {
		return fmt.Errorf("this service has no passkey approval page (page_port is 0 in %s): set page_port there, as an administrator, and restart the service", p.Config)
	}
	dir := c.Env["WALLETGATE_STATE_DIR"]
	if dir == "" {
		dir = p.State()
	}
	secret, err := approval.NewEnrolment(dir, approval.EnrolmentTTL, -1, -1)
	if err != nil {
		return err
	}
	if c.User != "" {
		// The new file is the service's, as the rest of its state.
		if err := exec.Command("icacls", dir, "/setowner", c.User, "/T").Run(); err != nil {
			return fmt.Errorf("give the enrolment to %s: %w", c.User, err)
		}
	}
	fmt.Fprintf(out, "Enrol a passkey, in a browser on this computer (this link works once, for %d minutes, and is shown only here):\n  %s\n", int(approval.EnrolmentTTL/time.Minute), EnrolmentURL(c.PagePort, secret))
	fmt.Fprintln(out, "If a passkey is enrolled already, the new one approves nothing until an enrolled passkey approves its enrolment on the approval page, which lists every enrolment waiting.")
	return nil
}
