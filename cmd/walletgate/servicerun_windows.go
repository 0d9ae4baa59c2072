package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows/svc"

	"github.com/walletgate/walletgate/internal/service"
)

// runService runs serve, the service in the foreground; started by Windows's
// service manager, under it: the manager is told the service runs, and when
// it asks the service to stop (or the machine shuts down) the process ends,
// as a killed one would (a confirm under way is followed up by the next
// start, from the journal).
func runService(serve func() error) error {
	under, err := svc.IsWindowsService()
	if err != nil || !under {
		return serve()
	}
	return svc.Run(service.WindowsServiceName, managed{serve})
}

// managed is the service as the service manager sees it.
type managed struct{ serve func() error }

func (m managed) Execute(_ []string, requests <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	status <- svc.Status{State: svc.StartPending}
	done := make(chan error, 1)
	go func() { done <- m.serve() }()
	status <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
	for {
		select {
		case err := <-done:
			if err != nil {
				fmt.Fprintf(os.Stderr, "walletgate: %v\n", err)
				return true, 1
			}
			return false, 0
		case r := <-requests:
			switch r.Cmd {
			case svc.Interrogate:
				status <- r.CurrentStatus
			case svc.Stop, svc.Shutdown:
				status <- svc.Status{State: svc.StopPending}
				return false, 0
			}
		}
	}
}
