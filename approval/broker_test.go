package approval

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Shared helpers for the package's tests (page_test.go and socket_test.go
// use them too).

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const ttl = 5 * time.Minute

// fakeClock is a settable clock; safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: t0} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// revokes records the tokens a broker revokes; safe for concurrent use.
type revokes struct {
	mu     sync.Mutex
	tokens []string
}

func (r *revokes) revoke(token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tokens = append(r.tokens, token)
}

func (r *revokes) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.tokens...)
}

func newTestBroker(t testing.TB) (*Broker, *fakeClock, *revokes) {
	t.Helper()
	c := newFakeClock()
	rv := &revokes{}
	return NewBroker(Options{Now: c.now, Revoke: rv.revoke}), c, rv
}

func fp(s string) [32]byte {
	var f [32]byte
	copy(f[:], s)
	return f
}

// add lists a preview of tool with fingerprint fp(name) and token "tok-"+name,
// expiring ttl from now, and returns its id.
func add(t testing.TB, b *Broker, name string) string {
	t.Helper()
	return addDisplay(t, b, name, Display{Title: "Send 1 ETH (" + name + ")", Network: "Sepolia, chain id 11155111", Marker: "testnet"})
}

func addDisplay(t testing.TB, b *Broker, name string, d Display) string {
	t.Helper()
	id, err := b.Add(Request{Tool: "wallet_send", Fingerprint: fp(name), Token: "tok-" + name, Expires: b.now().Add(ttl)},
		func(string) Display { return d })
	require.NoError(t, err)
	return id
}

func approve(t testing.TB, b *Broker, id string) string {
	t.Helper()
	code, _, err := b.Approve(id)
	require.NoError(t, err)
	return code
}

// view returns id's view; it fails fast if the broker's lock was left held.
func view(t testing.TB, b *Broker, id string) View {
	t.Helper()
	var (
		v  View
		ok bool
	)
	within(t, func() { v, ok = b.Get(id) })
	require.Truef(t, ok, "preview %s is not listed", id)
	return v
}

func state(t testing.TB, b *Broker, id string) State {
	t.Helper()
	return view(t, b, id).State
}

// requireCode asserts err is an *Error with code want and returns it.
func requireCode(t testing.TB, err error, want string) *Error {
	t.Helper()
	var e *Error
	require.Truef(t, errors.As(err, &e), "want *Error %s, got %v", want, err)
	require.Equalf(t, want, e.Code, "message: %s", e.Message)
	require.Equal(t, want+": "+e.Message, e.Error())
	return e
}

// wrongCode returns a well-formed code that differs from code in every digit.
func wrongCode(code string) string {
	digits, _ := ParseCode(code)
	out := []byte(digits)
	for i := range out {
		out[i] = '0' + (out[i]-'0'+5)%10
	}
	return string(out)
}

// scriptReader yields script and then fails: it makes the broker's draws
// deterministic, and a draw the test did not expect fails loudly.
type scriptReader struct {
	script []byte
	n      int
}

func (r *scriptReader) Read(p []byte) (int, error) {
	if r.n >= len(r.script) {
		return 0, errors.New("script exhausted")
	}
	k := copy(p, r.script[r.n:])
	r.n += k
	return k, nil
}

var codeRE = regexp.MustCompile(`^[0-9]{3}-[0-9]{3}$`)

// ---------------------------------------------------------------------------

func TestAddListsPending(t *testing.T) {
	b, c, rv := newTestBroker(t)
	expires := c.now().Add(ttl)
	var rendered []string
	id, err := b.Add(Request{Tool: "wallet_swap", Fingerprint: fp("a"), Token: "tok-a", Expires: expires}, func(id string) Display {
		rendered = append(rendered, id)
		return Display{Title: "Swap (preview " + id + ")", Text: "preview " + id}
	})
	require.NoError(t, err)
	require.Len(t, id, idLength)
	require.Empty(t, strings.Trim(id, idAlphabet), "id %q uses only the readable alphabet", id)
	require.Equal(t, []string{id}, rendered, "render is called once, with the new id")

	v, ok := b.Get(id)
	require.True(t, ok)
	require.Equal(t, View{ID: id, Tool: "wallet_swap", State: Pending, Expires: expires,
		Display: Display{Title: "Swap (preview " + id + ")", Text: "preview " + id}, Now: t0}, v)
	require.Equal(t, []View{v}, b.List())
	require.Empty(t, rv.got())

	_, ok = b.Get("ZZZZ")
	require.False(t, ok)
}

