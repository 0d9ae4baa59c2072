// Package approval lets a person, not the model, approve a previewed write:
// it keeps the previews awaiting a decision, shows them on a local web page
// and to `walletgate approvals` over a unix socket, and turns an approval into
// a short one-time code that the confirm call must carry.
package approval

// Broker rules:
//   - A preview enters as pending with the gate token that confirms it; the
//     token never leaves the broker except through Redeem.
//   - Approve moves a live pending entry to approved and gives it a fresh
//     random code; Reject moves a live pending entry to rejected, or takes
//     back a live approval whose code is unused (withdrawn), and revokes its
//     token. Neither acts on an entry that is expired or used.
//   - Redeem(code, fingerprint) hands out the token exactly once: for the
//     entry the code was issued to, only if that entry was previewed with the
//     same fingerprint and has not expired. A code that names an entry spends
//     it whatever the outcome (a mismatch too), as the gate does with tokens.
//   - A wrong code offered for an approved entry's fingerprint counts as an
//     attempt; after maxAttempts the entry is revoked. A model cannot try
//     codes for long against a preview the person approved.
//   - Every entry belongs to the session that previewed it (one MCP
//     connection of the service; stdio has one). A session's Redeem, Spend,
//     Finish, AwaitApproval and Get see only its own entries: another
//     session's code is no code to it (it spends nothing, and counts as a
//     wrong code only against the caller's own approval), its wrong codes
//     never count against another's approval, and no refusal names another
//     session's preview. The person's page and terminal see every entry.
//   - A session holds at most maxLivePerSession live (pending or approved)
//     entries; when the broker's maxLive are taken, the session holding the
//     most gives way to one holding fewer (its oldest pending entry is
//     dropped), so that a flood in some sessions never crowds out another.
//   - Every time decision uses the injected clock; an entry is live while
//     now < expires.

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strings"
	"sync"
	"time"
)

// Refusal codes of Redeem, Approve and Reject. They are stable.
const (
	CodePending    = "APPROVAL_PENDING"
	CodeRejected   = "APPROVAL_REJECTED"
	CodeWithdrawn  = "APPROVAL_WITHDRAWN"
	CodeExpired    = "APPROVAL_EXPIRED"
	CodeUnknown    = "CODE_UNKNOWN"
	CodeWrong      = "CODE_WRONG"
	CodeUsed       = "CODE_USED"
	CodeMismatch   = "ARGS_MISMATCH"
	CodeNotFound   = "APPROVAL_NOT_FOUND"
	CodeNotPending = "APPROVAL_NOT_PENDING"
	CodeDropped    = "APPROVAL_DROPPED"
	CodeTooMany    = "TOO_MANY_PENDING"
)

// State is where an entry stands.
type State string

// The states of an entry. Expired is derived from the clock, never stored.
const (
	Pending  State = "pending"
	Approved State = "approved"
	Rejected State = "rejected"
	// Withdrawn: approved, then taken back by the person or after too many
	// wrong codes.
	Withdrawn State = "withdrawn"
	Used      State = "used"
	Expired   State = "expired"
	// Dropped: pending, and dropped because the broker was full and its
	// session held more previews than its share.
	Dropped State = "dropped"
)

const (
	// maxAttempts is how many wrong codes an approved entry survives.
	maxAttempts = 3
	// keepAfter is how long a decided or expired entry stays listed, so that
	// a late confirm is told what happened rather than "unknown".
	keepAfter = 10 * time.Minute
	// maxLive bounds the live (pending or approved) entries of all
	// sessions, maxLivePerSession those of one (the gate bounds a session's
	// tokens per chain), maxKept every entry listed, decided ones included.
	maxLive           = 512
	maxLivePerSession = 64
	maxKept           = 1024
	// codeDigits is the length of a one-time code.
	codeDigits = 6
	// idAlphabet makes short ids a person can read aloud: no 0/O, 1/I/L.
	idAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
	idLength   = 4
)

// Error is a refusal for the person or the model: a stable code and plain
// words. It never holds a code or a token.
type Error struct {
	Code    string
	Message string
}

// Error returns "CODE: message".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Request is a preview entering the broker.
type Request struct {
	Tool        string
	Fingerprint [32]byte
	Token       string // the gate token that confirms it; never shown
	Expires     time.Time
}

