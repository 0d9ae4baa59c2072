package app

import (
	"os/exec"
	"syscall"
)

// setChildAttrs asks Linux to stop the dev chain if this process dies: a
// second guard behind the closed stdin pipe.
func setChildAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
