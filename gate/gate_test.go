package gate_test

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/gate"
)

const ttl = 5 * time.Minute

// clock is a fake clock for TTL decisions; safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type plan struct{ id int }

func newGate(t testing.TB, maxPending int) (*gate.Gate, *clock) {
	t.Helper()
	c := newClock()
	return gate.New(ttl, maxPending, c.Now), c
}

func issue(t testing.TB, g *gate.Gate, tool string, canonical []byte, p any) string {
	t.Helper()
	tok, _, err := g.Issue(tool, canonical, p)
	require.NoError(t, err)
	return tok
}

// requireCode asserts err is a *gate.Error with code want, and returns it.
func requireCode(t testing.TB, err error, want string) *gate.Error {
	t.Helper()
	var ge *gate.Error
	require.Truef(t, errors.As(err, &ge), "want *gate.Error %s, got %v", want, err)
	require.Equalf(t, want, ge.Code, "message: %s", ge.Message)
	require.True(t, strings.HasPrefix(ge.Error(), want+": "), ge.Error())
	return ge
}

func TestIssueConsume(t *testing.T) {
	g, c := newGate(t, 10)
	p := &plan{id: 7}
	tok, expires, err := g.Issue("wallet_send", []byte("args"), p)
	require.NoError(t, err)
	require.Equal(t, c.Now().Add(ttl), expires)
	require.Equal(t, 1, g.Pending())

	got, err := g.Consume(tok, "wallet_send", []byte("args"))
	require.NoError(t, err)
	require.Same(t, p, got, "Consume must return the previewed plan itself")
	require.Equal(t, 0, g.Pending())

	_, err = g.Consume(tok, "wallet_send", []byte("args"))
	requireCode(t, err, gate.CodeUsed)
}

func TestExpiry(t *testing.T) {
	// A token is valid while now < expires; at exactly expires it has expired.
	tests := []struct {
		name    string
		advance time.Duration
		want    string // "" = success
	}{
		{"immediately", 0, ""},
		{"one nanosecond before expiry", ttl - time.Nanosecond, ""},
		{"exactly at expiry", ttl, gate.CodeExpired},
		{"one nanosecond after expiry", ttl + time.Nanosecond, gate.CodeExpired},
		{"an hour later", time.Hour, gate.CodeExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, c := newGate(t, 10)
			tok, expires, err := g.Issue("wallet_send", []byte("args"), &plan{})
			require.NoError(t, err)
			c.Advance(tt.advance)
			if tt.want == "" {
				require.Equal(t, 1, g.Pending())
				_, err := g.Consume(tok, "wallet_send", []byte("args"))
				require.NoError(t, err)
				return
			}
			require.Equal(t, 0, g.Pending(), "an expired token is not pending")
			_, err = g.Consume(tok, "wallet_send", []byte("args"))
			ge := requireCode(t, err, gate.CodeExpired)
			require.Contains(t, ge.Message, expires.UTC().Format(time.RFC3339), "says when it expired")
			require.Contains(t, ge.Message, "without confirm")

			_, err = g.Consume(tok, "wallet_send", []byte("args"))
			requireCode(t, err, gate.CodeUsed)
		})
	}
}

