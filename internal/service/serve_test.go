package service

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// failing is a listener whose Accept fails with err.
type failing struct {
	net.Listener
	err    error
	closed chan struct{}
}

func (f *failing) Accept() (net.Conn, error) {
	if f.err != nil {
		return nil, f.err
	}
	<-f.closed
	return nil, net.ErrClosed
}
func (f *failing) Close() error { close(f.closed); return nil }

// A listener that fails for good ends Serve with its error (the service
// exits non-zero: its init system restarts it); a listener closed because
// the service was asked to stop ends it with nil (exit 0).
func TestServeEndsWithTheListenersFatalErrorAndWithNilWhenStopped(t *testing.T) {
	boom := errors.New("boom")
	err := Serve(context.Background(), &failing{err: boom, closed: make(chan struct{})}, func(net.Conn) bool { return true })
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "for the init system to start the service again")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Serve(ctx, &failing{closed: make(chan struct{})}, func(net.Conn) bool { return true }) }()
	cancel()
	require.NoError(t, <-done, "asked to stop, the service ends with nil")
}

// The unit restarts a service that exits non-zero, for as long as it takes.
func TestTheUnitRestartsAServiceThatFails(t *testing.T) {
	u := SystemdUnit(LinuxPaths, DefaultUser)
	for _, line := range []string{"Restart=on-failure", "RestartSec=2", "StartLimitIntervalSec=0"} {
		require.Contains(t, u, "\n"+line+"\n")
	}
}
