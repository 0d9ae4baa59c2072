package service

import (
	"fmt"
	"strings"
)

// PipeUserRights are what a desktop user may do with the service's pipe:
// read (FILE_GENERIC_READ), write data and attributes (FILE_WRITE_DATA,
// FILE_WRITE_EA, FILE_WRITE_ATTRIBUTES), and no more. Not GW: generic write
// includes FILE_APPEND_DATA, which on a named pipe is
// FILE_CREATE_PIPE_INSTANCE, and with it a desktop user could serve a
// rogue instance of \\.\pipe\walletgate to the next client.
const PipeUserRights = 0x0012019b

// fileCreatePipeInstance is FILE_CREATE_PIPE_INSTANCE (FILE_APPEND_DATA).
const fileCreatePipeInstance = 0x4

// PipeClientAccess is what walletgate connect asks for when it opens the
// pipe: within PipeUserRights (GENERIC_READ, FILE_WRITE_DATA,
// FILE_WRITE_ATTRIBUTES).
const PipeClientAccess = 0x80000000 | 0x2 | 0x100

// PipeSDDL is the named pipe's security descriptor: a protected DACL that
// allows the system and the pipe's owner everything, and each named user
// PipeUserRights (connect, read and write; never create an instance);
// nobody else may open it.
func PipeSDDL(c Config) (string, error) {
	var b strings.Builder
	b.WriteString("D:P(A;;GA;;;SY)(A;;GA;;;OW)")
	for _, p := range c.Users {
		if !strings.HasPrefix(p.SID, "S-1-") || strings.ContainsAny(p.SID, "();") {
			return "", fmt.Errorf("service configuration: user %q has no valid SID (%q)", p.Name, p.SID)
		}
		b.WriteString(fmt.Sprintf("(A;;0x%08x;;;%s)", PipeUserRights, p.SID))
	}
	return b.String(), nil
}
