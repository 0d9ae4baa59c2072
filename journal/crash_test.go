package journal

// A journal with sealed segments and checkpoints survives a kill -9 at every
// point of an append and a sealing where the files on disk differ: the child
// process writes a history with small segments and SIGKILLs itself at the
// nth time it reaches the point; the parent then opens the journal, which
// must verify, hold the same live state as folded from all history, and take
// more records.

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// crashSegment is the segment size of the crash tests.
const crashSegment = 2 << 10

// crashHelper runs in the child: it kills itself at the nth reach of point.
func crashHelper(t *testing.T, dir, point string, n int) {
	seen := 0
	crashPoint = func(p string) {
		if p != point {
			return
		}
		if seen++; seen >= n {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
	syncFile = func(*os.File) error { return nil } // a kill -9 keeps the page cache: fsync changes nothing here
	j, err := OpenOptions(dir, "child", nil, Options{SegmentSize: crashSegment})
	if err != nil {
		t.Fatal(err)
	}
	history(t, j, 0, 1<<20)
}

func TestKill9AtEveryWritePoint(t *testing.T) {
	points := []string{
		"append: line written",
		"append: synced",
		"seal: new segment written",
		"seal: old segment renamed",
		"seal: new segment in place",
		"seal: before the head",
	}
	for _, point := range points {
		for _, n := range []int{1, 4} {
			t.Run(point+" #"+strconv.Itoa(n), func(t *testing.T) {
				noSync(t)
				dir := stateDir(t)
				if n > 1 {
					// Some sealed history from an earlier process first.
					j := smallSegments(t, dir, "earlier", crashSegment)
					history(t, j, 0, 40)
					require.NoError(t, j.Close())
				}
				cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
				cmd.Env = append(os.Environ(), helperMode+"=crash", helperDir+"="+dir, helperPoint+"="+point, helperN+"="+strconv.Itoa(n*7))
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, "output: %s", out)
				ws, _ := ee.Sys().(syscall.WaitStatus)
				require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the child died at the point: %v, output: %s", err, out)

				j := smallSegments(t, dir, "after", crashSegment)
				full := snapshotOf(t, foldAll(t, dir))
				require.JSONEq(t, string(full), string(liveOf(t, j)), "the same live state as from all history")
				history(t, j, 1<<21, 20)
				require.NoError(t, j.Close())
				_, err = Verify(journalPath(dir))
				require.NoError(t, err)
				_, err = os.Stat(dir + "/" + nextName)
				require.ErrorIs(t, err, os.ErrNotExist, "no half-sealed segment is left behind")
			})
		}
	}
}
