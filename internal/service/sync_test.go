package service

import (
	"bytes"
	"sync"
)

// syncBuf is a buffer one goroutine writes and another reads; waitOutput
// waits for its next write (a signal, not a time).
type syncBuf struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote == nil {
		s.wrote = make(chan struct{}, 64)
	}
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitOutput(s *syncBuf) {
	s.mu.Lock()
	if s.wrote == nil {
		s.wrote = make(chan struct{}, 64)
	}
	ch := s.wrote
	s.mu.Unlock()
	<-ch
}
