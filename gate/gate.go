// Package gate issues and consumes walletgate's confirmation tokens:
// single-use, short-lived, bound to one tool and one set of canonical
// arguments.
package gate

// Gate rules:
//   - Issue stores {fingerprint, plan, expires, used} under a fresh random
//     token; Consume returns the plan only for the same tool and the same
//     canonical arguments, before expires, and only once.
//   - Once a token is found, Consume spends it on every outcome: success,
//     expiry, argument mismatch. A model cannot probe variants against one
//     token.
//   - Lookup and mark-used happen under one mutex: of any number of
//     concurrent Consume calls of one token, exactly one gets the plan.
//   - Every TTL decision uses the injected clock. A token is valid while
//     now < expires; at exactly expires it has expired. The cache's own
//     expiry (ttl + tombstoneGrace, wall time) only frees memory, late enough
//     that an expired or used token is reported as such, not as unknown.
//   - At most maxPending tokens are outstanding (unused, unexpired); beyond
//     that Issue refuses, it never evicts.
//   - The zero value, or a Gate built with a non-positive ttl or maxPending,
//     refuses everything.

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/patrickmn/go-cache"
)

// Codes of the errors Issue and Consume return as *Error. They are stable:
// callers and clients match on them.
const (
	CodeUnknown  = "TOKEN_UNKNOWN"
	CodeExpired  = "TOKEN_EXPIRED"
	CodeUsed     = "TOKEN_USED"
	CodeMismatch = "ARGS_MISMATCH"
	CodeTooMany  = "TOO_MANY_PENDING"
)

const (
	// tombstoneGrace is how long, past its expiry, a token stays in memory so
	// that it is still reported as expired or used rather than unknown.
	tombstoneGrace = 10 * time.Minute
	// cleanupInterval is how often the cache drops entries past that grace.
	cleanupInterval = time.Minute
)

// ErrNotConfigured is returned by Issue on a zero-value Gate, or one made by
// New with a non-positive ttl or maxPending.
var ErrNotConfigured = errors.New("gate: not configured: use gate.New with a positive ttl and maxPending")

// Error is a refusal meant for the person and the model on the other side of
// a tool call. Code is one of the Code constants; Message says, in plain
// words, what happened and what to do next. Neither ever holds the arguments
// a token was issued for, nor a whole token.
type Error struct {
	Code    string
	Message string
}

// Error returns "CODE: message", the form a tool result's text begins with.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Gate holds the confirmation tokens issued and not yet forgotten. It is safe
// for concurrent use.
//
// The number of outstanding tokens (unused and unexpired) is bounded by
// maxPending. When the bound is reached Issue refuses the new preview with
// TOO_MANY_PENDING instead of evicting an older token: eviction would let a
// flood of previews push out the very preview a human is reviewing, so that
// their confirmation fails; a refusal only delays the flood. Outstanding
// tokens free their slot as soon as they are used or expire.
//
// The zero value refuses everything: Issue returns ErrNotConfigured and
// Consume returns TOKEN_UNKNOWN.
type Gate struct {
	ttl        time.Duration
	maxPending int
	now        func() time.Time
	random     io.Reader // nil: crypto/rand; set by tests only

	mu      sync.Mutex
	tokens  *cache.Cache         // token → *entry; guarded by mu for check-and-mark
	pending map[string]time.Time // token → expires, for tokens not yet used
}

// entry is what a token stands for. Its fields are read and written only with
// Gate.mu held.
type entry struct {
	fingerprint [32]byte
	plan        any
	expires     time.Time
	used        bool
}

// New returns a Gate whose tokens live for ttl, of which at most maxPending
// may be outstanding at once, reading the time from now (time.Now when nil).
// A non-positive ttl or maxPending gives a Gate that refuses everything.
func New(ttl time.Duration, maxPending int, now func() time.Time) *Gate {
	if now == nil {
		now = time.Now
	}
	g := &Gate{ttl: ttl, maxPending: maxPending, now: now}
	if ttl > 0 && maxPending > 0 {
		g.tokens = cache.New(ttl+tombstoneGrace, cleanupInterval)
		g.pending = make(map[string]time.Time)
	}
	return g
}

