package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
)

// cmdAudit is `walletgate audit verify [FILE]` and `walletgate audit show [FILE]`.
func cmdAudit(argv []string, stdout, stderr io.Writer) error {
	if len(argv) == 0 || (argv[0] != "verify" && argv[0] != "show") || len(argv) > 2 {
		return usagef("usage: walletgate audit verify [FILE] | walletgate audit show [FILE] (default: every journal under WALLETGATE_STATE_DIR)")
	}
	files, err := journalFiles(argv[1:])
	if err != nil {
		return err
	}
	if argv[0] == "verify" {
		return auditVerify(files, stdout)
	}
	return auditShow(files, stdout)
}

// journalFiles is the file named, or every journal under the state root.
func journalFiles(args []string) ([]string, error) {
	if len(args) == 1 {
		return []string{args[0]}, nil
	}
	cfg, err := policy.Load(os.Environ())
	if err != nil {
		return nil, err
	}
	root, err := stateRoot(cfg)
	if err != nil {
		return nil, err
	}
	files, _ := filepath.Glob(filepath.Join(root, "*", journal.FileName))
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("no journal under %s (set WALLETGATE_STATE_DIR, or name a file)", root)
	}
	return files, nil
}

func auditVerify(files []string, stdout io.Writer) error {
	broken := 0
	for _, f := range files {
		n, err := journal.Verify(f)
		if err != nil {
			broken++
			fmt.Fprintf(stdout, "BROKEN %s: %v\n", f, err)
			continue
		}
		fmt.Fprintf(stdout, "ok     %s: %d records, hash chain intact\n", f, n)
	}
	if broken > 0 {
		return fmt.Errorf("%d of %d journals are broken: restore them from a backup, or move the state directory aside to start anew (which resets the per-day caps)", broken, len(files))
	}
	return nil
}

// auditShow prints a journal's history as a person wants to read it.
func auditShow(files []string, stdout io.Writer) error {
	for _, f := range files {
		// Read-only, and up to a broken line if there is one.
		records, err := journal.ReadFile(f)
		fmt.Fprintf(stdout, "== %s (%d records)\n", f, len(records))
		for _, r := range records {
			if line := describe(r); line != "" {
				fmt.Fprintf(stdout, "%s  %s\n", r.Time.UTC().Format("2006-01-02 15:04:05"), line)
			}
		}
		if err != nil {
			fmt.Fprintf(stdout, "BROKEN after the records above: %v\n", err)
		}
	}
	return nil
}

// describe renders one record for people; tool_start records are folded into
// their end (a start with no end is a call that never got an answer).
func describe(r journal.Record) string {
	var d map[string]any
	_ = json.Unmarshal(r.Data, &d)
	str := func(k string) string { v, _ := d[k].(string); return v }
	switch r.Kind {
	case tools.KindSessionStart:
		return fmt.Sprintf("session %s started: wallet %s on chain %v, signer %s, walletgate %s", r.Session, str("wallet"), d["chain_id"], str("signer"), str("version"))
	case tools.KindSessionEnd:
		return fmt.Sprintf("session %s ended", r.Session)
	case tools.KindToolEnd:
		outcome := str("outcome")
		if outcome == "ok" {
			return fmt.Sprintf("%s answered (%vms)", str("tool"), d["ms"])
		}
		return fmt.Sprintf("%s REFUSED: %s", str("tool"), outcome)
	case tools.KindPreview:
		return fmt.Sprintf("%s previewed: %v transaction(s), spend %s", str("tool"), d["legs"], spendText(d["spend"]))
	case tools.KindCapReserve:
		return fmt.Sprintf("caps reserved: %s", spendText(d["change"]))
	case tools.KindCapCorrect:
		return fmt.Sprintf("caps settled: change %s", spendText(d["change"]))
	case tools.KindSigned:
		return fmt.Sprintf("SIGNED %s (%s leg %s), nonce %v", str("tx"), str("tool"), str("leg"), d["nonce"])
	case tools.KindSignature:
		if str("kind") == "unknown" {
			return fmt.Sprintf("SIGNED typed data of an unknown kind (%s), digest %s, no cap", str("tool"), str("digest"))
		}
		return fmt.Sprintf("SIGNED %s (%s), digest %s: %s base units of %s to %s, valid until %s", str("kind"), str("tool"), str("digest"), str("amount"), str("token"), str("counterparty"), str("until"))
	case tools.KindSignatureEnd:
		return fmt.Sprintf("signature %s %s", str("digest"), map[string]string{"used": "seen used on chain: stays counted", "expired": "expired unused: caps released"}[str("end")])
	case tools.KindBroadcast:
		if e := str("error"); e != "" {
			return fmt.Sprintf("broadcast %s: %s (%s)", str("tx"), str("outcome"), e)
		}
		return fmt.Sprintf("broadcast %s: %s", str("tx"), str("outcome"))
	case tools.KindReceipt:
		status := "INCLUDED, succeeded"
		if fmt.Sprint(d["status"]) != "1" {
			status = "INCLUDED, REVERTED"
		}
		return fmt.Sprintf("%s %s in block %v, fee %s wei", str("tx"), status, d["block"], str("fee"))
	case tools.KindApproval:
		if str("decision") == "withdrawn" {
			return fmt.Sprintf("the person WITHDREW the approval of preview %s (%s)", str("approval"), str("tool"))
		}
		return fmt.Sprintf("the person %s preview %s (%s)", strings.ToUpper(str("decision")), str("approval"), str("tool"))
	case tools.KindToolStart:
		return ""
	}
	return r.Kind
}

func spendText(v any) string {
	m, _ := v.(map[string]any)
	var parts []string
	for k, a := range m {
		parts = append(parts, fmt.Sprintf("%v base units of %s", a, k))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// cmdPolicy explains in plain text what an assistant connected with the
// current environment may do right now.
func cmdPolicy(argv []string, stdout, stderr io.Writer) error {
	dev := len(argv) == 1 && argv[0] == "--dev"
	if len(argv) > 0 && !dev {
		return usagef("usage: walletgate policy [--dev]")
	}
	cfg, err := policy.Load(os.Environ())
	if err != nil {
		return err
	}
	deps, _, cleanup, err := wire(context.Background(), cfg, dev, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	defer cleanup()
	if err != nil {
		return err
	}
	text, err := tools.New(deps).PolicyText(context.Background())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, text)
	if deps.JournalErr != nil {
		var ue *journal.UnavailableError
		if errors.As(deps.JournalErr, &ue) {
			fmt.Fprintf(stdout, "\nWRITES ARE BLOCKED: the journal cannot be used: %s. What to do: %s\n", ue.Reason, ue.Fix)
		}
	}
	return nil
}
