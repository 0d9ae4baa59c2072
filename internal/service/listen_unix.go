//go:build unix

package service

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"time"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/connlimit"
)

// Listen serves on the unix socket c.Socket. Accept returns only the
// connections of the users c names, MaxConnsPerUser of each and MaxConns in
// all at once: every other is closed at once, before a byte is read, and
// reported to refused. The socket file itself is open to all (0666): the
// peer's credentials, which it cannot choose, decide, so a refusal can say
// who was refused. An accept error that passes (out of file descriptors) is
// retried, reported to retrying; Accept fails only for good.
func Listen(c Config, refused func(uid uint32, err error), retrying func(err error, wait time.Duration)) (net.Listener, error) {
	if fi, err := os.Lstat(c.Socket); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("listen %s: the path exists and is not a socket; remove it or choose another socket", c.Socket)
		}
		if err := os.Remove(c.Socket); err != nil { // a socket left by a service that was killed
			return nil, fmt.Errorf("listen %s: %w", c.Socket, err)
		}
	}
	ln, err := net.Listen("unix", c.Socket)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", c.Socket, err)
	}
	if err := os.Chmod(c.Socket, 0o666); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen %s: %w", c.Socket, err)
	}
	return &connlimit.Listener[uint32]{Listener: ln, PerPeer: MaxConnsPerUser, Total: MaxConns,
		Peer: func(conn net.Conn) (uint32, error) {
			uid, err := approval.PeerUID(conn)
			if err == nil && !c.Allowed(uid) {
				err = ErrPeerRefused
			}
			return uid, err
		},
		Refused: refused, Retrying: retrying}, nil
}

// ErrPeerRefused says a connection came from a user not named at install.
var ErrPeerRefused = errors.New("the connecting user is not one of the users named at install")

// Dial connects to the service's socket.
func Dial(path string) (net.Conn, error) { return net.Dial("unix", path) }