func TestApproveGivesCode(t *testing.T) {
	b, c, _ := newTestBroker(t)
	id := add(t, b, "a")
	c.advance(time.Minute)
	code, expires, err := b.Approve(id)
	require.NoError(t, err)
	require.Regexp(t, codeRE, code)
	require.Equal(t, t0.Add(ttl), expires, "the code lasts as long as the preview")

	v := view(t, b, id)
	require.Equal(t, Approved, v.State)
	require.Equal(t, code, v.Code, "the view shows the code while approved")
}

func TestRedeemOnce(t *testing.T) {
	b, _, rv := newTestBroker(t)
	id := add(t, b, "a")
	code := approve(t, b, id)

	tok, err := b.Redeem(code, fp("a"))
	require.NoError(t, err)
	require.Equal(t, "tok-a", tok)
	require.Equal(t, Used, state(t, b, id))
	v := view(t, b, id)
	require.Empty(t, v.Code, "a used code is no longer shown")
	require.Empty(t, rv.got(), "a redeemed token is handed out, not revoked")

	for _, again := range []string{code, strings.ReplaceAll(code, "-", ""), strings.ReplaceAll(code, "-", " ")} {
		tok, err = b.Redeem(again, fp("a"))
		requireCode(t, err, CodeUsed)
		require.Empty(t, tok)
	}
}

func TestRedeemMismatchSpends(t *testing.T) {
	b, _, rv := newTestBroker(t)
	id := add(t, b, "a")
	code := approve(t, b, id)

	tok, err := b.Redeem(code, fp("other call"))
	e := requireCode(t, err, CodeMismatch)
	require.Empty(t, tok)
	require.Contains(t, e.Message, id)
	require.Equal(t, []string{"tok-a"}, rv.got(), "the mismatched entry's token is revoked")
	require.Equal(t, Used, state(t, b, id))

	tok, err = b.Redeem(code, fp("a"))
	requireCode(t, err, CodeUsed)
	require.Empty(t, tok, "the right call cannot use a spent code")
	require.Equal(t, []string{"tok-a"}, rv.got(), "revoked once")
}

func TestWrongCodesWithdraw(t *testing.T) {
	for wrong := 1; wrong <= maxAttempts+1; wrong++ {
		t.Run(fmt.Sprintf("%d wrong", wrong), func(t *testing.T) {
			b, _, rv := newTestBroker(t)
			id := add(t, b, "a")
			code := approve(t, b, id)
			bad := wrongCode(code)

			for i := 1; i <= wrong; i++ {
				tok, err := b.Redeem(bad, fp("a"))
				require.Empty(t, tok)
				switch {
				case i < maxAttempts:
					e := requireCode(t, err, CodeWrong)
					require.Contains(t, e.Message, fmt.Sprintf("%d attempt(s) left", maxAttempts-i))
					require.Equal(t, Approved, state(t, b, id))
					require.Empty(t, rv.got())
				case i == maxAttempts:
					e := requireCode(t, err, CodeWrong)
					require.Contains(t, e.Message, "withdrawn")
					require.Equal(t, Withdrawn, state(t, b, id))
					require.Equal(t, []string{"tok-a"}, rv.got())
				default:
					requireCode(t, err, CodeWithdrawn)
				}
			}

			tok, err := b.Redeem(code, fp("a"))
			if wrong < maxAttempts {
				require.NoError(t, err, "%d wrong codes leave the approval standing", wrong)
				require.Equal(t, "tok-a", tok)
				return
			}
			requireCode(t, err, CodeWithdrawn)
			require.Empty(t, tok, "the real code no longer works once withdrawn")
			require.Equal(t, []string{"tok-a"}, rv.got())
		})
	}
}

func TestWrongCodeCountsAgainstApprovedEntry(t *testing.T) {
	// Two previews of the same call: the approved one takes the attempts
	// even when a newer pending one exists.
	b, _, rv := newTestBroker(t)
	first := add(t, b, "a")
	code := approve(t, b, first)
	second := add(t, b, "a")

	for range maxAttempts {
		_, err := b.Redeem(wrongCode(code), fp("a"))
		requireCode(t, err, CodeWrong)
	}
	require.Equal(t, Withdrawn, state(t, b, first))
	require.Equal(t, Pending, state(t, b, second))
	require.Equal(t, []string{"tok-a"}, rv.got())

	_, err := b.Redeem(wrongCode(code), fp("a"))
	requireCode(t, err, CodePending)
}

