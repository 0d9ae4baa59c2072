//go:build unix

package service

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// The Unix executor on real files, owned by whoever runs the test (the root
// test in cmd/walletgate runs it as root with a real service user).
func TestExecuteCarriesOutAPlanAndStopsAtTheFirstFailure(t *testing.T) {
	me, err := user.Current()
	require.NoError(t, err)
	g, err := user.LookupGroupId(me.Gid)
	require.NoError(t, err)
	dir := t.TempDir()
	key := filepath.Join(dir, "user.key")
	require.NoError(t, os.WriteFile(key, []byte("k"), 0o600))
	home := filepath.Join(dir, "home")
	var ran []string
	run := func(name string, args ...string) error {
		ran = append(ran, name+" "+strings.Join(args, " "))
		if name == "fails" {
			return errors.New("exit status 1")
		}
		return nil
	}
	plan := Plan{Steps: []Step{
		{Op: OpDir, Path: home, Mode: 0o700, Owner: me.Username, Group: g.Name},
		{Op: OpCopy, Src: key, Path: filepath.Join(home, "key"), Mode: 0o600, Owner: me.Username, Group: g.Name},
		{Op: OpCopy, Src: filepath.Join(dir, "missing"), Path: filepath.Join(home, "devnet"), Mode: 0o755, Owner: me.Username, Group: g.Name, Replace: true, Optional: true},
		{Op: OpWrite, Path: filepath.Join(home, "config"), Data: []byte("{}"), Mode: 0o640, Owner: me.Username, Group: g.Name},
		{Op: OpRun, Argv: []string{"fails", "but", "may"}, Optional: true},
		{Op: OpRemove, Path: filepath.Join(dir, "never-was")},
		{Op: OpEnrol, Path: home, Owner: me.Username, Group: g.Name},
	}}
	done, err := execute(plan, run)
	secret := done.secret
	require.NoError(t, err)
	require.Regexp(t, `^[0-9a-f]{64}$`, secret, "the enrolment's secret, for the terminal")
	for path, mode := range map[string]os.FileMode{home: 0o700 | os.ModeDir, filepath.Join(home, "key"): 0o600, filepath.Join(home, "config"): 0o640, filepath.Join(home, "passkey-enrolment.json"): 0o600} {
		fi, err := os.Stat(path)
		require.NoError(t, err, path)
		require.Equal(t, mode, fi.Mode()&(os.ModePerm|os.ModeDir), path)
		require.Equal(t, me.Uid, itoa(fi.Sys().(*syscall.Stat_t).Uid), path)
	}
	_, err = os.Stat(filepath.Join(home, "devnet"))
	require.ErrorIs(t, err, os.ErrNotExist, "an Optional copy of a missing file is skipped")
	b, err := os.ReadFile(key)
	require.NoError(t, err)
	require.Equal(t, "k", string(b), "the user's copy is left alone")
	require.NotContains(t, secret, string(b))
	enrolment, err := os.ReadFile(filepath.Join(home, "passkey-enrolment.json"))
	require.NoError(t, err)
	require.NotContains(t, string(enrolment), secret, "the service keeps only the secret's hash")

	// An import never overwrites; a failing step stops the plan there.
	ran = nil
	_, err = execute(Plan{Steps: []Step{
		{Op: OpCopy, Src: key, Path: filepath.Join(home, "key"), Mode: 0o600, Owner: me.Username, Group: g.Name},
		{Op: OpRun, Argv: []string{"after"}},
	}}, run)
	require.ErrorIs(t, err, os.ErrExist)
	require.Empty(t, ran, "nothing runs after a failed step")
	_, err = execute(Plan{Steps: []Step{{Op: OpRun, Argv: []string{"fails"}}, {Op: OpRun, Argv: []string{"after"}}}}, run)
	require.ErrorContains(t, err, "run fails: exit status 1")
	require.Equal(t, []string{"fails "}, ran)
	_, err = execute(Plan{Steps: []Step{{Op: OpCreateService, Service: &WindowsService{Name: "walletgate"}}}}, run)
	require.ErrorContains(t, err, "Windows step")
}

func itoa(u uint32) string { return strconv.FormatUint(uint64(u), 10) }
