package service

import "golang.org/x/sys/windows"

// systemFolder is the machine's ProgramData or ProgramFiles folder, as
// Windows knows it (SHGetKnownFolderPath), never from the environment: an
// install run from a terminal whose %ProgramData% points at the user's own
// folder must not put the service there. "" when Windows does not say (the
// defaults then apply).
func systemFolder(name string) string {
	id := windows.FOLDERID_ProgramData
	if name == "ProgramFiles" {
		id = windows.FOLDERID_ProgramFiles
	}
	p, err := windows.KnownFolderPath(id, windows.KF_FLAG_DEFAULT)
	if err != nil {
		return ""
	}
	return p
}