// Display is what a person sees of a preview, as facts in the order they
// decide on them: the network, the action, who receives (in full), the
// amounts, the fee, how the caps stand after it, the simulation, the
// warnings. Every string in it is already inert text (on-chain names and
// symbols made harmless by the caller); the page escapes it again and the
// terminal strips control characters again. Nothing in it is addressed to
// the model. Empty fields are not shown.
type Display struct {
	Title   string // one line for lists, without the network: "Send 25 USDT to 0x252F…9A43"
	Action  string // the action in one line, amounts exact: "Send 25.123456 USDT"
	Network string // the network's name and chain id: "dev, chain id 1337"
	Marker  string // "MAINNET (real funds)", "testnet" or "local dev chain"
	Mainnet bool   // value-bearing: shown loudest
	Wallet  string // the wallet that signs and pays, EIP-55
	// Party is who the wallet sends to or lets spend (a recipient, a router,
	// a spender), shown in full; nil when there is none.
	Party   *Party
	Amounts []Amount // what leaves and what arrives, in order
	FeeMax  *Amount  // the most the network fees can be, rounded up
	// Swaps: the rate both ways rounded, the slippage allowed, and every
	// transaction in order (an approval included) with the allowance the
	// router has before and will have after.
	Rate            string // "1 WETH ≈ 3,001.2 USDT"
	Slippage        string // "0.5% (50 bps)"
	Legs            []Leg
	AllowanceBefore string   // "0 USDT"
	AllowanceAfter  string   // "0 USDT (the swap uses all of it)"
	CapsLeft        []string // one line per capped window: "USDT per transaction: 74.876544 of 100 left after this"
	Simulation      string   // the simulation's result in words
	Why             string   // tiered approval: why a person is asked, e.g. "it spends up to 25 USDT, above the 20 USDT …"
	Unverified      []string // tokens not in the known-token table, e.g. "FOO (0x…)"
	Warnings        []string
	// Text is every fact of the preview in the model's words, without what
	// is addressed to the model (how to confirm, a frozen "expires in").
	Text string
}

// Party is the other side of a write, shown in full so that a person can
// compare every character.
type Party struct {
	Role     string // "Recipient", "Router", "Spender"
	Address  string // 0x + 40 hex digits, EIP-55
	Kind     string // what it is: "an account without code", "a contract", "this wallet itself", "Uniswap SwapRouter02"
	Checksum string // how far the address was checked: "EIP-55 checksum verified", "given in one case: no checksum to verify", "from walletgate's own table"
}

// Amount is a sum as a person reads it: rounded, with every digit one click
// away.
type Amount struct {
	Label   string // what the sum is: "Send", "Pay", "Receive at least", "Network fee, at most"
	Rounded string // for reading, e.g. "≈ 25.12 USDT"; the exact text when it is short
	Exact   string // every digit, with base units: "25.123456 USDT (25123456 base units)"
}

// Leg is one transaction of a write that needs several, in the order they
// are sent.
type Leg struct {
	Label  string // "reset approval", "approve", "swap"
	What   string // in words: "let the router take exactly 30 USDT"
	To     string // the contract called, EIP-55
	FeeMax string // its fee at most, rounded up: "0.00012 ETH"
}

// Outcome is how a confirmed approval ended, told by walletgate after the
// confirm: what the person sees on the used preview.
type Outcome struct {
	Status   string   // "confirmed", "reverted", "pending", "mismatch", "partial", "signed" or "refused"
	Summary  string   // one sentence in plain words
	TxHashes []string // every transaction sent, in order; empty when none was
	Block    uint64   // the block of the last one; 0 when not included
	Effects  []string // what was verified on chain, in words
	Fee      string   // the fees paid, e.g. "0.000042 ETH"; "" when unknown
}

// View is an entry as the page and the terminal show it.
type View struct {
	ID      string    `json:"id"`
	Tool    string    `json:"tool"`
	State   State     `json:"state"`
	Expires time.Time `json:"expires"`
	Code    string    `json:"code,omitempty"` // only while approved and unused
	Display Display   `json:"display"`
	// Outcome is set once the code was used and walletgate told the broker
	// how the write ended (Finish); nil before, or when it never did.
	Outcome *Outcome `json:"outcome,omitempty"`
	// Now is when the view was taken, for the time left until Expires.
	Now time.Time `json:"now"`
}