func TestRedeemBeforeApproval(t *testing.T) {
	b, _, rv := newTestBroker(t)
	id := add(t, b, "a")
	for range maxAttempts + 2 {
		tok, err := b.Redeem("123-456", fp("a"))
		e := requireCode(t, err, CodePending)
		require.Empty(t, tok)
		require.Contains(t, e.Message, id)
	}
	require.Empty(t, rv.got())
	code := approve(t, b, id) // guesses before approval did not count
	tok, err := b.Redeem(code, fp("a"))
	require.NoError(t, err)
	require.Equal(t, "tok-a", tok)
}

func TestRejectRevokes(t *testing.T) {
	b, _, rv := newTestBroker(t)
	id := add(t, b, "a")
	ch := b.Changed()
	require.NoError(t, b.Reject(id))
	requireClosed(t, ch)
	require.Equal(t, Rejected, state(t, b, id))
	require.Equal(t, []string{"tok-a"}, rv.got())

	tok, err := b.Redeem("123-456", fp("a"))
	requireCode(t, err, CodeRejected)
	require.Empty(t, tok)

	_, _, err = b.Approve(id)
	requireCode(t, err, CodeNotPending)
	require.Equal(t, Rejected, state(t, b, id))
	require.Equal(t, []string{"tok-a"}, rv.got(), "revoked once")
}

func TestDecideAfterExpiry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		advance time.Duration
		live    bool
	}{
		{"just before", ttl - time.Nanosecond, true},
		{"at expiry", ttl, false},
		{"after", ttl + time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, c, _ := newTestBroker(t)
			a, r := add(t, b, "a"), add(t, b, "r")
			c.advance(tc.advance)

			code, expires, err := b.Approve(a)
			rerr := b.Reject(r)
			if tc.live {
				require.NoError(t, err)
				require.NoError(t, rerr)
				require.Regexp(t, codeRE, code)
				require.Equal(t, Approved, state(t, b, a))
				require.Equal(t, Rejected, state(t, b, r))
				return
			}
			requireCode(t, err, CodeExpired)
			require.Empty(t, code)
			require.True(t, expires.IsZero())
			requireCode(t, rerr, CodeExpired)
			v := view(t, b, a)
			require.Equal(t, Expired, v.State)
			require.Empty(t, v.Code)
			require.Equal(t, Expired, state(t, b, r))
		})
	}
}

func TestDecideOnce(t *testing.T) {
	b, _, rv := newTestBroker(t)
	id := add(t, b, "a")
	code := approve(t, b, id)

	_, _, err := b.Approve(id)
	requireCode(t, err, CodeNotPending)
	require.Empty(t, rv.got(), "a refused approve revokes nothing")
	v := view(t, b, id)
	require.Equal(t, code, v.Code, "approving twice does not draw a new code")

	tok, err := b.Redeem(code, fp("a"))
	require.NoError(t, err, "the approval stands")
	require.Equal(t, "tok-a", tok)

	_, _, err = b.Approve(id)
	requireCode(t, err, CodeNotPending)
	requireCode(t, b.Reject(id), CodeNotPending)

	for _, unknown := range []string{"ZZZZ", "", "../../etc"} {
		_, _, err = b.Approve(unknown)
		e := requireCode(t, err, CodeNotFound)
		require.NotContains(t, e.Message, "../", "an odd id is not echoed")
		requireCode(t, b.Reject(unknown), CodeNotFound)
	}
}

func TestRedeemApprovedButExpired(t *testing.T) {
	b, c, rv := newTestBroker(t)
	id := add(t, b, "a")
	code := approve(t, b, id)
	c.advance(ttl)

	tok, err := b.Redeem(code, fp("a"))
	requireCode(t, err, CodeExpired)
	require.Empty(t, tok)
	require.Equal(t, []string{"tok-a"}, rv.got(), "an expired approval's token is revoked")

	_, err = b.Redeem(code, fp("a"))
	requireCode(t, err, CodeUsed)
	require.Equal(t, []string{"tok-a"}, rv.got())
}

