package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testRef is how THREAT-MODEL.md names a test: `path/file_test.go` `TestName`.
var testRef = regexp.MustCompile("`([a-z0-9_/]+_test\\.go)` `((?:Test|Fuzz)[A-Za-z0-9_]+)`")

// TestThreatModelNamesRealTests keeps THREAT-MODEL.md honest: every test it
// cites must exist in the file it names.
func TestThreatModelNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile("../../THREAT-MODEL.md")
	require.NoError(t, err)
	refs := testRef.FindAllStringSubmatch(string(doc), -1)
	require.Greater(t, len(refs), 30, "the threat model cites its tests")
	for _, r := range refs {
		src, err := os.ReadFile(filepath.Join("../..", r[1]))
		require.NoError(t, err, "THREAT-MODEL.md cites %s", r[1])
		require.True(t, strings.Contains(string(src), "func "+r[2]+"("), "THREAT-MODEL.md cites %s in %s, which does not define it", r[2], r[1])
	}
}
