package approval

import "io/fs"

// On Windows, walletgate refuses WALLETGATE_CONFIRM=human before it gets here
// (cmd/walletgate): the terminal's socket and the address files are
// protected by Unix modes and owner ids (0600 files in a 0700 directory),
// which Windows does not have. These keep the package building there, and
// fail closed should anything call them.

// ownedByMe fails closed on Windows: PrepareDir refuses every directory.
func ownedByMe(fs.FileInfo) bool { return false }

// RemoveStale has nothing to remove where no approvals are served.
func RemoveStale(string) {}
