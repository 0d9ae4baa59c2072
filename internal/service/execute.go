package service

import (
	"errors"
	"fmt"
	"os"
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
