package service

import (
	"fmt"
	"net"
	"strings"

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

// PipeSDDL is the named pipe's security descriptor: a protected DACL that
// allows the system and the pipe's owner everything, and each named user
// read and write; nobody else may open it.
func PipeSDDL(c Config) (string, error) {
	var b strings.Builder
	b.WriteString("D:P(A;;GA;;;SY)(A;;GA;;;OW)")
	for _, p := range c.Users {
		if !strings.HasPrefix(p.SID, "S-1-") || strings.ContainsAny(p.SID, "();") {
			return "", fmt.Errorf("service configuration: user %q has no valid SID (%q)", p.Name, p.SID)
		}
		b.WriteString("(A;;GRGW;;;" + p.SID + ")")
	}
	return b.String(), nil
}

// Dial connects to the service's named pipe.
func Dial(path string) (net.Conn, error) { return winio.DialPipe(path, nil) }
