package terminal

// What the approvals terminal prints: a preview in the order a person
// decides on it, the same as the approval page (network, action, who
// receives in full, amounts, fee, swap details, caps left, simulation,
// wallet, warnings), right above the prompt, with every fact the model was
// shown above that; and how an approved write ended. Rules: every string
// from a preview is sanitized before it reaches the terminal; lines are
// wrapped at spaces to the terminal's width, measured now (it may have been
// resized), and colour is added after wrapping so escapes never count as
// width.

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/walletgate/walletgate/approval"
)

// show prints a preview.
func (t *terminal) show(it pendingItem) {
	v, d := it.view, it.view.Display
	width := t.width()
	rule := strings.Repeat("=", min(width, 72))
	fmt.Fprintln(t.out, rule)
	if d.Text != "" {
		fmt.Fprintln(t.out, "Everything walletgate checked:")
		for _, line := range strings.Split(sanitize(d.Text), "\n") {
			t.say(line, "           ")
		}
		fmt.Fprintln(t.out, strings.Repeat("-", min(width, 72)))
	}
	marker := strings.ToUpper(sanitize(d.Marker))
	style := "1;7"
	if d.Mainnet {
		style = "1;41;97"
	}
	t.say(t.paint(style, " "+marker+" ")+"  "+sanitize(d.Network), "  ")
	t.say(fmt.Sprintf("Preview %s · %s · %s left (until %s) · walletgate pid %d", v.ID, sanitize(v.Tool),
		approval.LeftText(time.Until(v.Expires)), v.Expires.UTC().Format("15:04:05")+" UTC", it.server.PID), "  ")
	action := d.Action
	if action == "" {
		action = d.Title
	}
	t.sayStyled("1", sanitize(action), "  ")
	if p := d.Party; p != nil {
		fmt.Fprintln(t.out, sanitize(p.Role)+":")
		t.sayStyled("1", "    "+strings.Join(approval.AddressGroups(sanitize(p.Address)), " "), "    ")
		t.say("    "+sanitize(p.Kind)+" · "+sanitize(p.Checksum), "    ")
	}
	for _, a := range d.Amounts {
		t.amount(a)
	}
	if d.FeeMax != nil {
		t.amount(*d.FeeMax)
	}
	if d.Rate != "" {
		t.say("Rate: "+sanitize(d.Rate), "  ")
	}
	if d.Slippage != "" {
		t.say("Slippage allowed: "+sanitize(d.Slippage), "  ")
	}
	if len(d.Legs) > 0 {
		fmt.Fprintln(t.out, "Transactions, in order:")
		for i, l := range d.Legs {
			t.say(fmt.Sprintf("  %d. %s: %s (to %s, fee at most %s)", i+1, sanitize(l.Label), sanitize(l.What), sanitize(l.To), sanitize(l.FeeMax)), "     ")
		}
	}
	if d.AllowanceBefore != "" {
		t.say("The router's allowance: "+sanitize(d.AllowanceBefore)+" before, "+sanitize(d.AllowanceAfter)+" after (exact, never unlimited).", "  ")
	}
	if len(d.CapsLeft) > 0 {
		fmt.Fprintln(t.out, "Caps left after this:")
		for _, c := range d.CapsLeft {
			t.say("  "+sanitize(c), "    ")
		}
	}
	if d.Simulation != "" {
		t.say("Simulation: "+sanitize(d.Simulation), "  ")
	}
	if d.Why != "" {
		t.say(sanitize(d.Why), "  ")
	}
	if d.Wallet != "" {
		t.say("From this wallet: "+sanitize(d.Wallet), "  ")
	}
	for _, u := range d.Unverified {
		t.say(t.paint("1;33", "UNVERIFIED TOKEN:")+" "+sanitize(u)+": not in walletgate's known-token table; its name and symbol are whatever the contract says.", "  ")
	}
	for _, w := range d.Warnings {
		t.say(t.paint("1;33", "WARNING:")+" "+sanitize(w), "  ")
	}
	fmt.Fprintln(t.out, rule)
}

// amount prints one sum: rounded, and the exact value when it differs.
func (t *terminal) amount(a approval.Amount) {
	line := sanitize(a.Label) + ": " + t.paint("1", sanitize(a.Rounded))
	if a.Exact != "" && a.Exact != a.Rounded {
		line += " (exactly " + sanitize(a.Exact) + ")"
	}
	t.say(line, "  ")
}

