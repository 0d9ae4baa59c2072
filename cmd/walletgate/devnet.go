package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/walletgate/walletgate/internal/app"
)

// cmdDevnet runs `walletgate devnet ARGS…` as `walletgate-devnet ARGS…`: the
// dev chain is its own binary (this one links no node), and the old command
// keeps working for scripts and muscle memory. Its stdout, stderr and exit
// status are the child's; Ctrl-C and SIGTERM are passed on to it.
func cmdDevnet(argv []string, stdout, stderr io.Writer) error {
	bin, err := app.FindDevnet()
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, argv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			if err := cmd.Process.Signal(sig); err != nil {
				_ = cmd.Process.Kill() // Windows delivers no signals to a child
			}
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return &childExit{code: ee.ExitCode()}
			}
			return err
		}
	}
}

// childExit is a child's non-zero exit status, already explained on stderr
// by the child itself.
type childExit struct{ code int }

func (e *childExit) Error() string { return "walletgate-devnet failed" }