func TestMismatch(t *testing.T) {
	const secret = "to=0x00000000000000000000000000000000deadbeef"
	tests := []struct {
		name               string
		issueTool, useTool string
		issueArgs, useArgs []byte
	}{
		{"different tool", "wallet_send", "wallet_swap", []byte(secret), []byte(secret)},
		{"token from tool A on tool B, other args", "wallet_swap", "wallet_send", []byte("swap " + secret), []byte(secret)},
		{"last byte differs", "wallet_send", "wallet_send", []byte(secret), []byte(secret[:len(secret)-1] + "e")},
		{"first byte differs", "wallet_send", "wallet_send", []byte(secret), []byte("u" + secret[1:])},
		{"one byte appended", "wallet_send", "wallet_send", []byte(secret), []byte(secret + "0")},
		{"one byte dropped", "wallet_send", "wallet_send", []byte(secret), []byte(secret[:len(secret)-1])},
		{"empty then non-empty", "wallet_send", "wallet_send", nil, []byte(secret)},
		{"non-empty then empty", "wallet_send", "wallet_send", []byte(secret), []byte{}},
		{"a zero byte", "wallet_send", "wallet_send", []byte{}, []byte{0}},
		{"byte moved from tool to args", "wallet_send", "wallet_sen", []byte(secret), []byte("d" + secret)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := newGate(t, 10)
			tok := issue(t, g, tt.issueTool, tt.issueArgs, &plan{id: 1})

			got, err := g.Consume(tok, tt.useTool, tt.useArgs)
			require.Nil(t, got)
			ge := requireCode(t, err, gate.CodeMismatch)
			require.Contains(t, ge.Message, "now spent")
			require.NotContains(t, ge.Message, "deadbeef", "must not reveal the original arguments")
			if tt.issueTool != tt.useTool {
				require.NotContains(t, ge.Message, tt.issueTool+" ", "must not name the original tool")
			}
			require.Equal(t, 0, g.Pending())

			// The mismatch burned the token: the right call fails too.
			_, err = g.Consume(tok, tt.issueTool, tt.issueArgs)
			requireCode(t, err, gate.CodeUsed)
		})
	}
}

func TestNilAndEmptyArgsAreTheSame(t *testing.T) {
	g, _ := newGate(t, 10)
	tok := issue(t, g, "wallet_send", nil, &plan{})
	_, err := g.Consume(tok, "wallet_send", []byte{})
	require.NoError(t, err)
}

func TestUnknown(t *testing.T) {
	g, _ := newGate(t, 10)
	args := []byte("canonical args")
	real := issue(t, g, "wallet_send", args, &plan{})
	fp := gate.Fingerprint("wallet_send", args)
	argsHash := sha256.Sum256(args)
	b32 := base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

	tests := []struct{ name, token string }{
		{"empty", ""},
		{"prefix only", "wgc_"},
		{"well-formed, never issued", "wgc_" + strings.Repeat("a", 32)},
		{"hex of SHA-256 of the args", hex.EncodeToString(argsHash[:])},
		{"wgc_ + hex of the fingerprint", "wgc_" + hex.EncodeToString(fp[:])},
		{"wgc_ + base32 of the fingerprint", "wgc_" + b32.EncodeToString(fp[:20])},
		{"upper case", strings.ToUpper(real)},
		{"upper-case prefix", "WGC_" + real[4:]},
		{"trailing space", real + " "},
		{"leading space", " " + real},
		{"one character short", real[:len(real)-1]},
		{"one character long", real + "a"},
		{"padded", real + "===="},
		{"in quotes", `"` + real + `"`},
		{"digit outside the alphabet", real[:len(real)-1] + "8"},
		{"huge", "wgc_" + strings.Repeat("z", 1<<20)},
		{"control characters", "wgc_\x00\n\x1b[31m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := g.Consume(tt.token, "wallet_send", args)
			require.Nil(t, got)
			ge := requireCode(t, err, gate.CodeUnknown)
			require.Contains(t, ge.Message, "without confirm")
			require.Less(t, len(ge.Message), 480, "bounded: the token is echoed as a short prefix at most")
			require.NotContains(t, ge.Message, "\x00")
			require.NotContains(t, ge.Message, "\x1b")
			if len(tt.token) > 8 {
				require.NotContains(t, ge.Message, tt.token[:9], "echoes at most a short prefix")
			}
		})
	}
	// None of that spent or disturbed the real token.
	require.Equal(t, 1, g.Pending())
	_, err := g.Consume(real, "wallet_send", args)
	require.NoError(t, err)
}

