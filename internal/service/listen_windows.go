package service

import (
	"fmt"
	"net"

	"github.com/Microsoft/go-winio"
)

// Listen serves on the named pipe c.Socket (\\.\pipe\walletgate), whose ACL
// (PipeSDDL) lets only the system, the service's own account and the users c
// names open it: Windows checks the peer before the service sees it.
func Listen(c Config, refused func(uid uint32, err error)) (net.Listener, error) {
	sddl, err := PipeSDDL(c)
	if err != nil {
		return nil, err
	}
	ln, err := winio.ListenPipe(c.Socket, &winio.PipeConfig{SecurityDescriptor: sddl})
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", c.Socket, err)
	}
	return ln, nil
}

// Dial connects to the service's named pipe.
func Dial(path string) (net.Conn, error) { return winio.DialPipe(path, nil) }
