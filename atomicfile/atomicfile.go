// Package atomicfile writes a file whole or not at all: through a temporary
// file beside it, with its mode and owner set and its bytes synced before it
// takes the file's name.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path with mode perm, owned by uid:gid (neither
// changed when both are -1), replacing path only once all of it is on disk.
func Write(path string, data []byte, perm os.FileMode, uid, gid int) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".walletgate-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if uid >= 0 || gid >= 0 {
		if err := tmp.Chown(uid, gid); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
