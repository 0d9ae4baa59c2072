package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/walletgate/walletgate/internal/app"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/audit"
	"github.com/walletgate/walletgate/policy"
)

// cmdAudit is `walletgate audit verify|show|repair`.
func cmdAudit(argv []string, stdout, stderr io.Writer) error {
	const use = "usage: walletgate audit verify [FILE] | walletgate audit show [--json] [--base-units] [FILE] | walletgate audit repair [FILE] (default: every journal under WALLETGATE_STATE_DIR)"
	if len(argv) == 0 {
		return usagef(use)
	}
	cmd, rest := argv[0], argv[1:]
	var opts audit.Options
	var args []string
	for _, a := range rest {
		switch {
		case cmd == "show" && a == "--json":
			opts.JSON = true
		case cmd == "show" && a == "--base-units":
			opts.BaseUnits = true
		case strings.HasPrefix(a, "-"):
			return cmdLinef("audit "+cmd, "unknown flag %q; %s", a, use)
		default:
			args = append(args, a)
		}
	}
	if len(args) > 1 || (cmd != "verify" && cmd != "show" && cmd != "repair") {
		return usagef(use)
	}
	if cmd == "verify" && len(args) == 0 {
		if cfg, err := policy.Load(os.Environ()); err == nil && cfg.StateURL != "" && sharedState != nil {
			return sharedState.verify(cfg, stdout)
		}
	}
	files, err := journalFiles(args)
	if err != nil {
		return err
	}
	switch cmd {
	case "verify":
		return auditVerify(files, stdout)
	case "repair":
		return auditRepair(files, stdout)
	}
	return audit.Show(stdout, files, opts)
}

// journalFiles is the file named (a journal.jsonl, or a state directory of
// one wallet), or every journal under the state root.
func journalFiles(args []string) ([]string, error) {
	if len(args) == 1 {
		if fi, err := os.Stat(args[0]); err == nil && fi.IsDir() {
			return []string{filepath.Join(args[0], journal.FileName)}, nil
		}
		return []string{args[0]}, nil
	}
	cfg, err := policy.Load(os.Environ())
	if err != nil {
		return nil, err
	}
	root, err := app.StateRoot(cfg)
	if err != nil {
		return nil, err
	}
	// A journal whose active file is missing is still listed by its head:
	// that is a journal the server refuses.
	seen := map[string]bool{}
	for _, pattern := range []string{journal.FileName, journal.HeadName} {
		found, _ := filepath.Glob(filepath.Join(root, "*", pattern))
		for _, f := range found {
			seen[filepath.Join(filepath.Dir(f), journal.FileName)] = true
		}
	}
	files := make([]string, 0, len(seen))
	for f := range seen {
		files = append(files, f)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("no journal under %s (set WALLETGATE_STATE_DIR, or name a file)", root)
	}
	return files, nil
}

// auditVerify proves each journal's whole history, across its sealed
// segments, and fails whenever the server would refuse writes with it.
func auditVerify(files []string, stdout io.Writer) error {
	broken := 0
	for _, f := range files {
		n, err := journal.Verify(f)
		if err != nil {
			broken++
			fmt.Fprintf(stdout, "BROKEN %s: %v\n", f, err)
			fmt.Fprintf(stdout, "       walletgate refuses writes with this journal. %s\n", verifyHint(f, err))
			continue
		}
		segs := 1
		if filepath.Base(f) == journal.FileName {
			if all, err := journal.Segments(filepath.Dir(f)); err == nil {
				segs = len(all)
			}
		}
		fmt.Fprintf(stdout, "ok     %s: %d records in %d segment(s), hash chain intact, checkpoints match the history%s\n", f, n, segs, boundTo(filepath.Dir(f)))
	}
	if broken > 0 {
		return fmt.Errorf("%d of %d journals are broken: restore them from a backup, or move the state directory aside to start anew (which resets the per-day caps)", broken, len(files))
	}
	return nil
}

// boundTo says which chain a journal directory belongs to, for audit
// verify (which asks no node: every namespace is verified).
func boundTo(dir string) string {
	b, err := app.LoadBinding(dir)
	switch {
	case err != nil:
		return "; its chain binding cannot be read, so walletgate refuses writes with it: " + err.Error()
	case b == nil:
		return "; not bound to a chain yet (the next start adopts it for its node's genesis)"
	}
	return fmt.Sprintf("; bound to chain %d, genesis %s", b.ChainID, b.Genesis.Hex())
}

// verifyHint says what to do about a broken journal.
func verifyHint(f string, err error) string {
	var ue *journal.UnavailableError
	if errors.As(err, &ue) {
		return "What to do: " + ue.Fix
	}
	if be := (*journal.BrokenError)(nil); errors.As(err, &be) && be.Torn {
		return fmt.Sprintf("The last write was cut short: `walletgate audit repair %s` cuts that incomplete line (and only that), keeping the day window.", f)
	}
	return "Restore the named file from a backup; or move the state directory aside to start anew (which resets the per-day caps)."
}

// auditRepair cuts an incomplete final line off each journal that has one.
func auditRepair(files []string, stdout io.Writer) error {
	failed := 0
	for _, f := range files {
		rep, err := journal.RepairTornLine(filepath.Dir(f), "audit-repair", time.Now)
		switch {
		case errors.Is(err, journal.ErrNothingToRepair):
			fmt.Fprintf(stdout, "ok       %s: the last line is complete; nothing to repair\n", f)
		case err != nil:
			failed++
			fmt.Fprintf(stdout, "REFUSED  %s: %v\n", f, err)
		default:
			fmt.Fprintf(stdout, "REPAIRED %s: cut the incomplete line %d (%d bytes: %s); the repair is journaled, everything else is as it was\n", f, rep.Line, rep.Bytes, rep.Content)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d journals could not be repaired: audit repair only cuts an incomplete final line; run `walletgate audit verify` to see what else is wrong", failed, len(files))
	}
	return nil
}
