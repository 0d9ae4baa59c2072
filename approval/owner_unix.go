//go:build unix

package approval

import (
	"os"
	"syscall"
)

// fileOwner is the owner of fi, to write its replacement with; -1, -1 when
// unknown.
func fileOwner(fi os.FileInfo) (uid, gid int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}