func TestTooManyPending(t *testing.T) {
	g, c := newGate(t, 3)
	first, firstExpires, err := g.Issue("wallet_send", []byte("0"), &plan{})
	require.NoError(t, err)
	var rest []string
	for i := 1; i < 3; i++ {
		c.Advance(time.Minute)
		rest = append(rest, issue(t, g, "wallet_send", []byte{byte(i)}, &plan{}))
	}
	require.Equal(t, 3, g.Pending())

	// Full: refused, and nothing pending is evicted.
	_, _, err = g.Issue("wallet_send", []byte("flood"), &plan{})
	ge := requireCode(t, err, gate.CodeTooMany)
	require.Contains(t, ge.Message, "3 confirmations are already pending")
	require.Contains(t, ge.Message, firstExpires.UTC().Format(time.RFC3339), "says when the oldest expires")
	require.Contains(t, ge.Message, "in 3m0s")
	require.Equal(t, 3, g.Pending())

	// The first expires (fake clock): its slot frees, a new Issue works.
	c.Advance(firstExpires.Sub(c.Now()))
	require.Equal(t, 2, g.Pending())
	fresh := issue(t, g, "wallet_send", []byte("fresh"), &plan{})
	_, _, err = g.Issue("wallet_send", []byte("flood"), &plan{})
	requireCode(t, err, gate.CodeTooMany)

	// The expired one is reported as expired, not unknown; the others still work.
	_, err = g.Consume(first, "wallet_send", []byte("0"))
	requireCode(t, err, gate.CodeExpired)
	_, err = g.Consume(rest[1], "wallet_send", []byte{2})
	require.NoError(t, err)

	// Using a token frees its slot too.
	issue(t, g, "wallet_send", []byte("after use"), &plan{})
	_, err = g.Consume(fresh, "wallet_send", []byte("fresh"))
	require.NoError(t, err)
	require.Equal(t, 2, g.Pending())
}

func TestRefusesWhenNotConfigured(t *testing.T) {
	tests := []struct {
		name string
		g    *gate.Gate
	}{
		{"zero value", &gate.Gate{}},
		{"zero ttl", gate.New(0, 10, nil)},
		{"negative ttl", gate.New(-time.Minute, 10, nil)},
		{"zero maxPending", gate.New(time.Minute, 0, nil)},
		{"negative maxPending", gate.New(time.Minute, -1, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, exp, err := tt.g.Issue("wallet_send", []byte("args"), &plan{})
			require.ErrorIs(t, err, gate.ErrNotConfigured)
			require.Empty(t, tok)
			require.True(t, exp.IsZero())

			_, err = tt.g.Consume("wgc_"+strings.Repeat("a", 32), "wallet_send", []byte("args"))
			requireCode(t, err, gate.CodeUnknown)
			require.Equal(t, 0, tt.g.Pending())
		})
	}
}

func TestNilClockIsTimeNow(t *testing.T) {
	g := gate.New(time.Minute, 1, nil)
	before := time.Now()
	_, exp, err := g.Issue("wallet_send", nil, nil)
	require.NoError(t, err)
	require.WithinRange(t, exp, before.Add(time.Minute), time.Now().Add(time.Minute))
	require.Equal(t, time.Minute, g.TTL())
}

type failingReader struct{ n int } // gives n bytes, then fails

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("entropy source unavailable")
	}
	k := min(r.n, len(p))
	clear(p[:k])
	r.n -= k
	return k, nil
}

func TestRandomFailureGivesNoToken(t *testing.T) {
	for _, n := range []int{0, 1, 19} {
		g, _ := newGate(t, 10)
		g.SetRandom(&failingReader{n: n})
		tok, exp, err := g.Issue("wallet_send", []byte("args"), &plan{})
		require.Error(t, err, "after %d random bytes", n)
		require.Empty(t, tok)
		require.True(t, exp.IsZero())
		require.Equal(t, 0, g.Pending())
	}
}

func TestConcurrentConsumeOneWinner(t *testing.T) {
	const goroutines = 100
	for round := range 50 {
		g, _ := newGate(t, 10)
		p := &plan{id: round}
		tok := issue(t, g, "wallet_send", []byte("args"), p)

		var wins, used atomic.Int32
		var start, done sync.WaitGroup
		start.Add(1)
		for range goroutines {
			done.Go(func() {
				start.Wait()
				got, err := g.Consume(tok, "wallet_send", []byte("args"))
				var ge *gate.Error
				switch {
				case err == nil && got == p:
					wins.Add(1)
				case errors.As(err, &ge) && ge.Code == gate.CodeUsed:
					used.Add(1)
				}
			})
		}
		start.Done()
		done.Wait()
		require.EqualValues(t, 1, wins.Load(), "round %d: exactly one Consume wins", round)
		require.EqualValues(t, goroutines-1, used.Load(), "round %d: all others see TOKEN_USED", round)
	}
}

