package journal

// Tests with a second real process: the test binary re-executed as
// TestHelperProcess, so that flock is exercised between processes, not only
// between open files of one process.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/walletgate/walletgate/journal/records"

	"github.com/stretchr/testify/require"
)

const (
	helperMode  = "JOURNAL_TEST_HELPER" // what the helper process does
	helperDir   = "JOURNAL_TEST_DIR"
	helperN     = "JOURNAL_TEST_N"
	helperPoint = "JOURNAL_TEST_POINT" // where the crash helper kills itself
)

// TestHelperProcess is the second process; it does nothing in a normal run.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperMode)
	if mode == "" {
		t.Skip("the other process of the multi-process tests")
	}
	n, _ := strconv.Atoi(os.Getenv(helperN))
	if mode == "crash" {
		crashHelper(t, os.Getenv(helperDir), os.Getenv(helperPoint), n)
		os.Exit(3) // not reached: the point kills the process first
	}
	if err := helper(mode, os.Getenv(helperDir), n); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// helper opens the journal, appends "ready", waits for the parent's "go",
// then works as mode says.
func helper(mode, dir string, n int) error {
	j, err := Open(dir, "child", nil)
	if err != nil {
		return err
	}
	defer j.Close()
	if _, err := j.Append("ready", nil); err != nil {
		return err
	}
	if err := waitFor(j, "go", 1); err != nil {
		return err
	}
	switch mode {
	case "append":
		for i := range n {
			if _, err := j.Append("spend", spend{Amount: "child", N: i}); err != nil {
				return err
			}
		}
	case "count":
		mine, err := countTo(j, n)
		fmt.Print(mine)
		return err
	case "forever":
		for i := 0; ; i++ {
			if _, err := j.Append("spend", spend{Amount: "child", N: i}); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	return nil
}

// waitFor polls until j holds at least n records of kind.
func waitFor(j *Journal, kind string, n int) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		recs, err := j.Records()
		if err != nil {
			return err
		}
		if countKind(recs, kind) >= n {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("no %d %q records after 30s", n, kind)
}

func countKind(recs []records.Record, kind string) int {
	n := 0
	for _, r := range recs {
		if r.Kind == kind {
			n++
		}
	}
	return n
}

var errFull = errors.New("full")

// countTo appends cap reservations until there are limit of them, each after
// checking the count under the lock, and returns how many it appended.
func countTo(j *Journal, limit int) (int, error) {
	mine := 0
	for {
		err := j.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
			return increment(live, appendRecord, limit, errFull)
		})
		if errors.Is(err, errFull) {
			return mine, nil
		}
		if err != nil {
			return mine, err
		}
		mine++
	}
}

type child struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
}

// startChild runs TestHelperProcess in a new process on dir, and waits for
// it to be ready; the parent's j then appends "go".
func startChild(t *testing.T, j *Journal, mode, dir string, n int) *child {
	t.Helper()
	c := &child{done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	c.cmd.Env = append(os.Environ(), helperMode+"="+mode, helperDir+"="+dir, helperN+"="+strconv.Itoa(n))
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	require.NoError(t, c.cmd.Start())
	go func() { c.err = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.done
	})
	before, err := j.Records()
	require.NoError(t, err)
	require.NoError(t, waitFor(j, "ready", countKind(before, "ready")+1))
	return c
}

func (c *child) wait(t *testing.T) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("child still running after 2 minutes")
	}
	require.NoError(t, c.err, "child stderr: %s", c.stderr.String())
}

func TestTwoProcessesAppend(t *testing.T) {
	const n = 150
	dir := stateDir(t)
	j := openT(t, dir, "parent")
	c := startChild(t, j, "append", dir, n)
	_, err := j.Append("go", nil)
	require.NoError(t, err)
	for i := range n {
		_, err := j.Append("spend", spend{Amount: "parent", N: i})
		require.NoError(t, err)
	}
	c.wait(t)

	count, err := Verify(j.Path())
	require.NoError(t, err)
	require.Equal(t, 2*n+2, count)
	recs, err := j.Records()
	require.NoError(t, err)
	next := map[string]int{}
	switches := 0
	for i, r := range recs {
		require.EqualValues(t, i+1, r.Seq)
		if r.Kind != "spend" {
			continue
		}
		d := decodeData(t, r)
		require.Equal(t, next[d.Amount], d.N, "%s's records in order, none lost", d.Amount)
		next[d.Amount]++
		if d.Amount == "child" {
			require.NotEqual(t, os.Getpid(), r.PID)
		}
		if i > 0 && recs[i-1].Session != r.Session {
			switches++
		}
	}
	require.Equal(t, map[string]int{"child": n, "parent": n}, next)
	t.Logf("the writer changed %d times", switches)
	require.Greater(t, switches, 2, "the two processes appended at the same time")
}

func TestTwoProcessesUpdateCounter(t *testing.T) {
	const limit = 120
	dir := stateDir(t)
	j := openT(t, dir, "parent")
	c := startChild(t, j, "count", dir, limit)
	_, err := j.Append("go", nil)
	require.NoError(t, err)
	mine, err := countTo(j, limit)
	require.NoError(t, err)
	c.wait(t)
	theirs, err := strconv.Atoi(strings.TrimSpace(c.stdout.String()))
	require.NoError(t, err, "child stdout %q", c.stdout.String())

	recs, err := j.Records()
	require.NoError(t, err)
	require.Equal(t, limit, countKind(recs, records.KindCapReserve))
	require.Equal(t, limit, mine+theirs)
	t.Logf("parent %d, child %d", mine, theirs)
	n := 0
	for _, r := range recs {
		if r.Kind == records.KindCapReserve {
			n++
			var c records.CapChange
			require.NoError(t, records.DecodeInto(r, &c))
			require.Equal(t, strconv.Itoa(n), c.ID, "each increment saw every earlier one")
		}
	}
}

// TestKilledWriter kills a process appending as fast as it can, which may
// die holding the lock or between an append and its head update. The
// journal must open and verify afterwards, and take more appends.
func TestKilledWriter(t *testing.T) {
	dir := stateDir(t)
	j := openT(t, dir, "parent")
	for round := range 4 {
		c := startChild(t, j, "forever", dir, 0)
		_, err := j.Append("go", nil)
		require.NoError(t, err)
		recs, err := j.Records()
		require.NoError(t, err)
		require.NoError(t, waitFor(j, "spend", countKind(recs, "spend")+20+round*7))
		require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
		<-c.done

		again, err := Open(dir, "parent", nil)
		require.NoError(t, err, "round %d", round)
		_, err = again.Append("after-kill", nil)
		require.NoError(t, err)
		require.NoError(t, again.Close())
		n, err := Verify(j.Path())
		require.NoError(t, err)
		recs, err = j.Records()
		require.NoError(t, err)
		require.Len(t, recs, n)
	}
}

// TestConcurrentRecordsAndAppends runs reads and writes of one Journal at
// once, for the race detector.
func TestConcurrentRecordsAndAppends(t *testing.T) {
	j := openT(t, stateDir(t), "s")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				if _, err := j.Append("x", nil); err != nil {
					t.Error(err)
				}
				if _, err := j.Records(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	recs, err := j.Records()
	require.NoError(t, err)
	require.Len(t, recs, 80)
}
