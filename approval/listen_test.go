package approval

import (
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// freePort is a port neither 127.0.0.1 nor ::1 listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := ln.Addr().(*net.TCPAddr).Port
		l6, err := net.Listen("tcp", "[::1]:"+strconv.Itoa(port))
		ln.Close()
		if err == nil {
			l6.Close()
			return port
		}
	}
	t.Fatal("no port is free at both 127.0.0.1 and ::1")
	return 0
}

// A program that holds one address of localhost at the page's port (the
// desktop user's page on [::1], which Chromium tries first) keeps the page
// from starting at all, with an error naming that address; the page never
// runs on the other addresses alone. Once up, the page holds every address:
// nobody else can listen beside it.
func TestThePageHoldsEveryAddressOfLocalhostOrNone(t *testing.T) {
	for _, taken := range []string{"::1", "127.0.0.1"} {
		t.Run("taken "+taken, func(t *testing.T) {
			port := freePort(t)
			at := netip.AddrPortFrom(netip.MustParseAddr(taken), uint16(port)).String()
			other, err := net.Listen("tcp", at)
			require.NoError(t, err)
			defer other.Close()

			lns, err := ListenLocalhost(port)
			require.Error(t, err, "the page must not start while %s is another program's", at)
			require.Nil(t, lns)
			require.ErrorContains(t, err, at+" is already in use by another program")
			require.ErrorContains(t, err, "nothing is served")
			// It let go of every address it had taken.
			for _, a := range LocalhostAddrs() {
				if a.String() == taken {
					continue
				}
				ln, err := net.Listen("tcp", netip.AddrPortFrom(a, uint16(port)).String())
				require.NoError(t, err, "the page still holds %s after it refused to start", a)
				ln.Close()
			}
		})
	}
	t.Run("held", func(t *testing.T) {
		port := freePort(t)
		lns, err := ListenLocalhost(port)
		require.NoError(t, err)
		defer func() {
			for _, ln := range lns {
				ln.Close()
			}
		}()
		require.NoError(t, CheckHeld(lns, port))
		for _, at := range []string{"127.0.0.1", "[::1]"} {
			_, err := net.Listen("tcp", at+":"+strconv.Itoa(port))
			require.ErrorIs(t, err, syscall.EADDRINUSE, "another program listens on %s:%d beside the page", at, port)
		}
	})
}

// Listeners handed down by a parent are exactly the page's, or refused.
func TestHandedDownListenersMustBeThePages(t *testing.T) {
	port := freePort(t)
	one, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	require.NoError(t, err)
	defer one.Close()
	require.ErrorContains(t, CheckHeld([]net.Listener{one}, port), "listeners were handed down")
	lns, err := ListenLocalhost(freePort(t))
	require.NoError(t, err)
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	require.ErrorContains(t, CheckHeld(lns, port), "a listener handed down is on")
}