func TestConcurrentIssueRespectsBound(t *testing.T) {
	const maxPending, goroutines = 7, 50
	g, _ := newGate(t, maxPending)
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			_, _, err := g.Issue("wallet_send", []byte{byte(i)}, nil)
			var ge *gate.Error
			switch {
			case err == nil:
				ok.Add(1)
			case errors.As(err, &ge) && ge.Code == gate.CodeTooMany:
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, maxPending, ok.Load())
	require.EqualValues(t, goroutines-maxPending, refused.Load())
}

func TestTokensDistinctAndWellFormed(t *testing.T) {
	const n = 10_000
	g, _ := newGate(t, n)
	seen := make(map[string]bool, n)
	for range n {
		tok := issue(t, g, "wallet_send", []byte("same args every time"), nil)
		require.Regexp(t, `^wgc_[a-z2-7]{32}$`, tok)
		require.False(t, seen[tok], "duplicate token %s", tok)
		seen[tok] = true
	}
	require.Equal(t, n, g.Pending())
}

func BenchmarkIssue(b *testing.B) {
	b.ReportAllocs()
	args := []byte(strings.Repeat("x", 200))
	const perGate = 4096 // a fresh Gate now and then keeps memory flat
	var g *gate.Gate
	i := 0
	for b.Loop() {
		if i%perGate == 0 {
			g = gate.New(ttl, perGate, nil)
		}
		i++
		if _, _, err := g.Issue("wallet_send", args, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConsume(b *testing.B) {
	b.ReportAllocs()
	args := []byte(strings.Repeat("x", 200))
	g := gate.New(ttl, math.MaxInt, nil)
	toks := make([]string, b.N)
	for i := range toks {
		toks[i] = issue(b, g, "wallet_send", args, nil)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.Consume(toks[i], "wallet_send", args); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRevokeSpendsTheToken(t *testing.T) {
	g, _ := newGate(t, 4)
	tok := issue(t, g, "wallet_send", []byte("a"), plan{1})
	require.Equal(t, 1, g.Pending())
	require.True(t, g.Revoke(tok))
	require.Equal(t, 0, g.Pending(), "a revoked token no longer counts as pending")
	_, err := g.Consume(tok, "wallet_send", []byte("a"))
	requireCode(t, err, gate.CodeUsed)
	require.False(t, g.Revoke(tok), "a spent token is not outstanding")
	require.False(t, g.Revoke("wgc_nothing"), "an unknown token is not outstanding")
	require.False(t, (&gate.Gate{}).Revoke(tok))
}

// Peek shows the plan of a token a Consume would accept, and spends nothing;
// for every token Consume would refuse it shows nothing.
func TestPeekSpendsNothing(t *testing.T) {
	g, c := newGate(t, 10)
	p := &plan{id: 3}
	tok := issue(t, g, "wallet_send", []byte("args"), p)
	got, ok := g.Peek(tok, "wallet_send", []byte("args"))
	require.True(t, ok)
	require.Same(t, p, got)
	require.Equal(t, 1, g.Pending(), "still outstanding")
	for _, miss := range []struct{ token, tool, args string }{
		{tok, "wallet_send", "other"}, {tok, "wallet_swap", "args"}, {"wgc_" + strings.Repeat("a", 32), "wallet_send", "args"}, {"bad", "wallet_send", "args"},
	} {
		_, ok := g.Peek(miss.token, miss.tool, []byte(miss.args))
		require.False(t, ok, "%v", miss)
	}
	got, err := g.Consume(tok, "wallet_send", []byte("args"))
	require.NoError(t, err)
	require.Same(t, p, got)
	_, ok = g.Peek(tok, "wallet_send", []byte("args"))
	require.False(t, ok, "a used token")
	tok = issue(t, g, "wallet_send", []byte("args"), p)
	c.Advance(ttl)
	_, ok = g.Peek(tok, "wallet_send", []byte("args"))
	require.False(t, ok, "an expired token")
}