func TestRedeemExpiredPending(t *testing.T) {
	b, c, rv := newTestBroker(t)
	add(t, b, "a")
	c.advance(ttl)
	_, err := b.Redeem("123456", fp("a"))
	requireCode(t, err, CodeExpired)
	require.Empty(t, rv.got())
}

func TestRedeemMalformedCodes(t *testing.T) {
	b, _, rv := newTestBroker(t)
	id := add(t, b, "a")
	code := approve(t, b, id)
	digits, _ := ParseCode(code)
	token := "wgc_" + strings.Repeat("x", 40)

	for _, bad := range []string{
		"", "12345", "1234567", "abc-def", token, "١٢٣٤٥٦", "123--456", "12-3456",
		"123_456", "+12345", "-12345", "12345\x00",
		digits + "0", "0" + digits, digits[:3] + "." + digits[3:], "１２３４５６",
		"123\t456", "123-45", "0x1234",
	} {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
			_, ok := ParseCode(bad)
			require.False(t, ok)
			tok, err := b.Redeem(bad, fp("a"))
			e := requireCode(t, err, CodeUnknown)
			require.Empty(t, tok)
			require.NotContains(t, e.Message, "xxxxxxxx", "a token is not echoed")
			b.Spend(bad)
			require.Equal(t, Approved, state(t, b, id), "nothing spent")
		})
	}
	require.Empty(t, rv.got())

	tok, err := b.Redeem(code, fp("a"))
	require.NoError(t, err, "malformed codes are not attempts")
	require.Equal(t, "tok-a", tok)
}

func TestRedeemCodeOfNothing(t *testing.T) {
	b, _, rv := newTestBroker(t)
	id := add(t, b, "a")
	code := approve(t, b, id)

	_, err := b.Redeem(wrongCode(code), fp("never previewed"))
	requireCode(t, err, CodeUnknown)
	require.Equal(t, Approved, state(t, b, id))
	require.Empty(t, rv.got())
}

func TestParseCode(t *testing.T) {
	for in, want := range map[string]string{
		"123456":  "123456",
		"123-456": "123456",
		"123 456": "123456",
		"000000":  "000000",
		"999-999": "999999",
	} {
		got, ok := ParseCode(in)
		require.Truef(t, ok, "%q", in)
		require.Equal(t, want, got)
	}
	for _, in := range []string{"", "12345", "1234567", "123-4567", "12-34567", "1234-56", "123:456", "abcdef", "١٢٣٤٥٦", "123--456"} {
		got, ok := ParseCode(in)
		require.Falsef(t, ok, "%q", in)
		require.Empty(t, got)
	}
	require.Equal(t, "123-456", FormatCode("123456"))
	require.Equal(t, "12345", FormatCode("12345"))
}

func TestCodeFormsRedeem(t *testing.T) {
	for _, form := range []func(string) string{
		func(c string) string { return c },
		func(c string) string { return strings.ReplaceAll(c, "-", "") },
		func(c string) string { return strings.ReplaceAll(c, "-", " ") },
	} {
		b, _, _ := newTestBroker(t)
		code := approve(t, b, add(t, b, "a"))
		tok, err := b.Redeem(form(code), fp("a"))
		require.NoError(t, err)
		require.Equal(t, "tok-a", tok)
	}
}

func TestSpend(t *testing.T) {
	b, _, rv := newTestBroker(t)
	b.random = &scriptReader{script: []byte{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2}}
	spent, other, pending := add(t, b, "a"), add(t, b, "b"), add(t, b, "c")
	code := approve(t, b, spent)
	require.Equal(t, "111-111", code)
	require.Equal(t, "222-222", approve(t, b, other))

	for _, names := range []string{"333333", "333-333", "", "wgc_x", "11111"} {
		b.Spend(names) // names nothing
	}
	require.Equal(t, Approved, state(t, b, spent))
	require.Equal(t, Approved, state(t, b, other))
	require.Empty(t, rv.got())

	ch := b.Changed()
	b.Spend(strings.ReplaceAll(code, "-", " "))
	requireClosed(t, ch)
	require.Equal(t, Used, state(t, b, spent))
	require.Equal(t, []string{"tok-a"}, rv.got())
	tok, err := b.Redeem(code, fp("a"))
	requireCode(t, err, CodeUsed)
	require.Empty(t, tok)

	b.Spend(code) // again: nothing more to spend
	require.Equal(t, []string{"tok-a"}, rv.got())
	require.Equal(t, Approved, state(t, b, other))
	require.Equal(t, Pending, state(t, b, pending))
}

