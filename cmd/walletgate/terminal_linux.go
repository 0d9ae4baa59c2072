package main

// Whose terminal the service's terminal approval runs in. A terminal that a
// desktop user owns is theirs to drive: tmux send-keys types into it, tmux
// capture-pane reads it back, even while root's sudo runs inside. So
// `walletgate approvals --service` refuses to run when its controlling
// terminal, or that of any process it descends from (the shell sudo was
// started from), belongs to a desktop user named at install; it runs on a
// console that user cannot drive (a text console login of another account,
// SSH from another machine as another account). Rules: no controlling
// terminal is a refusal; a terminal whose device cannot be found is a
// refusal; the walk stops at pid 1.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// terminalOfDesktopUser returns nil when no terminal of this process and its
// ancestors belongs to one of uids; otherwise an error naming the terminal
// and its owner.
func terminalOfDesktopUser(uids map[uint32]string) error {
	devices := ttyDevices()
	pid := os.Getpid()
	for depth := 0; pid > 1 && depth < 64; depth++ {
		ppid, tty, err := procStat(pid)
		if err != nil {
			return fmt.Errorf("the terminal approval cannot tell whose terminal it runs in (%v); approve on the approval page with the passkey", err)
		}
		if depth == 0 && tty == 0 {
			return errors.New("the terminal approval needs a terminal (a text console, or SSH from another machine); it has none. Approve on the approval page with the passkey")
		}
		if tty != 0 {
			d, ok := devices[tty]
			if !ok {
				return fmt.Errorf("the terminal approval cannot find the terminal device (number %#x) of process %d, so it cannot tell whose it is; approve on the approval page with the passkey", tty, pid)
			}
			if name, desktop := uids[d.uid]; desktop {
				return fmt.Errorf("the terminal %s belongs to %s, a desktop user named at install: a program of theirs (an assistant with a shell) can type into it and read it (tmux send-keys, capture-pane), so it cannot approve. Approve on the approval page with the passkey, or run this from a text console login of another account or over SSH from another machine", d.path, name)
			}
		}
		pid = ppid
	}
	return nil
}

type ttyDevice struct {
	path string
	uid  uint32
}

// ttyDevices maps each terminal device's number to its path and owner.
func ttyDevices() map[uint64]ttyDevice {
	out := map[uint64]ttyDevice{}
	for _, pattern := range []string{"/dev/pts/*", "/dev/tty*", "/dev/console"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			var st syscall.Stat_t
			if syscall.Stat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
				continue
			}
			if _, seen := out[st.Rdev]; !seen {
				out[st.Rdev] = ttyDevice{path: p, uid: st.Uid}
			}
		}
	}
	return out
}

// procStat reads a process's parent and controlling terminal (0: none)
// from /proc.
func procStat(pid int) (ppid int, tty uint64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp session tty_nr …
	if len(f) < 5 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	if ppid, err = strconv.Atoi(f[1]); err != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	n, err := strconv.ParseInt(f[4], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	// tty_nr is the kernel's new_encode_dev, the same layout as st_rdev
	// (glibc's makedev) for every major below 4096.
	return ppid, uint64(uint32(n)), nil
}