// TTL returns how long a token stays valid after Issue.
func (g *Gate) TTL() time.Duration { return g.ttl }

// Issue returns a new single-use token for tool and its canonical arguments,
// remembering plan for the one Consume that will match, and the time the
// token expires. It refuses with a *Error of code TOO_MANY_PENDING when
// maxPending tokens are outstanding, and returns a plain error when the Gate
// is not configured or the random source fails — never a weaker token.
func (g *Gate) Issue(tool string, canonical []byte, plan any) (token string, expires time.Time, err error) {
	if g.tokens == nil {
		return "", time.Time{}, ErrNotConfigured
	}
	token, err = newToken(g.random)
	if err != nil {
		return "", time.Time{}, err
	}
	e := &entry{fingerprint: Fingerprint(tool, canonical), plan: plan}

	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if len(g.pending) >= g.maxPending {
		// Only pay for pruning when the bound is in reach.
		g.prunePendingLocked(now)
		if n := len(g.pending); n >= g.maxPending {
			oldest := g.oldestPendingLocked()
			return "", time.Time{}, &Error{Code: CodeTooMany, Message: fmt.Sprintf(
				"%s already pending (the limit is %d); the oldest expires at %s (in %s). "+
					"No confirmation token was issued. Confirm or abandon a pending preview "+
					"(a token stops counting once it is used or expires), then call the tool again without confirm.",
				pendingCount(n), g.maxPending, stamp(oldest), roundSeconds(oldest.Sub(now)))}
		}
	}
	e.expires = now.Add(g.ttl)
	if err := g.tokens.Add(token, e, cache.DefaultExpiration); err != nil {
		// 160 random bits do not collide; if they did, refuse rather than
		// overwrite a token someone holds.
		return "", time.Time{}, fmt.Errorf("gate: store token: %w", err)
	}
	g.pending[token] = e.expires
	return token, e.expires, nil
}

// Consume spends token and, if it was issued for this tool and these
// canonical arguments and has not expired, returns the plan given to Issue.
// Otherwise it returns a *Error: TOKEN_UNKNOWN (never issued, malformed, or
// long forgotten), TOKEN_USED, TOKEN_EXPIRED or ARGS_MISMATCH. A token that
// is found is spent whatever the outcome; of concurrent calls with one
// token, exactly one can succeed.
func (g *Gate) Consume(token, tool string, canonical []byte) (plan any, err error) {
	if g.tokens == nil || !wellFormed(token) {
		return nil, unknownError(token, tool)
	}
	fp := Fingerprint(tool, canonical)

	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.tokens.Get(token)
	if !ok {
		return nil, unknownError(token, tool)
	}
	e := v.(*entry)
	if e.used {
		return nil, &Error{Code: CodeUsed, Message: "this confirmation token has already been used; " +
			"each token works once, whatever the outcome. Nothing was executed. To go ahead, " + again(tool) +
			", then confirm with the token it returns."}
	}
	// Spend it before any other check: from here on, every outcome uses it up.
	plan = e.plan
	e.used, e.plan = true, nil // the plan is never needed again; let it go
	delete(g.pending, token)

	if now := g.now(); !now.Before(e.expires) {
		return nil, &Error{Code: CodeExpired, Message: fmt.Sprintf(
			"this confirmation token expired at %s (%s ago; tokens last %s) and is now spent. "+
				"Nothing was executed. To go ahead, %s, then confirm within %s.",
			stamp(e.expires), roundSeconds(now.Sub(e.expires)), g.ttl, again(tool), g.ttl)}
	}
	if subtle.ConstantTimeCompare(e.fingerprint[:], fp[:]) != 1 {
		return nil, &Error{Code: CodeMismatch, Message: "this confirmation token was issued for a different tool " +
			"or different arguments than this call, and it is now spent. Nothing was executed. " +
			"A token confirms only the exact call that was previewed: " + again(tool) +
			" with the arguments you mean, then confirm with exactly those arguments."}
	}
	return plan, nil
}