func TestPrune(t *testing.T) {
	b, c, rv := newTestBroker(t)
	pending := add(t, b, "pending")
	approved := add(t, b, "approved")
	approve(t, b, approved)
	rejected := add(t, b, "rejected")
	require.NoError(t, b.Reject(rejected))
	used := add(t, b, "used")
	code := approve(t, b, used)
	_, err := b.Redeem(code, fp("used"))
	require.NoError(t, err)
	require.Equal(t, []string{"tok-rejected"}, rv.got())

	c.advance(ttl + keepAfter) // exactly keepAfter past expiry: still listed
	require.Len(t, b.List(), 4)
	require.Equal(t, []string{"tok-rejected"}, rv.got())

	c.advance(time.Nanosecond)
	require.Empty(t, b.List())
	for _, id := range []string{pending, approved, rejected, used} {
		_, ok := b.Get(id)
		require.Falsef(t, ok, "%s is forgotten", id)
	}
	got := rv.got()
	require.ElementsMatch(t, []string{"tok-rejected", "tok-pending", "tok-approved"}, got,
		"pruning revokes the tokens still live, and only those")

	_, err = b.Redeem(code, fp("used"))
	requireCode(t, err, CodeUnknown)
}

func TestPruneOnAdd(t *testing.T) {
	b, c, rv := newTestBroker(t)
	old := add(t, b, "old")
	c.advance(ttl + keepAfter + time.Second)
	fresh := add(t, b, "fresh")
	_, ok := b.Get(old)
	require.False(t, ok)
	require.Equal(t, Pending, state(t, b, fresh))
	require.Equal(t, []string{"tok-old"}, rv.got())
}

func TestPruneKeepsLiveEntries(t *testing.T) {
	// A long-lived preview stays listed however much time passes before it
	// expires.
	b, c, rv := newTestBroker(t)
	id, err := b.Add(Request{Tool: "wallet_send", Fingerprint: fp("a"), Token: "tok-a", Expires: t0.Add(time.Hour)},
		func(string) Display { return Display{} })
	require.NoError(t, err)
	c.advance(keepAfter + 30*time.Minute)
	require.Len(t, b.List(), 1)
	require.Equal(t, Pending, state(t, b, id))
	require.Empty(t, rv.got())
}

func TestListOrder(t *testing.T) {
	b, c, _ := newTestBroker(t)
	var ids []string
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		ids = append(ids, add(t, b, name))
		c.advance(time.Second)
	}
	approve(t, b, ids[0])
	require.NoError(t, b.Reject(ids[2]))
	approve(t, b, ids[4])

	var got []string
	var states []State
	for _, v := range b.List() {
		got = append(got, v.ID)
		states = append(states, v.State)
	}
	require.Equal(t, []string{ids[1], ids[3], ids[0], ids[2], ids[4]}, got, "pending first, each group oldest first")
	require.Equal(t, []State{Pending, Pending, Approved, Rejected, Approved}, states)
}

func requireClosed(t testing.TB, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Fatal("Changed() channel was not closed")
	}
}

func requireOpen(t testing.TB, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
		t.Fatal("Changed() channel was closed with no change")
	default:
	}
}

func TestChanged(t *testing.T) {
	b, _, _ := newTestBroker(t)
	ch := b.Changed()
	requireOpen(t, ch)
	id := add(t, b, "a")
	requireClosed(t, ch)

	ch = b.Changed()
	requireOpen(t, ch)
	b.List()
	b.Get(id)
	_, _, err := b.Approve("ZZZZ")
	require.Error(t, err)
	requireOpen(t, ch)

	code := approve(t, b, id)
	requireClosed(t, ch)

	ch = b.Changed()
	_, err = b.Redeem(code, fp("a"))
	require.NoError(t, err)
	requireClosed(t, ch)

	id = add(t, b, "b")
	ch = b.Changed()
	require.NoError(t, b.Reject(id))
	requireClosed(t, ch)

	// A waiter wakes up.
	id = add(t, b, "c")
	ch = b.Changed()
	done := make(chan struct{})
	go func() { <-ch; close(done) }()
	approve(t, b, id)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not woken")
	}
}

