package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"strconv"
	"syscall"
)

// becomeServiceUser runs this walletgate again, with the same arguments, as
// the service's user (no supplementary groups but its own), and exits with
// its code: `sudo walletgate service run` where no init system runs. The
// service starts with a clean environment (serviceEnv), as systemd would
// start it: none of root's proxies, certificates or GODEBUG.
func becomeServiceUser(name string) error {
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
	cmd := exec.Command(self, os.Args[1:]...)
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
