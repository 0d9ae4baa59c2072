// Package audit renders a journal's history as a person reads it (`walletgate
// audit show`), from its typed records.
package audit

// Rules of this file:
// records are read as their journal types, never by string keys; amounts are
// shown in the asset's units with its symbol (base units with --base-units,
// or when the asset's decimals are unknown); what did not happen as it
// should — a call never answered, a session with no end, a transaction
// refused or dropped, a phantom reservation released — is said in words.
// The journal is streamed: memory holds only calls and sessions still open.

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/policy"
)

// Options say how Show renders.
type Options struct {
	JSON      bool // one JSON object per line (Event), for machines
	BaseUnits bool // amounts in base units as well
}

// Event is one line of `audit show --json`.
type Event struct {
	Journal string          `json:"journal"`
	Seq     uint64          `json:"seq,omitempty"`
	Time    string          `json:"time,omitempty"`
	Session string          `json:"session,omitempty"`
	Kind    string          `json:"kind"`
	Text    string          `json:"text"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// shower renders one journal.
type shower struct {
	opts     Options
	out      io.Writer
	path     string
	chainID  uint64
	calls    map[string]records.Record // tool_start without its tool_end yet
	sessions map[string]records.Record // session_start without its session_end yet
	n        int
}

// Show writes the history of each journal file (a journal.jsonl with its
// sealed segments, or a copy) to stdout: one line per record that says what
// happened in words, then what never finished; a broken chain is shown
// after the records before it. What is wrong with a journal is shown, not
// returned: the error is always nil today.
func Show(stdout io.Writer, files []string, opts Options) error {
	for _, f := range files {
		s := &shower{opts: opts, out: stdout, path: f, calls: map[string]records.Record{}, sessions: map[string]records.Record{}}
		s.chainID = chainOfDir(f)
		if !opts.JSON {
			fmt.Fprintf(stdout, "== %s\n", f)
		}
		err := journal.Walk(f, func(r records.Record) error {
			s.n++
			s.record(r)
			return nil
		})
		s.summary()
		if err != nil {
			s.emit(records.Record{}, "broken", fmt.Sprintf("BROKEN after the records above: %v", err))
		}
		if !opts.JSON {
			fmt.Fprintf(stdout, "(%d records)\n", s.n)
		}
	}
	return nil
}

// chainOfDir reads the chain id from a state directory named CHAINID-WALLET.
func chainOfDir(f string) uint64 {
	name := filepath.Base(filepath.Dir(f))
	id, _, _ := strings.Cut(name, "-")
	n, _ := strconv.ParseUint(id, 10, 64)
	return n
}

func (s *shower) emit(r records.Record, kind, text string) {
	if s.opts.JSON {
		ev := Event{Journal: s.path, Kind: kind, Text: text}
		if r.Seq > 0 {
			ev.Seq, ev.Time, ev.Session, ev.Data = r.Seq, r.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00"), r.Session, r.Data
		}
		b, _ := json.Marshal(ev)
		fmt.Fprintf(s.out, "%s\n", b)
		return
	}
	if r.Seq == 0 {
		fmt.Fprintln(s.out, text)
		return
	}
	fmt.Fprintf(s.out, "%s  %s\n", r.Time.UTC().Format("2006-01-02 15:04:05"), text)
}

func (s *shower) record(r records.Record) {
	v, err := records.Decode(r)
	if err != nil {
		s.emit(r, r.Kind, fmt.Sprintf("%s (unreadable: %v)", r.Kind, err))
		return
	}
	if text := s.describe(r, v); text != "" {
		s.emit(r, r.Kind, text)
	}
}

// describe renders one record for people; "" for what is folded into a
// later line (a call's start is shown with its end).
func (s *shower) describe(r records.Record, v any) string {
	switch d := v.(type) {
	case records.SessionStart:
		s.sessions[r.Session] = r
		if d.ChainID != 0 {
			s.chainID = d.ChainID
		}
		chain := fmt.Sprint(d.ChainID)
		if d.Genesis != "" {
			chain += " (genesis " + d.Genesis + ")"
		}
		return fmt.Sprintf("session %s started: wallet %s on chain %s, signer %s, walletgate %s (pid %d)", r.Session, d.Wallet, chain, d.Signer, d.Version, r.PID)
	case records.SessionEnd:
		delete(s.sessions, r.Session)
		return fmt.Sprintf("session %s ended", r.Session)
	case records.ToolStart:
		s.calls[d.Call] = r
		return ""
	case records.ToolEnd:
		delete(s.calls, d.Call)
		switch d.Outcome {
		case "ok":
			return fmt.Sprintf("%s answered (%dms)", d.Tool, d.MS)
		case "confirmed", "reverted", "pending", "effect_mismatch", "incomplete":
			return fmt.Sprintf("%s answered %s (%dms)", d.Tool, strings.ToUpper(d.Outcome), d.MS)
		}
		return fmt.Sprintf("%s REFUSED: %s", d.Tool, d.Outcome)
	case records.Preview:
		return fmt.Sprintf("%s previewed: %d transaction(s), spend %s", d.Tool, d.Legs, s.spend(d.Spend))
	case records.CapChange:
		switch {
		case r.Kind == records.KindCapReserve && d.Nonce != nil:
			return fmt.Sprintf("caps reserved (%s): %s, with nonce %d", d.ID, s.spend(d.Change), *d.Nonce)
		case r.Kind == records.KindCapReserve:
			return fmt.Sprintf("caps reserved (%s): %s", d.ID, s.spend(d.Change))
		case d.Reason == records.ReasonPhantom:
			return fmt.Sprintf("PHANTOM reservation %s RELEASED at start-up: its process died after reserving and before signing, so nothing was sent; returned %s", d.ID, s.spend(negate(d.Change)))
		}
		return fmt.Sprintf("caps settled (%s): change %s", d.ID, s.spend(d.Change))
	case records.Signed:
		return fmt.Sprintf("SIGNED %s (%s leg %s), nonce %d", d.Tx, d.Tool, d.Leg, d.Nonce)
	case records.Broadcast:
		switch d.Outcome {
		case records.BroadcastAccepted:
			return fmt.Sprintf("broadcast %s: accepted by the node", d.Tx)
		case records.BroadcastRefused:
			return fmt.Sprintf("broadcast %s: REFUSED by the node (%s); whether it has the transaction is decided next (refused-final only if it does not)", d.Tx, d.Error)
		}
		return fmt.Sprintf("broadcast %s: outcome UNKNOWN (%s): the node may have it; counted against the caps until its outcome is known", d.Tx, d.Error)
	case records.Receipt:
		status := "INCLUDED, succeeded"
		if d.Status != 1 {
			status = "INCLUDED, REVERTED (only its fee was spent)"
		}
		fee, _ := new(big.Int).SetString(d.Fee, 10)
		return fmt.Sprintf("%s %s in block %d, fee %s", d.Tx, status, d.Block, s.amount("ETH", fee))
	case records.Dropped:
		switch r.Kind {
		case records.KindRefusedFinal:
			return fmt.Sprintf("%s NOT SENT, FINAL: the node refused it and does not have it, and nonce %d was not passed (%s); never sent again, its caps released", d.Tx, d.Nonce, d.Reason)
		case records.KindAbandoned:
			return fmt.Sprintf("%s ABANDONED: signed, but no broadcast was ever journaled; never sent; counted until nonce %d is used by another transaction", d.Tx, d.Nonce)
		}
		return fmt.Sprintf("%s DROPPED: it never executed (%s, nonce %d); released once every transaction of its reservation is shown never to be included", d.Tx, d.Reason, d.Nonce)
	case records.Nonce:
		if r.Kind == records.KindNonceFree {
			return fmt.Sprintf("nonce %d given back by reservation %s (nothing was signed with it)", d.Nonce, d.Reservation)
		}
		return fmt.Sprintf("nonce %d taken by reservation %s", d.Nonce, d.Reservation)
	case records.Signature:
		if d.Kind == records.SignatureUnknown {
			return fmt.Sprintf("SIGNED typed data of an unknown kind (%s), digest %s: no cap applied", d.Tool, d.Digest)
		}
		amount, _ := new(big.Int).SetString(d.Amount, 10)
		return fmt.Sprintf("SIGNED %s (%s), digest %s: %s to %s, valid until %s", d.Kind, d.Tool, d.Digest, s.amount(d.Token, amount), d.Counterparty, d.Until.UTC().Format(time.RFC3339))
	case records.SignatureEnd:
		if d.End == "used" {
			return fmt.Sprintf("signature %s seen USED on chain: what it granted stays counted", d.Digest)
		}
		return fmt.Sprintf("signature %s EXPIRED unused: its reservation is released", d.Digest)
	case records.Approval:
		if d.Decision == "withdrawn" {
			return fmt.Sprintf("the person WITHDREW the approval of preview %s (%s)", d.Approval, d.Tool)
		}
		return fmt.Sprintf("the person %s preview %s (%s)", strings.ToUpper(d.Decision), d.Approval, d.Tool)
	case records.Checkpoint:
		var st records.Live
		_ = json.Unmarshal(d.State, &st)
		return fmt.Sprintf("-- %s sealed; checkpoint: %d transaction(s) without an outcome, %d open reservation(s), %d cap change(s) in the window", d.Sealed, len(st.Pending), len(st.Reservations), len(st.Caps))
	case records.Repair:
		return fmt.Sprintf("REPAIRED: an incomplete final line (line %d of %s, %d bytes: %s) was cut by walletgate audit repair", d.Line, d.File, d.Bytes, d.Content)
	}
	return r.Kind
}

// summary names what never finished.
func (s *shower) summary() {
	for _, r := range sorted(s.calls) {
		var d records.ToolStart
		_ = records.DecodeInto(r, &d)
		s.emit(r, "unanswered", fmt.Sprintf("NEVER ANSWERED: the %s call %s started but no answer was recorded (the process stopped during it, or it is still running)", d.Tool, d.Call))
	}
	for _, r := range sorted(s.sessions) {
		s.emit(r, "no_end", fmt.Sprintf("SESSION WITHOUT AN END: session %s (pid %d) started here and recorded no end: it was killed or crashed (or is still running)", r.Session, r.PID))
	}
}

func sorted(m map[string]records.Record) []records.Record {
	out := make([]records.Record, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

func negate(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if n, ok := new(big.Int).SetString(v, 10); ok {
			out[k] = n.Neg(n).String()
		} else {
			out[k] = v
		}
	}
	return out
}

// spend renders asset → base units.
func (s *shower) spend(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for asset, v := range m {
		n, ok := new(big.Int).SetString(v, 10)
		if !ok {
			parts = append(parts, fmt.Sprintf("%q (not a number) of %s", v, asset))
			continue
		}
		parts = append(parts, s.amount(asset, n))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// amount renders base units of asset ("ETH" or a token address) in the
// asset's units when its decimals are known.
func (s *shower) amount(asset string, n *big.Int) string {
	if n == nil {
		return "an unreadable amount"
	}
	symbol, decimals, known := "ETH", uint8(18), asset == "ETH"
	if !known && common.IsHexAddress(asset) {
		for _, t := range policy.KnownTokens(s.chainID) {
			if strings.EqualFold(t.Address.Hex(), asset) {
				symbol, decimals, known = t.Symbol, t.Decimals, true
			}
		}
	}
	if !known {
		return fmt.Sprintf("%s base units of token %s (decimals unknown)", n, asset)
	}
	text := policy.FormatAmount(n, decimals) + " " + symbol
	if s.opts.BaseUnits {
		text += fmt.Sprintf(" (%s base units)", n)
	}
	return text
}