// Left is the time the view had left until it expired, rounded down to the
// second; zero when none.
func (v View) Left() time.Duration {
	d := v.Expires.Sub(v.Now).Truncate(time.Second)
	if d < 0 {
		return 0
	}
	return d
}

// entry is one preview in the broker; guarded by Broker.mu.
type entry struct {
	id          string
	session     string // the session that previewed it
	tool        string
	fingerprint [32]byte
	token       string
	expires     time.Time
	decided     time.Time // when it left pending
	state       State     // Pending, Approved, Rejected or Used
	code        string    // six digits, set on approval
	attempts    int
	display     Display
	outcome     *Outcome
	seq         uint64
}

// Broker holds the previews that await, or received, a person's decision. It
// is safe for concurrent use.
type Broker struct {
	now    func() time.Time
	random io.Reader
	// revoke, decided and where are Options' Revoke, Decided and Where,
	// set once by NewBroker and never changed (read without the lock).
	revoke  func(token string)
	decided func(Decision)
	where   string

	mu      sync.Mutex
	entries map[string]*entry // id → entry
	seq     uint64
	changed chan struct{} // closed and replaced on every change
}

// Options are what a Broker is built with; the zero value is a broker on
// the wall clock that spends no token and tells no one.
type Options struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Revoke is called with the gate token of every entry that is rejected,
	// mismatched or out of attempts, so it can never be used; nil: there is
	// nothing to spend (a terminal's copy of a server's list).
	Revoke func(token string)
	// Decided, when set, hears of each decision of the person (approved,
	// rejected or withdrawn), after it is made and outside the lock: the
	// audit trail.
	Decided func(Decision)
	// Where says where the person approves, in what the model is told;
	// "" is walletgate's page or its terminal (a service names no
	// command: "on the approval page").
	Where string
}

// NewBroker returns an empty broker built with o. Its callbacks are fixed
// here: nothing is patched in later.
func NewBroker(o Options) *Broker {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Broker{now: now, random: rand.Reader, revoke: o.Revoke, decided: o.Decided, where: o.Where, entries: map[string]*entry{}, changed: make(chan struct{})}
}

func (b *Broker) whereLocked() string {
	if b.where == "" {
		return "on walletgate's approval page (or in the terminal the preview named)"
	}
	return b.where
}

// Decision is a person's decision on a preview, for the audit trail.
type Decision struct {
	// Session is the session that previewed it.
	Session     string
	ID          string
	Tool        string
	Fingerprint [32]byte
	State       State // Approved, Rejected or Withdrawn
	// Passkey is the credential id (base64url) of the passkey that gave
	// an approval on the page; "" otherwise.
	Passkey string
}

// Session is one session's side of a broker: the previews it lists and the
// codes that confirm them. Its zero value is not usable; get one from
// Broker.Session.
type Session struct {
	b    *Broker
	name string
}

// Session returns session name's side of the broker. The Broker's own Add,
// Redeem, Spend, Finish and AwaitApproval are the session "".
func (b *Broker) Session(name string) Session { return Session{b: b, name: name} }

// Add lists a new preview of this session as pending (see Broker.Add).
func (s Session) Add(r Request, render func(id string) Display) (string, error) {
	return s.b.add(s.name, r, render)
}

// Redeem is Broker.Redeem among this session's entries only.
func (s Session) Redeem(code string, fingerprint [32]byte) (string, error) {
	return s.b.redeem(s.name, code, fingerprint)
}

// Spend is Broker.Spend among this session's entries only.
func (s Session) Spend(code string) { s.b.spend(s.name, code) }

// Finish is Broker.Finish among this session's entries only.
func (s Session) Finish(code string, fingerprint [32]byte, o Outcome) {
	s.b.finish(s.name, code, fingerprint, o)
}

// Get returns one of this session's entries; another session's is not
// found.
func (s Session) Get(id string) (View, bool) {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	e, ok := s.b.entries[id]
	if !ok || e.session != s.name {
		return View{}, false
	}
	return e.viewLocked(s.b.now()), true
}

// Add lists a new preview as pending and returns its id. render is called
// once, with the id, to produce what the person sees (the preview text names
// the id).
func (b *Broker) Add(r Request, render func(id string) Display) (string, error) {
	return b.add("", r, render)
}

