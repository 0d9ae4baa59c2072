package service

import (
	"fmt"
	"strings"
)

// PipeSDDL is the named pipe's security descriptor: a protected DACL that
// allows the system and the pipe's owner everything, and each named user
// read and write; nobody else may open it.
func PipeSDDL(c Config) (string, error) {
	var b strings.Builder
	b.WriteString("D:P(A;;GA;;;SY)(A;;GA;;;OW)")
	for _, p := range c.Users {
		if !strings.HasPrefix(p.SID, "S-1-") || strings.ContainsAny(p.SID, "();") {
			return "", fmt.Errorf("service configuration: user %q has no valid SID (%q)", p.Name, p.SID)
		}
		b.WriteString("(A;;GRGW;;;" + p.SID + ")")
	}
	return b.String(), nil
}
