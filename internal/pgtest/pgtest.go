// Package pgtest starts a throwaway PostgreSQL server for tests: initdb and
// pg_ctl on a unix socket in a temporary directory, no TCP port, stopped
// and removed when the test ends.
//
// A machine without PostgreSQL skips the tests that need it, except under
// CI=true or WALLETGATE_REQUIRE_POSTGRES=1, where they fail: CI installs
// Debian's postgresql (.ci/run).
package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// Server is a running throwaway server.
type Server struct {
	Dir string // data directory's parent, and the socket's directory
	// URL reaches it as a superuser, over the unix socket.
	URL   string
	bin   string
	runAs string // "": this user; else the user postgres runs as (this is root)
	opts  string // the server's options
}

// Start starts a server for t and stops it when t ends. It runs with
// fsync off: tests need its semantics, not its durability.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, false)
}

// StartDurable is Start with fsync on, as a real server runs: for
// benchmarks.
func StartDurable(t testing.TB) *Server {
	t.Helper()
	return start(t, true)
}

func start(t testing.TB, durable bool) *Server {
	t.Helper()
	bin := findBin()
	if bin == "" {
		if os.Getenv("CI") == "true" || os.Getenv("WALLETGATE_REQUIRE_POSTGRES") == "1" {
			t.Fatal("PostgreSQL (initdb, pg_ctl) is not installed: CI must install Debian's postgresql (.ci/run does)")
		}
		t.Skip("PostgreSQL (initdb, pg_ctl) is not installed; apt-get install postgresql to run this test")
	}
	s := &Server{bin: bin}
	dir, err := os.MkdirTemp("/tmp", "wgpg") // short: a socket path has a 107-byte limit
	if err != nil {
		t.Fatal(err)
	}
	s.Dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 { // postgres refuses to run as root
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, PostgreSQL needs a user to run as, and there is no user postgres: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		s.runAs = "postgres"
	}
	data := filepath.Join(dir, "data")
	s.run(t, "initdb", "-D", data, "-A", "trust", "-U", "walletgate", "--no-sync", "-E", "UTF8")
	fsync := "off"
	if durable {
		fsync = "on"
	}
	s.opts = fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=%s -c max_connections=60", dir, fsync)
	s.Resume(t)
	t.Cleanup(func() { s.Stop(t) })
	s.URL = "postgres://walletgate@localhost/postgres?host=" + dir + "&sslmode=disable"
	return s
}

// Stop stops the server now (a test of an unreachable database); a second
// Stop does nothing.
func (s *Server) Stop(t testing.TB) {
	if _, err := os.Stat(filepath.Join(s.Dir, "data", "postmaster.pid")); err != nil {
		return
	}
	cmd := s.command("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "immediate", "-w", "stop")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("pg_ctl stop: %v\n%s", err, out)
	}
}

// Resume starts the stopped server again, on the same data and socket.
func (s *Server) Resume(t testing.TB) {
	t.Helper()
	s.run(t, "pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-l", filepath.Join(s.Dir, "log"), "-w", "-o", s.opts, "start")
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, name)
	if s.runAs != "" {
		return exec.Command("runuser", append([]string{"-u", s.runAs, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func (s *Server) run(t testing.TB, name string, args ...string) {
	t.Helper()
	cmd := s.command(name, args...)
	cmd.Dir = s.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
		t.Fatalf("%s: %v\n%s\n%s", name, err, out, log)
	}
}

// findBin is the directory of initdb and pg_ctl: Debian's newest version,
// or PATH's.
func findBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p)
		}
	}
	return ""
}