func TestRedeemConcurrent(t *testing.T) {
	b, _, rv := newTestBroker(t)
	id := add(t, b, "a")
	code := approve(t, b, id)

	const n = 64
	var (
		wg     sync.WaitGroup
		start  = make(chan struct{})
		mu     sync.Mutex
		tokens []string
		codes  = map[string]int{}
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			form := code
			if i%2 == 1 {
				form = strings.ReplaceAll(code, "-", "")
			}
			tok, err := b.Redeem(form, fp("a"))
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				tokens = append(tokens, tok)
				return
			}
			var e *Error
			if errors.As(err, &e) {
				codes[e.Code]++
			} else {
				codes[err.Error()]++
			}
		}()
	}
	// Readers and deciders race with the redeemers.
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			b.List()
			b.Get(id)
			_, _, _ = b.Approve(id)
			b.Changed()
		}()
	}
	close(start)
	wg.Wait()

	require.Equal(t, []string{"tok-a"}, tokens, "exactly one redeemer gets the token")
	require.Equal(t, map[string]int{CodeUsed: n - 1}, codes)
	require.Empty(t, rv.got())
	require.Equal(t, Used, state(t, b, id))
}

func TestRedeemConcurrentMismatch(t *testing.T) {
	// Right and wrong calls race for one code: at most one token leaves, and
	// if the wrong call came first, none does and the token is revoked.
	for round := range 20 {
		b, _, rv := newTestBroker(t)
		code := approve(t, b, add(t, b, "a"))
		var wg sync.WaitGroup
		start := make(chan struct{})
		results := make([]string, 16)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				f := fp("a")
				if i%2 == 1 {
					f = fp("b")
				}
				results[i], _ = b.Redeem(code, f)
			}()
		}
		close(start)
		wg.Wait()
		var got []string
		for _, r := range results {
			if r != "" {
				got = append(got, r)
			}
		}
		if len(got) == 1 {
			require.Equal(t, "tok-a", got[0], "round %d", round)
			require.Empty(t, rv.got(), "round %d", round)
		} else {
			require.Empty(t, got, "round %d", round)
			require.Equal(t, []string{"tok-a"}, rv.got(), "round %d", round)
		}
	}
}

func TestIDsAndCodesUniqueOnCollision(t *testing.T) {
	b, _, _ := newTestBroker(t)
	r := &scriptReader{script: []byte{
		0, 0, 0, 0, // id AAAA
		0, 0, 0, 0, // id AAAA again: taken, drawn anew
		1, 1, 1, 1, // id BBBB
		1, 2, 3, 4, 5, 6, // code 123456 for AAAA
		1, 2, 3, 4, 5, 6, // code 123456 again for BBBB: taken, drawn anew
		6, 5, 4, 3, 2, 1, // code 654321
	}}
	b.random = r
	a, bb := add(t, b, "a"), add(t, b, "b")
	require.Equal(t, "AAAA", a)
	require.Equal(t, "BBBB", bb)
	require.Equal(t, "123-456", approve(t, b, a))
	require.Equal(t, "654-321", approve(t, b, bb))
	require.Equal(t, len(r.script), r.n, "both collisions were retried")

	// A used code stays taken while its entry is listed.
	_, err := b.Redeem("123-456", fp("a"))
	require.NoError(t, err)
	r.script = append(r.script,
		2, 2, 2, 2, // id CCCC
		1, 2, 3, 4, 5, 6, // taken by the used AAAA
		6, 5, 4, 3, 2, 1, // taken by BBBB
		9, 9, 9, 9, 9, 9)
	c := add(t, b, "c")
	require.Equal(t, "CCCC", c)
	require.Equal(t, "999-999", approve(t, b, c))
	require.Equal(t, len(r.script), r.n)
}

func TestCodesUnique(t *testing.T) {
	b, _, _ := newTestBroker(t)
	seen := map[string]bool{}
	for i := range 300 {
		// Across sessions: a code is unique in the whole broker.
		code := approve(t, b, addAs(t, b.Session(fmt.Sprint(i%10)), fmt.Sprint(i), fmt.Sprint(i)))
		require.False(t, seen[code], "code %s issued twice", code)
		seen[code] = true
	}
	ids := map[string]bool{}
	for _, v := range b.List() {
		require.False(t, ids[v.ID])
		ids[v.ID] = true
	}
	require.Len(t, ids, 300)
}

