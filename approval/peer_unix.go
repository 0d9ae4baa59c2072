//go:build unix

package approval

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ownedByMe reports whether the file belongs to this process's user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// RemoveStale deletes the socket and address files in dir of processes that
// no longer run (a server killed with SIGKILL cannot remove its own), so that
// `cat approvals/*.url` and the terminal see live servers only.
func RemoveStale(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		base := strings.TrimSuffix(strings.TrimSuffix(name, ".sock"), ".url")
		pid, err := strconv.Atoi(base)
		if err != nil || base == name || pid <= 0 {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.Remove(filepath.Join(dir, name))
		}
	}
}
