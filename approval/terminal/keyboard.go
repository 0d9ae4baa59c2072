package terminal

// The person's keys, read from a terminal in raw mode (console.go puts it
// there; tests feed bytes). Rules:
//   - A key counts only while a prompt is showing, and only then is it
//     echoed. Keys typed at any other time (a second "a" meant for the
//     preview before) are dropped unseen: they can neither decide the next
//     preview nor appear beside it.
//   - A prompt takes one line. The keys after its Enter are dropped, and
//     opening the next prompt forgets any line not read yet, under the same
//     lock the reader sends with: no line typed before a prompt can answer
//     it.
//   - Ctrl-C and Ctrl-D end the session (raw mode turns off the signals).

import (
	"io"
	"sync"
	"unicode/utf8"
)

// keyboard reads a terminal's keys; safe for one reader goroutine and the
// terminal's own goroutine.
type keyboard struct {
	in     io.Reader // the keys
	echoTo io.Writer // where a key typed at a prompt is echoed
	flush  func()    // discards what was typed and not read yet; nil: nothing to do

	mu     sync.Mutex
	open   bool // a prompt is showing
	line   []byte
	esc    int // inside an escape sequence (arrow keys): 1 after ESC, 2 inside CSI
	closed bool
	lines  chan string // at most one line: the open prompt's
}

// startKeyboard reads the keys of in (a terminal in raw mode) until its
// end, echoing to echo.
func startKeyboard(in io.Reader, echo io.Writer, flush func()) *keyboard {
	k := &keyboard{in: in, echoTo: echo, flush: flush, lines: make(chan string, 1)}
	go k.read()
	return k
}

// Lines yields each line typed at an open prompt; it is closed at the end
// of input or on Ctrl-C / Ctrl-D.
func (k *keyboard) Lines() <-chan string { return k.lines }

// Prompt opens a prompt: what was typed before no longer counts.
func (k *keyboard) Prompt() {
	if k.flush != nil {
		k.flush()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	select {
	case <-k.lines: // a line of an earlier prompt nobody read
	default:
	}
	k.open, k.line, k.esc = true, nil, 0
}

func (k *keyboard) read() {
	buf := make([]byte, 256)
	for {
		n, err := k.in.Read(buf)
		for _, b := range buf[:n] {
			if end := k.key(b); end {
				break // the rest was typed with the Enter: before any next prompt
			}
		}
		if err != nil {
			k.close()
			return
		}
	}
}

// key handles one byte; end reports that a line ended with it.
func (k *keyboard) key(b byte) (end bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return true
	}
	switch {
	case b == 0x03 || b == 0x04: // Ctrl-C, Ctrl-D
		k.echo("\r\n")
		k.closeLocked()
		return true
	case !k.open:
		return false
	case k.esc == 1:
		k.esc = 0
		if b == '[' || b == 'O' {
			k.esc = 2
		}
		return false
	case k.esc == 2:
		if b >= 0x40 && b <= 0x7e {
			k.esc = 0
		}
		return false
	case b == 0x1b:
		k.esc = 1
	case b == '\r' || b == '\n':
		k.echo("\r\n")
		k.lines <- string(k.line) // room for one: emptied when this prompt opened
		k.open, k.line = false, nil
		return true
	case b == 0x7f || b == 0x08:
		if len(k.line) > 0 {
			_, size := utf8.DecodeLastRune(k.line)
			k.line = k.line[:len(k.line)-size]
			k.echo("\b \b")
		}
	case b >= 0x20 && b < 0x7f && len(k.line) < 64:
		// Answers are a few ASCII letters; anything else means nothing here.
		k.line = append(k.line, b)
		k.echo(string(b))
	}
	return false
}

func (k *keyboard) echo(s string) { _, _ = io.WriteString(k.echoTo, s) }

func (k *keyboard) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closeLocked()
}

func (k *keyboard) closeLocked() {
	if !k.closed {
		k.closed = true
		close(k.lines)
	}
}