func TestNoRandomness(t *testing.T) {
	b, _, rv := newTestBroker(t)
	b.random = &scriptReader{}
	_, err := b.Add(Request{Tool: "wallet_send", Fingerprint: fp("a"), Token: "tok-a", Expires: t0.Add(ttl)},
		func(string) Display { return Display{} })
	require.ErrorContains(t, err, "no randomness")
	require.Empty(t, b.List())

	b.random = &scriptReader{script: []byte{0, 0, 0, 0}}
	id := add(t, b, "a")
	code, _, err := b.Approve(id)
	require.ErrorContains(t, err, "no randomness")
	require.Empty(t, code)
	require.Equal(t, Pending, state(t, b, id), "no code, no approval")
	require.Empty(t, rv.got())
}

func TestTooMany(t *testing.T) {
	b, c, rv := newTestBroker(t)
	for i := range maxLivePerSession {
		add(t, b, fmt.Sprint(i))
	}
	_, err := b.Add(Request{Tool: "wallet_send", Fingerprint: fp("x"), Token: "tok-x", Expires: c.now().Add(ttl)},
		func(string) Display { t.Fatal("render called for a refused preview"); return Display{} })
	requireCode(t, err, "TOO_MANY_PENDING")
	require.Len(t, b.List(), maxLivePerSession)
	require.Empty(t, rv.got(), "the caller revokes a refused preview's token")

	c.advance(ttl + keepAfter + time.Second)
	add(t, b, "x")
	require.Len(t, b.List(), 1)
}

func TestNilRevokeIsAllowed(t *testing.T) {
	c := newFakeClock()
	b := NewBroker(Options{Now: c.now})
	id := add(t, b, "a")
	require.NoError(t, b.Reject(id), "a nil revoke is allowed")
}

func TestNilClockIsWallClock(t *testing.T) {
	b := NewBroker(Options{})
	before := time.Now()
	id, err := b.Add(Request{Tool: "wallet_send", Fingerprint: fp("a"), Token: "tok-a", Expires: before.Add(time.Hour)},
		func(string) Display { return Display{} })
	require.NoError(t, err)
	_, _, err = b.Approve(id)
	require.NoError(t, err)

	id, err = b.Add(Request{Tool: "wallet_send", Fingerprint: fp("b"), Token: "tok-b", Expires: before.Add(-time.Second)},
		func(string) Display { return Display{} })
	require.NoError(t, err)
	_, _, err = b.Approve(id)
	requireCode(t, err, CodeExpired)
}

func TestErrorsHoldNoSecrets(t *testing.T) {
	// Every refusal the model can see leaves out the token and the code.
	b, c, _ := newTestBroker(t)
	id := add(t, b, "a")
	code := approve(t, b, id)
	digits, _ := ParseCode(code)
	var errs []error
	_, err := b.Redeem(wrongCode(code), fp("a"))
	errs = append(errs, err)
	_, _, err = b.Approve(id)
	errs = append(errs, err)
	_, err = b.Redeem(code, fp("b"))
	errs = append(errs, err)
	_, err = b.Redeem(code, fp("a"))
	errs = append(errs, err)
	c.advance(ttl)
	_, err = b.Redeem(code, fp("a"))
	errs = append(errs, err)
	for _, err := range errs {
		require.Error(t, err)
		require.NotContains(t, err.Error(), "tok-a")
		require.NotContains(t, err.Error(), digits)
		require.NotContains(t, err.Error(), code)
	}
}

// decisions records what Options.Decided hears; safe for concurrent use.
type decisions struct {
	mu  sync.Mutex
	got []Decision
}

func (d *decisions) add(x Decision) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, x)
}

func (d *decisions) list() []Decision {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Decision(nil), d.got...)
}

// within fails the test if f does not return in time (a callback run under
// the broker's lock would deadlock on re-entry).
func within(t testing.TB, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("deadlock: the broker called back under its lock")
	}
}

