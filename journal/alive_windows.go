//go:build windows

package journal

import "golang.org/x/sys/windows"

// ProcessAlive reports whether a process with id pid exists on this host.
// Unsure answers are "alive": a reservation then stays counted.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return true
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		// ERROR_INVALID_PARAMETER: no such process; anything else (access
		// denied) means it exists.
		return err != windows.ERROR_INVALID_PARAMETER
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	const stillActive = 259
	return code == stillActive
}