// ended prints how an approval given here ended.
func (t *terminal) ended(v approval.View) {
	switch {
	case v.State == approval.Used && v.Outcome != nil:
		o := v.Outcome
		style := "1;32"
		if o.Status != "confirmed" {
			style = "1;31"
		}
		t.say(t.paint(style, strings.ToUpper(approval.OutcomeHeadline(o.Status))+":")+" preview "+v.ID+" — "+sanitize(o.Summary), "  ")
		for i, h := range o.TxHashes {
			label := "Transaction"
			if len(o.TxHashes) > 1 {
				label = fmt.Sprintf("Transaction %d of %d", i+1, len(o.TxHashes))
			}
			t.say("  "+label+": "+sanitize(h), "    ")
		}
		if o.Block != 0 {
			t.say(fmt.Sprintf("  Included in block %d.", o.Block), "    ")
		}
		for _, e := range o.Effects {
			t.say("  Verified on chain: "+sanitize(e), "    ")
		}
		if o.Fee != "" {
			t.say("  Network fees paid: "+sanitize(o.Fee)+".", "    ")
		}
	case v.State == approval.Expired:
		t.say("The approval of preview "+v.ID+" expired before the assistant used its code. Nothing was signed or sent.", "  ")
	case v.State == approval.Withdrawn:
		t.say("The approval of preview "+v.ID+" was withdrawn (on the page, or after too many wrong codes). Nothing will be signed for it.", "  ")
	default:
		t.say("Preview "+v.ID+" is "+string(v.State)+" now.", "  ")
	}
	fmt.Fprintln(t.out)
}

// say prints s wrapped to the terminal's width; continuation lines start
// with indent. s may hold walletgate's own colour escapes.
func (t *terminal) say(s, indent string) {
	for _, l := range wrap(s, t.width(), indent) {
		fmt.Fprintln(t.out, l)
	}
}

// ask1 prints a prompt wrapped like say, the cursor left after it.
func (t *terminal) ask1(s string) {
	lines := wrap(s, t.width()-1, "  ")
	for _, l := range lines[:len(lines)-1] {
		fmt.Fprintln(t.out, l)
	}
	fmt.Fprint(t.out, lines[len(lines)-1]+" ")
}

// sayStyled is say with every line in style.
func (t *terminal) sayStyled(style, s, indent string) {
	for _, l := range wrap(s, t.width(), indent) {
		fmt.Fprintln(t.out, t.paint(style, l))
	}
}

// wrap breaks s into lines of at most width columns, at spaces (runs of
// spaces inside a line are kept: the preview text aligns its columns); a
// word longer than a line is cut. Continuation lines start with indent.
// ANSI colour escapes take no width.
func wrap(s string, width int, indent string) []string {
	width = max(width, 20)
	if len(indent) > width/2 {
		indent = indent[:width/2]
	}
	var lines []string
	line, n, first := "", 0, true // first: nothing placed on this line yet
	for _, w := range strings.Split(s, " ") {
		if w == "" && first && len(lines) > 0 {
			continue // spaces at a break vanish
		}
		sep, wn := 1, visible(w)
		if first {
			sep = 0
		}
		if !first && n+sep+wn > width {
			lines = append(lines, line)
			line, n, first, sep = indent, len(indent), true, 0
			if w == "" {
				continue
			}
		}
		for first && n+wn > width {
			cut := cutAt(w, width-n)
			lines = append(lines, line+cut)
			w = w[len(cut):]
			wn = visible(w)
			line, n = indent, len(indent)
		}
		if sep == 1 {
			line += " "
			n++
		}
		line += w
		n += wn
		first = false
	}
	return append(lines, line)
}

// visible is the width of s on screen: its runes, without colour escapes.
func visible(s string) int {
	n, in := 0, false
	for _, r := range s {
		switch {
		case r == '\x1b':
			in = true
		case in:
			if r == 'm' {
				in = false
			}
		default:
			n++
		}
	}
	return n
}

// cutAt is the longest prefix of s that is n runes wide (at least one rune).
func cutAt(s string, n int) string {
	i, count := 0, 0
	for i < len(s) && count < max(n, 1) {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i]
}

func (t *terminal) paint(style, s string) string {
	if !t.color {
		return s
	}
	return "\x1b[" + style + "m" + s + "\x1b[0m"
}

// sanitize keeps text inert on a terminal: every control or format
// character but a newline (escape sequences, bidi overrides) becomes U+FFFD.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return unicode.ReplacementChar
		}
		return r
	}, s)
}