func TestDecided(t *testing.T) {
	c := newFakeClock()
	var heard decisions
	var seen []State
	var b *Broker
	b = NewBroker(Options{Now: c.now, Decided: func(d Decision) {
		// Told after the decision, outside the lock: the broker can be read.
		v, _ := b.Get(d.ID)
		seen = append(seen, v.State)
		b.List()
		heard.add(d)
	}})
	a, r, late := add(t, b, "a"), add(t, b, "r"), add(t, b, "late")

	within(t, func() { approve(t, b, a) })
	within(t, func() { require.NoError(t, b.Reject(r)) })
	require.Equal(t, []Decision{
		{ID: a, Tool: "wallet_send", Fingerprint: fp("a"), State: Approved},
		{ID: r, Tool: "wallet_send", Fingerprint: fp("r"), State: Rejected},
	}, heard.list())
	require.Equal(t, []State{Approved, Rejected}, seen)

	// Refused decisions, and what the model does with codes, are not the
	// person's decisions.
	_, _, err := b.Approve(a)
	requireCode(t, err, CodeNotPending)
	_, _, err = b.Approve("ZZZZ")
	requireCode(t, err, CodeNotFound)
	code := approve(t, b, add(t, b, "m"))
	_, err = b.Redeem(code, fp("other"))
	requireCode(t, err, CodeMismatch)
	w := add(t, b, "w")
	wcode := approve(t, b, w)
	for range maxAttempts {
		_, err = b.Redeem(wrongCode(wcode), fp("w"))
		requireCode(t, err, CodeWrong)
	}
	c.advance(ttl)
	_, _, err = b.Approve(late)
	requireCode(t, err, CodeExpired)
	requireCode(t, b.Reject(late), CodeExpired)
	got := heard.list()
	require.Len(t, got, 4, "only the two approvals after the first two decisions: %+v", got)
	require.Equal(t, Approved, got[2].State)
	require.Equal(t, Approved, got[3].State)
	require.Equal(t, w, got[3].ID)

}

func TestDecidedNotCalledOnRandomFailure(t *testing.T) {
	var heard decisions
	b := NewBroker(Options{Now: newFakeClock().now, Decided: heard.add})
	b.random = &scriptReader{script: []byte{0, 0, 0, 0}}
	id := add(t, b, "a")
	_, _, err := b.Approve(id)
	require.Error(t, err)
	require.Empty(t, heard.list())
	// The lock was released on the error path.
	within(t, func() { require.Equal(t, Pending, state(t, b, id)) })
}

func TestRejectWithdrawsAnUnusedApproval(t *testing.T) {
	// The person notices a mistake after approving: until the code is used,
	// Reject takes the approval back.
	b, _, rv := newTestBroker(t)
	id := add(t, b, "a")
	code := approve(t, b, id)
	require.NoError(t, b.Reject(id))
	require.Equal(t, Withdrawn, state(t, b, id))
	require.Equal(t, []string{"tok-a"}, rv.got())
	_, err := b.Redeem(code, fp("a"))
	requireCode(t, err, CodeWithdrawn)

	// Once used, there is nothing left to take back.
	id2 := add(t, b, "b")
	code2 := approve(t, b, id2)
	_, err = b.Redeem(code2, fp("b"))
	require.NoError(t, err)
	requireCode(t, b.Reject(id2), CodeNotPending)
	require.Equal(t, Used, state(t, b, id2))
}

func TestCodesWithSurroundingSpaceRedeem(t *testing.T) {
	for _, wrap := range []string{" %s", "%s ", "%s\n", "\t%s "} {
		b, _, _ := newTestBroker(t)
		id := add(t, b, "a")
		code := approve(t, b, id)
		tok, err := b.Redeem(fmt.Sprintf(wrap, code), fp("a"))
		require.NoError(t, err, "%q", wrap)
		require.Equal(t, "tok-a", tok)
	}
}

func TestMalformedCodeKeepsAValidApproval(t *testing.T) {
	b, _, rv := newTestBroker(t)
	id := add(t, b, "a")
	code := approve(t, b, id)
	_, err := b.Redeem("１２３４５６", fp("a"))
	e := requireCode(t, err, CodeUnknown)
	require.Contains(t, e.Message, "approval of preview "+id+" is still valid")
	require.Contains(t, e.Message, "Nothing was signed or sent")
	require.Empty(t, rv.got())
	tok, err := b.Redeem(code, fp("a"))
	require.NoError(t, err)
	require.Equal(t, "tok-a", tok)
}
