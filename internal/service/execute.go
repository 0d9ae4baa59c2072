package service

import (
	"errors"
	"fmt"
	"os"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/atomicfile"
)

// execute carries out plan, step by step, and stops at the first step that
// fails (an Optional step's failure aside: an Optional copy skips only a
// missing source; other Optional steps stop what may not be running). It
// returns the enrolment's secret, for the installing terminal only. Each
// system's executeStep carries out the steps commonStep does not.
func execute(plan Plan, run func(string, ...string) error) (secret string, err error) {
	for _, s := range plan.Steps {
		if err := executeStep(s, run, &secret); err != nil && (!s.Optional || s.Op == OpCopy) {
			return "", fmt.Errorf("%s: %w", s, err)
		}
	}
	return secret, nil
}

// commonStep carries out a step every system does alike (running a command,
// removing a path); done is false for the others.
func commonStep(s Step, run func(string, ...string) error) (done bool, err error) {
	switch s.Op {
	case OpRun:
		return true, run(s.Argv[0], s.Argv[1:]...)
	case OpRemove:
		if s.All {
			err = os.RemoveAll(s.Path)
		} else {
			err = os.Remove(s.Path)
		}
		if errors.Is(err, os.ErrNotExist) {
			return true, nil
		}
		return true, err
	}
	return false, nil
}

// fileStep carries out a step that puts a file in place (a copy, a write,
// the enrolment's secret) with mode, owned by uid:gid (-1: as made); done
// is false for the others.
func fileStep(s Step, mode os.FileMode, uid, gid int, secret *string) (done bool, err error) {
	switch s.Op {
	case OpCopy:
		if _, err := os.Stat(s.Src); s.Optional && errors.Is(err, os.ErrNotExist) {
			return true, nil
		}
		if s.Replace {
			if err := os.Remove(s.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return true, err
			}
		}
		return true, copyFile(s.Src, s.Path, mode, uid, gid)
	case OpWrite:
		return true, atomicfile.Write(s.Path, s.Data, mode, uid, gid)
	case OpEnrol:
		*secret, err = approval.NewEnrolment(s.Path, approval.EnrolmentTTL, uid, gid)
		return true, err
	}
	return false, nil
}
