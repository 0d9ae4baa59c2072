package terminal

import (
	"os"

	"golang.org/x/sys/unix"
)

// flushTypeahead discards what was typed at the terminal but not read yet,
// so that a key pressed before a preview was shown never decides it.
func flushTypeahead(f *os.File) {
	_ = unix.IoctlSetInt(int(f.Fd()), unix.TCFLSH, unix.TCIFLUSH)
}