func (b *Broker) add(session string, r Request, render func(id string) Display) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.pruneLocked(now)
	if err := b.makeRoomLocked(session, now); err != nil {
		return "", err
	}
	var id string
	for {
		s, err := randomString(b.random, idAlphabet, idLength)
		if err != nil {
			return "", err
		}
		if _, taken := b.entries[s]; !taken {
			id = s
			break
		}
	}
	b.seq++
	e := &entry{id: id, session: session, tool: r.Tool, fingerprint: r.Fingerprint, token: r.Token, expires: r.Expires, state: Pending, seq: b.seq}
	e.display = render(id)
	b.entries[id] = e
	b.notifyLocked()
	return id, nil
}

// List returns the listed entries, pending ones first, each group oldest
// first.
func (b *Broker) List() []View {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.pruneLocked(now)
	out := make([]View, 0, len(b.entries))
	for _, e := range b.entries {
		out = append(out, e.viewLocked(now))
	}
	sort.Slice(out, func(i, j int) bool {
		pi, pj := out[i].State == Pending, out[j].State == Pending
		if pi != pj {
			return pi
		}
		return b.entries[out[i].ID].seq < b.entries[out[j].ID].seq
	})
	return out
}

// Get returns one entry.
func (b *Broker) Get(id string) (View, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[id]
	if !ok {
		return View{}, false
	}
	return e.viewLocked(b.now()), true
}

// fingerprintOf is the fingerprint of entry id (fixed for its life).
func (b *Broker) fingerprintOf(id string) ([32]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[id]
	if !ok {
		return [32]byte{}, false
	}
	return e.fingerprint, true
}

// Changed returns a channel that is closed at the next change.
func (b *Broker) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

// Approve approves a live pending entry and returns its one-time code.
func (b *Broker) Approve(id string) (string, time.Time, error) { return b.ApproveWith(id, "") }

// ApproveWith is Approve by the passkey whose credential id (base64url) is
// passkey, which the decision names.
func (b *Broker) ApproveWith(id, passkey string) (string, time.Time, error) {
	b.mu.Lock()
	e, err := b.decidableLocked(id)
	if err != nil {
		b.mu.Unlock()
		return "", time.Time{}, err
	}
	code, err := b.newCodeLocked()
	if err != nil {
		b.mu.Unlock()
		return "", time.Time{}, err
	}
	e.state, e.code, e.decided = Approved, code, b.now()
	b.notifyLocked()
	d, tell, expires := Decision{Session: e.session, ID: e.id, Tool: e.tool, Fingerprint: e.fingerprint, State: Approved, Passkey: passkey}, b.decided, e.expires
	b.mu.Unlock()
	if tell != nil {
		tell(d)
	}
	return FormatCode(code), expires, nil
}

// Reject rejects a live pending entry: its token is revoked and no code will
// ever confirm it.
func (b *Broker) Reject(id string) error {
	b.mu.Lock()
	st := Rejected
	e, err := b.decidableLocked(id)
	if err != nil {
		// An approval whose code is unused can still be taken back.
		ee, ok := b.entries[id]
		if !ok || ee.stateAt(b.now()) != Approved {
			b.mu.Unlock()
			return err
		}
		e, st = ee, Withdrawn
	}
	b.killLocked(e, st)
	d, tell := Decision{Session: e.session, ID: e.id, Tool: e.tool, Fingerprint: e.fingerprint, State: st}, b.decided
	b.mu.Unlock()
	if tell != nil {
		tell(d)
	}
	return nil
}

func (b *Broker) decidableLocked(id string) (*entry, error) {
	e, ok := b.entries[id]
	if !ok {
		return nil, &Error{Code: CodeNotFound, Message: "no preview with id " + safeID(id) + " is listed; it may have been forgotten long after it expired."}
	}
	switch st := e.stateAt(b.now()); st {
	case Pending:
		return e, nil
	case Expired:
		return nil, &Error{Code: CodeExpired, Message: "preview " + e.id + " expired at " + stamp(e.expires) + "; it can no longer be approved. Ask the assistant for a new preview."}
	default:
		return nil, &Error{Code: CodeNotPending, Message: "preview " + e.id + " is already " + string(st) + " (decided on the page, in a terminal, or confirmed by the assistant); nothing was changed."}
	}
}