// Peek returns the plan token stands for, without spending it, and ok
// when a Consume for this tool and these canonical arguments would pass
// now. It lets a confirmation mode show the person the preview before the
// token is spent (a 2026-07-28 client asks between two calls); any other
// case is for Consume to refuse.
func (g *Gate) Peek(token, tool string, canonical []byte) (plan any, ok bool) {
	if g.tokens == nil || !wellFormed(token) {
		return nil, false
	}
	fp := Fingerprint(tool, canonical)
	g.mu.Lock()
	defer g.mu.Unlock()
	v, found := g.tokens.Get(token)
	if !found {
		return nil, false
	}
	e := v.(*entry)
	if e.used || !g.now().Before(e.expires) || subtle.ConstantTimeCompare(e.fingerprint[:], fp[:]) != 1 {
		return nil, false
	}
	return e.plan, true
}

// Revoke spends token without executing anything, as when the person
// rejects the preview it confirms. It reports whether the token was
// outstanding.
func (g *Gate) Revoke(token string) bool {
	if g.tokens == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.tokens.Get(token)
	if !ok {
		return false
	}
	e := v.(*entry)
	was := !e.used
	e.used, e.plan = true, nil
	delete(g.pending, token)
	return was
}

// Pending returns the number of outstanding tokens: issued, not used, and not
// expired by the Gate's clock.
func (g *Gate) Pending() int {
	if g.tokens == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prunePendingLocked(g.now())
	return len(g.pending)
}

// prunePendingLocked drops expired tokens from the pending set. The tokens
// stay in the cache, so they are still reported as expired.
func (g *Gate) prunePendingLocked(now time.Time) {
	for t, exp := range g.pending {
		if !now.Before(exp) {
			delete(g.pending, t)
		}
	}
}

func (g *Gate) oldestPendingLocked() time.Time {
	var oldest time.Time
	for _, exp := range g.pending {
		if oldest.IsZero() || exp.Before(oldest) {
			oldest = exp
		}
	}
	return oldest
}

func unknownError(token, tool string) *Error {
	var what string
	switch p := safePrefix(token); {
	case token == "":
		what = "the confirm value is empty"
	case !wellFormed(token) && p != "":
		what = "the confirm value " + p + " is not a walletgate confirmation token " +
			"(those are " + TokenPrefix + " followed by 32 characters a-z and 2-7)"
	case !wellFormed(token):
		what = "the confirm value is not a walletgate confirmation token " +
			"(those are " + TokenPrefix + " followed by 32 characters a-z and 2-7)"
	default:
		// The common cause outside a typo: the confirm went to another
		// process than the preview (a restarted server, or a client that
		// starts one server per call, as the MCP Inspector CLI does), or
		// to another session of the service. None of a well-formed token
		// is repeated: it may be another session's.
		what = "that confirmation token (not repeated here) is not one this walletgate process issued to this connection: confirmations live only in the process and the connection that previewed them " +
			"(a restart, or a client that starts a server per call like the MCP Inspector CLI, loses them), or it expired"
	}
	return &Error{Code: CodeUnknown, Message: what + ". Nothing was executed. To go ahead, " + again(tool) +
		" in the same connection, then confirm with the token it returns, copied exactly."}
}

// again tells the reader how to start over with tool.
func again(tool string) string {
	return "call " + toolName(tool) + " again without confirm to get a fresh preview"
}

// toolName returns tool for a message if it looks like a tool name, else a
// neutral phrase, so a caller's odd input is never echoed.
func toolName(tool string) string {
	if tool == "" || len(tool) > 64 {
		return "the tool"
	}
	for i := 0; i < len(tool); i++ {
		if c := tool[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return "the tool"
		}
	}
	return tool
}

func pendingCount(n int) string {
	if n == 1 {
		return "1 confirmation is"
	}
	return fmt.Sprintf("%d confirmations are", n)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func roundSeconds(d time.Duration) time.Duration { return d.Round(time.Second) }
