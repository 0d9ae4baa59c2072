package main

import (
	"bufio"
	"io"

	"golang.org/x/sync/semaphore"
)

// maxMessageBytes bounds one JSON-RPC message on stdin. The stdio transport
// reads whole lines into memory; a client (or anything writing to our stdin)
// could otherwise make it hold an unbounded line.
const maxMessageBytes = 4 << 20

// oversizedLine replaces a line over the limit: not JSON, so the server
// answers it with a parse error and keeps serving.
const oversizedLine = "walletgate: message over the size limit dropped\n"

// ownLineBytes is how much of a line a connection of the service holds on
// its own; a longer line draws on the service's lineBudget.
const ownLineBytes = 64 << 10

// serviceLineBudget bounds the bytes all of the service's connections hold
// beyond ownLineBytes each, in lines still being read (and in whole ones not
// yet handed on): MaxConns connections each sending an unfinished 4 MiB line
// hold this much, not MaxConns times 4 MiB.
const serviceLineBudget = 16 << 20

// lineLimiter passes lines through unchanged, except that a line longer than
// max bytes, or one that would hold more than own bytes when budget (shared
// with other connections) has nothing left to lend, is dropped (read and
// discarded as it streams, never held) and replaced by oversizedLine.
type lineLimiter struct {
	r       *bufio.Reader
	max     int
	own     int64
	budget  *semaphore.Weighted // nil: only max bounds a line
	lent    int64               // what budget lent to the line held
	line    []byte              // the line being collected
	pending []byte              // output not yet returned
	err     error
}

func newLineLimiter(r io.Reader, max int) *lineLimiter {
	return &lineLimiter{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// newBudgetLineLimiter is a lineLimiter whose lines over own bytes draw on
// budget.
func newBudgetLineLimiter(r io.Reader, max, own int, budget *semaphore.Weighted) *lineLimiter {
	l := newLineLimiter(r, max)
	l.own, l.budget = int64(own), budget
	return l
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		l.giveBack()
		if l.err != nil {
			return 0, l.err
		}
		l.fill()
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// giveBack lets go of the line handed on and returns what it borrowed.
func (l *lineLimiter) giveBack() {
	l.pending = nil
	if l.budget != nil && l.lent > 0 {
		l.budget.Release(l.lent)
		l.lent = 0
	}
}

// room makes line's capacity at least n bytes, borrowing from the budget
// what is over own; false when the budget cannot lend it.
func (l *lineLimiter) room(n int) bool {
	if n <= cap(l.line) {
		return true
	}
	c := min(max(2*cap(l.line), n, 4096), l.max)
	if l.budget != nil {
		need := int64(c) - l.own - l.lent
		if need > 0 {
			if !l.budget.TryAcquire(need) {
				return false
			}
			l.lent += need
		}
	}
	grown := make([]byte, len(l.line), c)
	copy(grown, l.line)
	l.line = grown
	return true
}

// fill reads one whole line (or the final unterminated one) into pending.
func (l *lineLimiter) fill() {
	l.line = nil
	dropping := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !dropping {
			if len(l.line)+len(chunk) > l.max || !l.room(len(l.line)+len(chunk)) {
				dropping = true
				l.line = nil
				l.giveBack()
			} else {
				l.line = append(l.line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if dropping {
			l.pending = []byte(oversizedLine)
		} else {
			l.pending, l.line = l.line, nil // handed on whole; given back once read
		}
		l.err = err // nil: a whole line, more may follow
		return
	}
}
