package main

import (
	"os/exec"
	"syscall"
)

// setParentDeath makes the kernel stop the child if the bench dies without
// cleaning up (killed, crashed): nothing it started outlives it.
func setParentDeath(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
