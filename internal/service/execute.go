package service

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/atomicfile"
	"github.com/walletgate/walletgate/signer"
)

// outcome is what an install's steps tell the installing terminal only:
// the enrolment's secret and the wallet's address (of the key made or
// imported).
type outcome struct {
	secret  string
	address string
}

// execute carries out plan, step by step, and stops at the first step that
// fails (an Optional step's failure aside: an Optional copy skips only a
// missing source; other Optional steps stop what may not be running). It
// returns the enrolment's secret and the wallet's address, for the
// installing terminal only. Each system's executeStep carries out the steps
// commonStep does not.
func execute(plan Plan, run func(string, ...string) error) (outcome, error) {
	var out outcome
	for _, s := range plan.Steps {
		if err := executeStep(s, run, &out); err != nil && (!s.Optional || s.Op == OpCopy) {
			return outcome{}, fmt.Errorf("%s: %w", s, err)
		}
	}
	return out, nil
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
// the enrolment's secret, a new key) with mode, owned by uid:gid (-1: as
// made), or checks an imported key; done is false for the others.
func fileStep(s Step, mode os.FileMode, uid, gid int, out *outcome) (done bool, err error) {
	switch s.Op {
	case OpCopy:
		if _, err := os.Lstat(s.Src); s.Optional && errors.Is(err, os.ErrNotExist) {
			return true, nil // a link there is copied (refused), not skipped
		}
		if s.Replace {
			if err := os.Remove(s.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return true, err
			}
		}
		return true, copyFile(s.Src, s.Path, mode, uid, gid, s.RootSource)
	case OpWrite:
		return true, atomicfile.Write(s.Path, s.Data, mode, uid, gid)
	case OpEnrol:
		out.secret, err = approval.NewEnrolment(s.Path, approval.EnrolmentTTL, uid, gid)
		return true, err
	case OpNewKey:
		out.address, err = newKeyFile(s.Path, mode, uid, gid)
		return true, err
	case OpCheckKey:
		out.address, err = checkKey(s.Path, s.Src)
		return true, err
	}
	return false, nil
}

// newKeyFile makes a new key and writes it, hex, to a new file path (never
// over one) with mode, owned by uid:gid; it returns the key's address.
func newKeyFile(path string, mode os.FileMode, uid, gid int) (string, error) {
	if _, err := os.Lstat(path); err == nil {
		return "", fmt.Errorf("%s exists: the service's key is not made again; remove it (after a backup) or import it with --import-key-file", path)
	}
	key, err := crypto.GenerateKey()
	if err != nil {
		return "", fmt.Errorf("make a key: %w", err)
	}
	b := crypto.FromECDSA(key)
	data := []byte(hex.EncodeToString(b) + "\n")
	defer clear(data)
	defer clear(b)
	if err := atomicfile.Write(path, data, mode, uid, gid); err != nil {
		return "", err
	}
	return crypto.PubkeyToAddress(key.PublicKey).Hex(), nil
}

// checkKey loads the imported key at path (a keystore with its password
// file, or a key file) and returns its address: the import is checked
// before the person's copy is removed.
func checkKey(path, password string) (string, error) {
	var s signer.Signer
	var err error
	if password != "" {
		s, err = signer.FromKeystore(path, password)
	} else {
		s, err = signer.FromKeyFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("the imported key does not load (%w): nothing of yours was removed", err)
	}
	return s.Address().Hex(), nil
}
