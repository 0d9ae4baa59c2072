package approval

// The passkey page's addresses. Rules:
//   - Its origin is http://localhost:PORT, and a browser may reach that name
//     at any address localhost resolves to: 127.0.0.1 and ::1 (Chromium tries
//     [::1] first) and whatever the system's resolver adds. Any user may
//     listen on an address/port the service does not hold, and that page is
//     the same origin to WebAuthn, so the page holds every one of them, on
//     the same port, or none: ListenLocalhost either returns a listener for
//     each or closes all it opened and names the address it could not have.
//   - An address localhost resolves to that is not a loopback address is
//     refused, not served (the page would be reachable from the network).
//   - Listeners handed down by a privileged parent (a port below 1024 bound
//     as root before the service became its user) are checked the same way:
//     exactly the addresses above, on the page's port.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// LocalhostAddrs is every address http://localhost can reach on this
// system: 127.0.0.1, ::1 and what the resolver says localhost is (its hosts
// file), in that order, without duplicates.
func LocalhostAddrs() []netip.Addr {
	addrs := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resolved, _ := net.DefaultResolver.LookupNetIP(ctx, "ip", "localhost")
	for _, a := range resolved {
		a = a.Unmap()
		if !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// ListenLocalhost listens on port at every address of LocalhostAddrs, or
// fails naming the first address it could not have; then it holds none.
func ListenLocalhost(port int) ([]net.Listener, error) {
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("approval page: port %d is not a port (1 to 65535)", port)
	}
	var lns []net.Listener
	fail := func(err error) ([]net.Listener, error) {
		for _, ln := range lns {
			ln.Close()
		}
		return nil, err
	}
	for _, a := range LocalhostAddrs() {
		ap := netip.AddrPortFrom(a, uint16(port))
		if !a.IsLoopback() {
			return fail(fmt.Errorf("approval page: localhost resolves to %s on this system, which is not a loopback address: the page would be reachable from other machines. Fix the hosts file (localhost is 127.0.0.1 and ::1), then start again", a))
		}
		ln, err := net.Listen("tcp", ap.String())
		if err != nil {
			return fail(addressError(ap, err))
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// addressError says why the page cannot hold ap, and what to do.
func addressError(ap netip.AddrPort, err error) error {
	origin := PasskeyOrigin(int(ap.Port()))
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("approval page: %s is already in use by another program. The page's origin %s must be served only by walletgate at every address localhost resolves to, or that program could show the person a page of its own; nothing is served. Stop the program listening on %s (ss -ltnp 'sport = :%d' names it), then start again", ap, origin, ap, ap.Port())
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("approval page: %s: permission denied (a port below 1024 is bound by root before the service becomes its user: start it with sudo or the init system): %w", ap, err)
	default:
		return fmt.Errorf("approval page: cannot listen on %s, an address of %s; nothing is served without it: %w", ap, origin, err)
	}
}

// CheckHeld checks that lns are exactly the page's listeners for port (one
// per address of LocalhostAddrs), as ListenLocalhost returns them.
func CheckHeld(lns []net.Listener, port int) error {
	want := LocalhostAddrs()
	if len(lns) != len(want) {
		return fmt.Errorf("approval page: %d listeners were handed down, want %d (one per address of localhost: %v)", len(lns), len(want), want)
	}
	for i, ln := range lns {
		ap, err := netip.ParseAddrPort(ln.Addr().String())
		if err != nil || ap.Addr().Unmap() != want[i] || int(ap.Port()) != port {
			return fmt.Errorf("approval page: a listener handed down is on %s, want %s", ln.Addr(), netip.AddrPortFrom(want[i], uint16(port)))
		}
	}
	return nil
}

// ListenerFiles returns the files of lns, for a child process to inherit;
// the caller closes them.
func ListenerFiles(lns []net.Listener) ([]*os.File, error) {
	var files []*os.File
	for _, ln := range lns {
		tl, ok := ln.(*net.TCPListener)
		if !ok {
			return nil, fmt.Errorf("approval page: %s is not a TCP listener", ln.Addr())
		}
		f, err := tl.File()
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, fmt.Errorf("approval page: hand down %s: %w", ln.Addr(), err)
		}
		files = append(files, f)
	}
	return files, nil
}

// InheritedListeners turns n file descriptors from 3 on (as a parent's
// ExtraFiles arrive) into listeners, checked by CheckHeld for port.
func InheritedListeners(n, port int) ([]net.Listener, error) {
	var lns []net.Listener
	for i := 0; i < n; i++ {
		f := os.NewFile(uintptr(3+i), "approval page listener "+strconv.Itoa(i))
		if f == nil {
			return nil, fmt.Errorf("approval page: file descriptor %d was not handed down", 3+i)
		}
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("approval page: file descriptor %d: %w", 3+i, err)
		}
		lns = append(lns, ln)
	}
	if err := CheckHeld(lns, port); err != nil {
		for _, l := range lns {
			l.Close()
		}
		return nil, err
	}
	return lns, nil
}
