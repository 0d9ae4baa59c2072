package journal

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// Lock operations for flock.
const (
	lockSh = 1
	lockEx = 2
	lockUn = 3
)

// flock takes or releases a LockFileEx lock on f, waiting for it like
// flock(2). Like flock, locks from separate opens of a file conflict, also
// within one process.
//
// Windows byte-range locks are mandatory: a locked range cannot be read or
// written through other handles. So the lock covers one byte at offset
// 2^63-1, where no journal ever reaches: it keeps lockers apart and never
// blocks an append or a read of the data itself.
func flock(f *os.File, how int) error {
	h := windows.Handle(f.Fd())
	ol := &windows.Overlapped{Offset: 0xFFFFFFFF, OffsetHigh: 0x7FFFFFFF}
	switch how {
	case lockUn:
		return windows.UnlockFileEx(h, 0, 1, 0, ol)
	case lockSh:
		return windows.LockFileEx(h, 0, 0, 1, 0, ol)
	case lockEx:
		return windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol)
	}
	return fmt.Errorf("journal: flock: unknown operation %d", how)
}
