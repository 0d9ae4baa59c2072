package journal

// Windows has no permission bits (Go reports 0666 or 0777 for every file), so
// the owner-only rule is checked on the ACL instead: the file's owner must be
// the user running walletgate, and every allowing entry of its DACL must name
// that user, SYSTEM or the Administrators group. A missing (NULL) DACL grants
// everyone everything and is refused. Files created under the user's profile
// (the default %LocalAppData%\walletgate\state) inherit such an ACL.
//
// Windows has no O_NOFOLLOW either: openNoFollow refuses a symbolic link or
// junction found at the path before and after opening it, which leaves a
// window between the two checks that the Unix flag does not have; the state
// directory's ACL (owner only) is what keeps others from planting links there.

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("is a symbolic link; refusing to follow it")}
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("was replaced by a symbolic link while being opened")}
	}
	return f, nil
}

func private(fi os.FileInfo, path string, isDir bool) error {
	what := "file"
	if isDir {
		what = "state directory"
	}
	fix := fmt.Sprintf(`icacls "%s" /inheritance:r /grant:r "%%USERNAME%%:F" /grant SYSTEM:F /grant Administrators:F`, path)
	refuse := func(reason string) error {
		return &UnavailableError{Path: path, Reason: fmt.Sprintf("%s %s %s", what, path, reason), Fix: fix}
	}
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return refuse(fmt.Sprintf("has an ACL walletgate cannot read (%v), so it cannot tell who may change it", err))
	}
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("journal: current user: %w", err)
	}
	me := user.User.Sid
	owner, _, err := sd.Owner()
	if err != nil || owner == nil || !owner.Equals(me) {
		return refuse("is not owned by the user running walletgate")
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return refuse("has no access list, which lets everyone read and change it")
	}
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return refuse(fmt.Sprintf("has an access entry walletgate cannot read (%v)", err))
		}
		switch ace.Header.AceType {
		case windows.ACCESS_DENIED_ACE_TYPE:
			continue // deny entries only take access away
		case windows.ACCESS_ALLOWED_ACE_TYPE:
		default: // object and callback entries: a layout this does not read; fail closed
			return refuse(fmt.Sprintf("has an access entry of a kind walletgate does not check (type %d)", ace.Header.AceType))
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if sid.Equals(me) || sid.IsWellKnown(windows.WinLocalSystemSid) || sid.IsWellKnown(windows.WinBuiltinAdministratorsSid) {
			continue
		}
		return refuse(fmt.Sprintf("lets %s access it: other users may read or change it", sid.String()))
	}
	return nil
}
