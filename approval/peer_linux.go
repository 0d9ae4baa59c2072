package approval

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// peerIsMe checks, with SO_PEERCRED, that the process on the other end of a
// unix socket runs as this user.
func peerIsMe(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("peer credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the connecting process runs as uid %d, not as walletgate's user", cred.Uid)
	}
	return nil
}
