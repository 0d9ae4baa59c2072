package terminal

// The process's own terminal: raw mode and size through golang.org/x/term,
// the typed-ahead input flushed where the platform can (flush_*.go).

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Console is the Config for this process's terminal. With stdin a
// terminal it is put in raw mode (restore puts it back) and read key by key,
// echoed to it; with stdout a terminal the screen is coloured, measured
// every time it is written (the window may have been resized) and its
// newlines return the carriage. Anything else (a pipe, a file) is read line
// by line and written as it is, 80 columns wide. Socket and Dir are left
// for the caller.
func Console(stdin io.Reader, stdout io.Writer) (c Config, restore func(), err error) {
	restore = func() {}
	c = Config{In: stdin, Out: stdout, Color: isTerminal(stdout)}
	if f, ok := stdout.(*os.File); ok && c.Color {
		c.Width = func() int {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w >= 20 {
				return w
			}
			return 80
		}
	}
	in, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return c, restore, nil
	}
	old, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return c, restore, fmt.Errorf("the terminal could not be put in raw mode: %w", err)
	}
	c.Keys, c.Echo, c.Flush = true, in, func() { flushTypeahead(in) }
	if out, ok := stdout.(*os.File); ok && term.IsTerminal(int(out.Fd())) {
		c.Out = crlf{out}
	}
	return c, func() { _ = term.Restore(int(in.Fd()), old) }, nil
}

// crlf writes to a terminal in raw mode, where a newline no longer returns
// the carriage by itself.
type crlf struct{ f *os.File }

func (c crlf) Write(p []byte) (int, error) {
	if _, err := c.f.WriteString(strings.ReplaceAll(string(p), "\n", "\r\n")); err != nil {
		return 0, err
	}
	return len(p), nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
