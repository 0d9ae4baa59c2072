package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"strconv"
	"syscall"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/internal/service"
)

// becomeServiceUser runs this walletgate again, with the same arguments, as
// the service's user (no supplementary groups but its own), and exits with
// its code: `sudo walletgate service run` where no init system runs. The
// service starts with a clean environment (serviceEnv), as systemd would
// start it: none of root's proxies, certificates or GODEBUG. The
// approval page's addresses are bound here, as root, and handed down: its
// port may be below 1024, which no other user can bind on Linux, and if any
// address is taken nothing starts.
func becomeServiceUser(sc service.Config) error {
	name := sc.User
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("the service user %s: %w (was the service installed?)", name, err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	if uid == 0 {
		return fmt.Errorf("the service user %s is root: refusing to serve as root", name)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	args := os.Args[1:]
	var files []*os.File
	if sc.PagePort != 0 {
		lns, err := approval.ListenLocalhost(sc.PagePort)
		if err != nil {
			return err
		}
		files, err = approval.ListenerFiles(lns)
		for _, ln := range lns {
			ln.Close() // the files are duplicates: they hold the addresses
		}
		if err != nil {
			return err
		}
		defer func() {
			for _, f := range files {
				f.Close()
			}
		}()
		args = append(args, "--page-listeners="+strconv.Itoa(len(files)))
	}
	cmd := exec.Command(self, args...)
	cmd.ExtraFiles = files
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = serviceEnv(u)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{uint32(gid)}}, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the service as %s: %w", name, err)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for sig := range sigs {
			_ = cmd.Process.Signal(sig)
		}
	}()
	err = cmd.Wait()
	if cmd.ProcessState != nil {
		return &childExit{code: cmd.ProcessState.ExitCode()}
	}
	return err
}

// serviceEnv is the whole environment the service starts with: a fixed PATH,
// its user's names and home, and nothing of the caller's.
func serviceEnv(u *user.User) []string {
	return []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + u.HomeDir, "USER=" + u.Username, "LOGNAME=" + u.Username, "LANG=C.UTF-8"}
}
