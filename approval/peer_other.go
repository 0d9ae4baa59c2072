//go:build !linux

package approval

import "net"

// peerIsMe relies on the socket's 0600 mode and its 0700 directory where
// peer credentials are not read.
func peerIsMe(net.Conn) error { return nil }
