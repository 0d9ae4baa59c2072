package main

import (
	"bufio"
	"io"
)

// maxMessageBytes bounds one JSON-RPC message on stdin. The stdio transport
// reads whole lines into memory; a client (or anything writing to our stdin)
// could otherwise make it hold an unbounded line.
const maxMessageBytes = 4 << 20

// oversizedLine replaces a line over the limit: not JSON, so the server
// answers it with a parse error and keeps serving.
const oversizedLine = "walletgate: message over the size limit dropped\n"

// lineLimiter passes lines through unchanged, except that a line longer than
// max bytes is dropped (read and discarded as it streams, never held) and
// replaced by oversizedLine.
type lineLimiter struct {
	r       *bufio.Reader
	max     int
	line    []byte // the line being collected
	pending []byte // output not yet returned
	err     error
}

func newLineLimiter(r io.Reader, max int) *lineLimiter {
	return &lineLimiter{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		l.fill()
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// fill reads one whole line (or the final unterminated one) into pending.
func (l *lineLimiter) fill() {
	l.line = l.line[:0]
	dropping := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !dropping {
			if len(l.line)+len(chunk) > l.max {
				dropping = true
				l.line = l.line[:0]
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
			l.pending = append([]byte(nil), l.line...)
		}
		l.err = err // nil: a whole line, more may follow
		return
	}
}
