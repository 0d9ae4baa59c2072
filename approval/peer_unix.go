//go:build unix

package approval

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports whether the file belongs to this process's user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
