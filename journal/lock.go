package journal

import "os"

// syncFile fsyncs f. It is a variable only so that tests can watch which
// files are synced, and in what order; it always calls the real fsync.
var syncFile = (*os.File).Sync
