// Package connlimit bounds a listener's connections, in all and per peer,
// and keeps it accepting through the errors that pass (too many open files,
// a connection aborted before it was accepted).
//
// Rules of this file: Accept returns an error only when the listener is
// closed or failed for good, never for a passing one (that is retried, with
// a backoff of 5 ms doubling to 1 s, and reported); a connection over a
// bound is closed before a byte is read from it and reported; a
// connection's place is given back when it is closed, once.
package connlimit

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// ErrTooMany says a connection was closed because its peer, or all peers
// together, hold as many as the listener allows.
var ErrTooMany = errors.New("too many connections at once")

// Listener is a net.Listener with bounded connections. K is what a peer is
// counted by (a user id; struct{} to count all together). The zero values of
// PerPeer and Total allow no connection at all.
type Listener[K comparable] struct {
	net.Listener
	// Peer names a connection's peer; an error refuses the connection
	// (the error is reported). Nil: every peer is the zero K.
	Peer func(net.Conn) (K, error)
	// PerPeer and Total bound the connections open at once, per peer and
	// in all.
	PerPeer, Total int
	// Refused, when set, is told of each connection closed unserved.
	Refused func(peer K, err error)
	// Retrying, when set, is told of each passing accept error and how
	// long Accept waits before it tries again.
	Retrying func(err error, wait time.Duration)

	once   sync.Once
	done   chan struct{}
	mu     sync.Mutex
	open   map[K]int
	total  int
	closed bool
}

func (l *Listener[K]) init() {
	l.once.Do(func() {
		l.done = make(chan struct{})
		l.open = map[K]int{}
	})
}

// Accept waits for the next connection that is within the bounds.
func (l *Listener[K]) Accept() (net.Conn, error) {
	l.init()
	var wait time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !Passing(err) {
				return nil, err
			}
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			if l.Retrying != nil {
				l.Retrying(err, wait)
			}
			select {
			case <-time.After(wait):
			case <-l.done:
				return nil, net.ErrClosed
			}
			continue
		}
		wait = 0
		var peer K
		if l.Peer != nil {
			if peer, err = l.Peer(c); err != nil {
				l.refuse(c, peer, err)
				continue
			}
		}
		if !l.take(peer) {
			l.refuse(c, peer, ErrTooMany)
			continue
		}
		return &conn[K]{Conn: c, l: l, peer: peer}, nil
	}
}

func (l *Listener[K]) refuse(c net.Conn, peer K, err error) {
	c.Close()
	if l.Refused != nil {
		l.Refused(peer, err)
	}
}

// take counts a connection of peer, if the bounds allow it.
func (l *Listener[K]) take(peer K) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= l.Total || l.open[peer] >= l.PerPeer {
		return false
	}
	l.total++
	l.open[peer]++
	return true
}

func (l *Listener[K]) give(peer K) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.open[peer]--; l.open[peer] <= 0 {
		delete(l.open, peer)
	}
}

// Open is how many connections are open now, in all.
func (l *Listener[K]) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Close closes the listener (an Accept waiting to retry returns at once).
func (l *Listener[K]) Close() error {
	l.init()
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
	l.mu.Unlock()
	return l.Listener.Close()
}

// conn gives its place back when closed.
type conn[K comparable] struct {
	net.Conn
	l     *Listener[K]
	peer  K
	close sync.Once
}

func (c *conn[K]) Close() error {
	err := c.Conn.Close()
	c.close.Do(func() { c.l.give(c.peer) })
	return err
}

// CloseWrite closes the write side, where the connection has one (a unix
// or TCP connection).
func (c *conn[K]) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// Unwrap is the connection as accepted (for the peer's credentials).
func (c *conn[K]) Unwrap() net.Conn { return c.Conn }

// Passing reports whether an accept error passes: the process or the system
// is out of file descriptors or memory for now, or the connection went away
// before it was accepted. Any other error ends the listener.
func Passing(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
