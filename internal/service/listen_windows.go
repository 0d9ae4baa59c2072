package service

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/Microsoft/go-winio"

	"github.com/walletgate/walletgate/connlimit"
)

// Listen serves on the named pipe c.Socket (\\.\pipe\walletgate), whose ACL
// (PipeSDDL) lets only the system, the service's own account and the users c
// names open it: Windows checks the peer before the service sees it. At most
// MaxConns connections are open at once (every other is closed at once and
// reported to refused); an accept error that passes is retried, reported to
// retrying.
func Listen(c Config, refused func(uid uint32, err error), retrying func(err error, wait time.Duration)) (net.Listener, error) {
	sddl, err := PipeSDDL(c)
	if err != nil {
		return nil, err
	}
	ln, err := winio.ListenPipe(c.Socket, &winio.PipeConfig{SecurityDescriptor: sddl})
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", c.Socket, err)
	}
	return &connlimit.Listener[uint32]{Listener: ln, PerPeer: MaxConns, Total: MaxConns, Refused: refused, Retrying: retrying}, nil
}

// Dial connects to the service's named pipe.
// It asks for PipeClientAccess only: the pipe's ACL grants no more.
func Dial(path string) (net.Conn, error) {
	return winio.DialPipeAccess(context.Background(), path, PipeClientAccess)
}
