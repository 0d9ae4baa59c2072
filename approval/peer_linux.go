package approval

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// PeerUID returns, with SO_PEERCRED, the user id of the process on the other
// end of a unix socket (as the kernel recorded it at connect: the peer cannot
// choose it).
func PeerUID(c net.Conn) (uint32, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, fmt.Errorf("peer credentials: %w", cerr)
	}
	return cred.Uid, nil
}

// peerIsMe checks, with SO_PEERCRED, that the process on the other end of a
// unix socket runs as this user.
func peerIsMe(c net.Conn) error {
	uid, err := PeerUID(c)
	if err != nil {
		return err
	}
	if int(uid) != os.Getuid() {
		return fmt.Errorf("the connecting process runs as uid %d, not as walletgate's user", uid)
	}
	return nil
}
