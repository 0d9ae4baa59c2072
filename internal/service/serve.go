package service

import (
	"context"
	"fmt"
	"net"
)

// Serve hands each connection ln accepts to handle, until ctx is done or
// handle says there is no more to serve (then it returns nil), or until ln
// fails for good: that error is returned, so that the service exits
// non-zero and its init system starts it again (systemd's
// Restart=on-failure, launchd's KeepAlive, the Windows service's recovery).
// A passing accept error (out of file descriptors) never reaches here: the
// listener retries it (see Listen). Serve closes ln when ctx is done.
func Serve(ctx context.Context, ln net.Listener, handle func(net.Conn) (more bool)) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("the service socket failed (%w): stopping, for the init system to start the service again", err)
		}
		if !handle(conn) {
			return nil
		}
	}
}
