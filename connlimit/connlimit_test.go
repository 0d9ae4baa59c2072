package connlimit

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// script is a listener that returns its errors, in order, then connections.
type script struct {
	errs  chan error
	conns chan net.Conn
}

func newScript() *script {
	return &script{errs: make(chan error, 100), conns: make(chan net.Conn, 100)}
}

func (s *script) Accept() (net.Conn, error) {
	select {
	case err := <-s.errs:
		return nil, err
	default:
	}
	select {
	case err := <-s.errs:
		return nil, err
	case c, ok := <-s.conns:
		if !ok {
			return nil, net.ErrClosed
		}
		return c, nil
	}
}
func (s *script) Close() error   { return nil }
func (s *script) Addr() net.Addr { return &net.UnixAddr{Name: "script", Net: "unix"} }

// pipeConn is one end of a pipe, its other end kept to see it closed.
func pipeConn(t *testing.T) (net.Conn, net.Conn) {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// An accept error that passes (out of file descriptors) is retried with a
// growing wait, reported each time, and the next connection is returned;
// the listener does not end.
func TestAPassingAcceptErrorIsRetried(t *testing.T) {
	s := newScript()
	for range 5 {
		s.errs <- &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	c, _ := pipeConn(t)
	s.conns <- c
	var waits []time.Duration
	l := &Listener[struct{}]{Listener: s, PerPeer: 1, Total: 1, Retrying: func(err error, wait time.Duration) {
		require.ErrorIs(t, err, syscall.EMFILE)
		waits = append(waits, wait)
	}}
	got, err := l.Accept()
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Equal(t, []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond}, waits)
}

// Any other accept error ends Accept, for the caller to stop (and exit
// non-zero), as does a closed listener.
func TestAFatalAcceptErrorIsReturned(t *testing.T) {
	for _, err := range []error{errors.New("boom"), &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EBADF)}, net.ErrClosed} {
		t.Run(err.Error(), func(t *testing.T) {
			s := newScript()
			s.errs <- err
			l := &Listener[struct{}]{Listener: s, PerPeer: 1, Total: 1}
			_, got := l.Accept()
			require.ErrorIs(t, got, err)
		})
	}
}

// Close wakes an Accept that waits to retry.
func TestCloseEndsTheWaitToRetry(t *testing.T) {
	s := newScript()
	for range 50 {
		s.errs <- syscall.EMFILE
	}
	retrying := make(chan struct{}, 100)
	l := &Listener[struct{}]{Listener: s, PerPeer: 1, Total: 1, Retrying: func(error, time.Duration) { retrying <- struct{}{} }}
	done := make(chan error)
	go func() { _, err := l.Accept(); done <- err }()
	<-retrying
	require.NoError(t, l.Close())
	require.ErrorIs(t, <-done, net.ErrClosed)
}

// Connections are bounded per peer and in all: one over a bound is closed
// before it is served and reported, and a closed connection gives its place
// back (once, however often it is closed).
func TestConnectionsAreBoundedPerPeerAndInAll(t *testing.T) {
	s := newScript()
	var mu sync.Mutex
	peers := map[net.Conn]int{}
	far := map[net.Conn]net.Conn{}
	push := func(peer int) net.Conn {
		c, other := pipeConn(t)
		mu.Lock()
		peers[c], far[c] = peer, other
		mu.Unlock()
		s.conns <- c
		return c
	}
	refused := make(chan string, 10)
	l := &Listener[int]{Listener: s, PerPeer: 2, Total: 3,
		Peer: func(c net.Conn) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return peers[c], nil
		},
		Refused: func(peer int, err error) { refused <- fmt.Sprint(peer, ": ", err) }}
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	next := func() *conn[int] { return (<-accepted).(*conn[int]) }
	a1, a2 := push(1), push(1)
	require.Equal(t, a1, next().Conn)
	got2 := next()
	require.Equal(t, a2, got2.Conn)
	over := push(1) // peer 1's third
	require.Equal(t, "1: too many connections at once", <-refused)
	mu.Lock()
	farOver := far[over]
	mu.Unlock()
	_, err := farOver.Read(make([]byte, 1))
	require.Error(t, err, "the connection over the bound is closed")
	b1 := push(2)
	require.Equal(t, b1, next().Conn)
	push(3) // within peer 3's bound, over the total
	require.Equal(t, "3: too many connections at once", <-refused)
	require.Equal(t, 3, l.Open())
	require.NoError(t, got2.Close())
	require.NoError(t, got2.Close(), "a second close gives nothing back")
	require.Equal(t, 2, l.Open())
	c3 := push(3)
	require.Equal(t, c3, next().Conn, "the place given back is taken")
	push(4)
	require.Equal(t, "4: too many connections at once", <-refused, "one place was given back, not two")
	close(s.conns)
	_, more := <-accepted
	require.False(t, more)
}

// A peer refused by Peer is closed and reported with its error.
func TestARefusedPeerIsClosed(t *testing.T) {
	s := newScript()
	c, other := pipeConn(t)
	s.conns <- c
	ok, _ := pipeConn(t)
	s.conns <- ok
	no := errors.New("not allowed")
	var refused []error
	l := &Listener[int]{Listener: s, PerPeer: 1, Total: 1,
		Peer: func(x net.Conn) (int, error) {
			if x == c {
				return 7, no
			}
			return 8, nil
		},
		Refused: func(peer int, err error) { require.Equal(t, 7, peer); refused = append(refused, err) }}
	got, err := l.Accept()
	require.NoError(t, err)
	require.Equal(t, ok, got.(*conn[int]).Conn)
	require.Equal(t, []error{no}, refused)
	_, err = other.Read(make([]byte, 1))
	require.Error(t, err)
}

// The zero bounds allow nothing (fail closed).
func TestZeroBoundsAllowNothing(t *testing.T) {
	s := newScript()
	c, _ := pipeConn(t)
	s.conns <- c
	close(s.conns)
	n := 0
	l := &Listener[struct{}]{Listener: s, Refused: func(struct{}, error) { n++ }}
	_, err := l.Accept()
	require.ErrorIs(t, err, net.ErrClosed)
	require.Equal(t, 1, n)
}