// Redeem returns the gate token of the entry code was issued to, if that
// entry was previewed for fingerprint and is approved, unused and live. A
// code that names an entry spends the entry on every outcome.
func (b *Broker) Redeem(code string, fingerprint [32]byte) (string, error) {
	return b.redeem("", code, fingerprint)
}

func (b *Broker) redeem(session, code string, fingerprint [32]byte) (string, error) {
	digits, ok := ParseCode(code)
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if !ok {
		msg := "the confirm value " + describe(code) + " is not an approval code: those are six ASCII digits, like 123-456, shown to the person when they approve the preview. Nothing was signed or sent. "
		if e := b.bestLocked(session, fingerprint, now); e != nil && e.stateAt(now) == Approved {
			return "", &Error{Code: CodeUnknown, Message: msg + "The approval of preview " + e.id + " is still valid: ask the person for its code exactly as shown."}
		}
		return "", &Error{Code: CodeUnknown, Message: msg + howTo}
	}
	if e := b.byCodeLocked(session, digits); e != nil {
		switch e.stateAt(now) {
		case Withdrawn:
			return "", &Error{Code: CodeWithdrawn, Message: "the approval this code belonged to (preview " + e.id + ") was withdrawn, by the person or after too many wrong codes. Nothing was signed or sent. " + howTo}
		case Used, Rejected, Dropped:
			return "", &Error{Code: CodeUsed, Message: "this approval code was already used; each code works once, whatever the outcome. Nothing was signed or sent. " + howTo}
		case Expired:
			e.outcome = &Outcome{Status: "refused", Summary: "The assistant used the code after the preview had expired. Nothing was signed or sent."}
			b.killLocked(e, Used)
			return "", &Error{Code: CodeExpired, Message: "the preview this code approved expired at " + stamp(e.expires) + ". Nothing was signed or sent. " + howTo}
		}
		if subtle.ConstantTimeCompare(e.fingerprint[:], fingerprint[:]) != 1 {
			e.outcome = &Outcome{Status: "refused", Summary: "The assistant offered this code for a different call than the one you approved, so the code is spent. Nothing was signed or sent."}
			b.killLocked(e, Used)
			return "", &Error{Code: CodeMismatch, Message: "this approval code was given for a different preview (id " + e.id + ") than the tool and arguments of this call, and it is now spent. Nothing was signed or sent. A code confirms only the exact call the person approved. " + howTo}
		}
		e.state = Used
		token := e.token
		e.token = ""
		b.notifyLocked()
		return token, nil
	}
	// No entry has this code: say where the previews of these arguments stand.
	best := b.bestLocked(session, fingerprint, now)
	if best == nil {
		return "", &Error{Code: CodeUnknown, Message: "no preview of this call is awaiting approval, and the code matches none. Nothing was signed or sent. " + howTo}
	}
	switch best.stateAt(now) {
	case Approved:
		best.attempts++
		if left := maxAttempts - best.attempts; left > 0 {
			return "", &Error{Code: CodeWrong, Message: fmt.Sprintf("that is not the code the person was shown for preview %s. Nothing was signed or sent. Ask them for the code exactly as shown; %d attempt(s) left before the approval is withdrawn.", best.id, left)}
		}
		b.killLocked(best, Withdrawn)
		return "", &Error{Code: CodeWrong, Message: "that is not the code the person was shown for preview " + best.id + ", and too many wrong codes were tried: the approval is withdrawn. Nothing was signed or sent. " + howTo}
	case Pending:
		return "", &Error{Code: CodePending, Message: "the person has not approved preview " + best.id + " yet, so there is no code for it. Nothing was signed or sent. Ask them to review it " + b.whereLocked() + ", then use the code they are shown."}
	case Rejected:
		return "", &Error{Code: CodeRejected, Message: "the person rejected preview " + best.id + ". Nothing was signed or sent. Do not retry it unless they ask for a new one."}
	case Withdrawn:
		return "", &Error{Code: CodeWithdrawn, Message: "the approval of preview " + best.id + " was withdrawn, by the person or after too many wrong codes. Nothing was signed or sent. Do not retry it unless they ask for a new one."}
	case Expired:
		return "", &Error{Code: CodeExpired, Message: "preview " + best.id + " expired at " + stamp(best.expires) + " before it was used. Nothing was signed or sent. " + howTo}
	case Dropped:
		return "", &Error{Code: CodeDropped, Message: "preview " + best.id + " was dropped before the person decided: the approval list was full and this session held more previews than its share. Nothing was signed or sent. " + howTo}
	default:
		return "", &Error{Code: CodeUsed, Message: "preview " + best.id + " was already confirmed with its code. Nothing was signed or sent. " + howTo}
	}
}

// bestLocked is the entry previewed for fingerprint that tells a confirm the
// most (see rank), newest first among equals; nil if none.
func (b *Broker) bestLocked(session string, fingerprint [32]byte, now time.Time) *entry {
	var best *entry
	for _, e := range b.entries {
		if e.session != session || e.fingerprint != fingerprint {
			continue
		}
		if best == nil || rank(e.stateAt(now)) < rank(best.stateAt(now)) || rank(e.stateAt(now)) == rank(best.stateAt(now)) && e.seq > best.seq {
			best = e
		}
	}
	return best
}

// Finish records how the write confirmed with code ended, so that the person
// sees it where they approved it. It acts only on the entry the code was
// issued to, once that code was used for fingerprint; anything else (a code
// that confirmed nothing, a second outcome) is ignored. It decides nothing.
func (b *Broker) Finish(code string, fingerprint [32]byte, o Outcome) {
	b.finish("", code, fingerprint, o)
}

func (b *Broker) finish(session, code string, fingerprint [32]byte, o Outcome) {
	digits, ok := ParseCode(code)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.byCodeLocked(session, digits)
	if e == nil || e.state != Used || e.outcome != nil || subtle.ConstantTimeCompare(e.fingerprint[:], fingerprint[:]) != 1 {
		return
	}
	e.outcome = &o
	b.notifyLocked()
}

// Spend spends the entry a code names, if any: a confirm whose arguments do
// not even parse still uses its code up.
func (b *Broker) Spend(code string) { b.spend("", code) }

func (b *Broker) spend(session, code string) {
	digits, ok := ParseCode(code)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.byCodeLocked(session, digits); e != nil && e.state == Approved {
		e.outcome = &Outcome{Status: "refused", Summary: "The assistant's confirm carried this code with arguments walletgate could not accept, so the code is spent. Nothing was signed or sent."}
		b.killLocked(e, Used)
	}
}

const howTo = "For a new approval, call the tool again without confirm and have the person approve the new preview."

// rank orders states by how much they tell a confirm: an approved entry
// first (a wrong code counts against it), then pending, and so on.
func rank(s State) int {
	switch s {
	case Approved:
		return 0
	case Pending:
		return 1
	case Rejected, Withdrawn, Dropped:
		return 2
	case Expired:
		return 3
	default:
		return 4
	}
}

// byCodeLocked is session's entry that holds code digits; nil if none (an
// entry of another session with that code is none).
func (b *Broker) byCodeLocked(session, digits string) *entry {
	e := b.anyByCodeLocked(digits)
	if e == nil || e.session != session {
		return nil
	}
	return e
}

func (b *Broker) anyByCodeLocked(digits string) *entry {
	var found *entry
	for _, e := range b.entries {
		if e.code != "" && subtle.ConstantTimeCompare([]byte(e.code), []byte(digits)) == 1 {
			found = e
		}
	}
	return found
}

// makeRoomLocked makes room for a new entry of session, or says why there
// is none: session is at its own bound, or every session holds its share of
// a full broker. A session holding more than session gives way (its oldest
// pending entry is dropped). Entries no longer live are forgotten, oldest
// first, beyond maxKept.
func (b *Broker) makeRoomLocked(session string, now time.Time) error {
	live, total := map[string]int{}, 0
	for _, e := range b.entries {
		if st := e.stateAt(now); st == Pending || st == Approved {
			live[e.session]++
			total++
		}
	}
	if n := live[session]; n >= maxLivePerSession {
		return &Error{Code: CodeTooMany, Message: fmt.Sprintf("this session already has %d previews awaiting the person or their code (at most %d per session). Nothing was listed. Approve, reject or let some expire, then preview again.", n, maxLivePerSession)}
	}
	if total >= maxLive {
		var drop *entry
		for _, e := range b.entries {
			if e.stateAt(now) != Pending || live[e.session] <= live[session]+1 {
				continue
			}
			if drop == nil || live[e.session] > live[drop.session] || live[e.session] == live[drop.session] && e.seq < drop.seq {
				drop = e
			}
		}
		if drop == nil {
			return &Error{Code: CodeTooMany, Message: fmt.Sprintf("the approval list is full (%d previews) and this session holds no less than its share. Nothing was listed. Approve, reject or let some expire, then preview again.", maxLive)}
		}
		drop.outcome = &Outcome{Status: "refused", Summary: "Dropped before you decided: the approval list was full and the session that previewed this held more previews than its share. Nothing was signed or sent."}
		b.killLocked(drop, Dropped)
	}
	for len(b.entries) >= maxKept {
		var old *entry
		for _, e := range b.entries {
			if st := e.stateAt(now); st == Pending || st == Approved {
				continue
			}
			if old == nil || e.seq < old.seq {
				old = e
			}
		}
		if old == nil {
			break // cannot happen: maxKept > maxLive
		}
		if old.token != "" && b.revoke != nil {
			b.revoke(old.token)
		}
		delete(b.entries, old.id)
	}
	return nil
}

// killLocked ends an entry for good and revokes its token.
func (b *Broker) killLocked(e *entry, st State) {
	if e.token != "" && b.revoke != nil {
		b.revoke(e.token)
	}
	e.token = ""
	e.state = st
	if e.decided.IsZero() {
		e.decided = b.now()
	}
	b.notifyLocked()
}

// newCodeLocked draws a code no listed entry holds.
func (b *Broker) newCodeLocked() (string, error) {
	for {
		c, err := randomString(b.random, "0123456789", codeDigits)
		if err != nil {
			return "", err
		}
		if b.anyByCodeLocked(c) == nil {
			return c, nil
		}
	}
}

// pruneLocked forgets entries past keepAfter (from their expiry or their
// decision, whichever is later).
func (b *Broker) pruneLocked(now time.Time) {
	pruned := false
	defer func() {
		if pruned {
			b.notifyLocked()
		}
	}()
	for id, e := range b.entries {
		end := e.expires
		if e.decided.After(end) {
			end = e.decided
		}
		if now.Sub(end) > keepAfter {
			if e.token != "" && b.revoke != nil {
				b.revoke(e.token)
			}
			delete(b.entries, id)
			pruned = true
		}
	}
}

func (b *Broker) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

func (e *entry) stateAt(now time.Time) State {
	if (e.state == Pending || e.state == Approved) && !now.Before(e.expires) {
		return Expired
	}
	return e.state
}

func (e *entry) viewLocked(now time.Time) View {
	v := View{ID: e.id, Tool: e.tool, State: e.stateAt(now), Expires: e.expires, Display: e.display, Outcome: e.outcome, Now: now}
	if v.State == Approved {
		v.Code = FormatCode(e.code)
	}
	return v
}

// FormatCode shows six digits as "123-456".
func FormatCode(digits string) string {
	if len(digits) != codeDigits {
		return digits
	}
	return digits[:3] + "-" + digits[3:]
}

// ParseCode accepts "123456", "123-456" or "123 456", with spaces around,
// and returns the digits.
func ParseCode(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) == codeDigits+1 && (s[3] == '-' || s[3] == ' ') {
		s = s[:3] + s[4:]
	}
	if len(s) != codeDigits {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", false
		}
	}
	return s, true
}

// describe names a confirm value without echoing much of it.
func describe(s string) string {
	switch {
	case s == "":
		return "(empty)"
	case strings.HasPrefix(s, "wgc_"):
		return "(a token-mode confirmation token; this server is in human mode)"
	case len(s) <= 12 && isPrintableASCII(s):
		return fmt.Sprintf("%q", s)
	default:
		return fmt.Sprintf("(%d characters)", len(s))
	}
}

// IsID reports whether s has the form of a preview id (not whether one
// exists).
func IsID(s string) bool { return safeID(s) == s }

func safeID(id string) string {
	if len(id) == idLength && isPrintableASCII(id) && strings.Trim(id, idAlphabet) == "" {
		return id
	}
	return "(that id)"
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// randomString draws n characters uniformly from alphabet.
func randomString(r io.Reader, alphabet string, n int) (string, error) {
	max := big.NewInt(int64(len(alphabet)))
	out := make([]byte, n)
	for i := range out {
		k, err := rand.Int(r, max)
		if err != nil {
			return "", errors.New("approval: no randomness: " + err.Error())
		}
		out[i] = alphabet[k.Int64()]
	}
	return string(out), nil
}
