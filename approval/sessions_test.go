package approval

// Sessions in one broker (the service: one per MCP connection), attacked by
// each other: two sessions with the same arguments exchange codes, send
// wrong codes and flood the list. Each session's approvals, wrong-code
// counts, rejections and quota are its own, and no refusal names another
// session's preview.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// addAs lists a preview of session s with fingerprint fp(name) and token
// "tok-"+token.
func addAs(t testing.TB, s Session, name, token string) string {
	t.Helper()
	id, err := s.Add(Request{Tool: "wallet_send", Fingerprint: fp(name), Token: "tok-" + token, Expires: s.b.now().Add(ttl)},
		func(string) Display { return Display{Title: "Send 1 ETH (" + name + ")"} })
	require.NoError(t, err)
	return id
}

// requireNotNamed asserts that a refusal names none of ids.
func requireNotNamed(t testing.TB, err error, ids ...string) {
	t.Helper()
	require.Error(t, err)
	for _, id := range ids {
		require.NotContains(t, err.Error(), id, "a refusal to one session names another session's preview")
	}
}

func TestAnotherSessionsCodeSpendsNothingOfTheSessionItBelongsTo(t *testing.T) {
	b, _, rv := newTestBroker(t)
	p, q := b.Session("P"), b.Session("Q")
	// The same call in both sessions: the same fingerprint.
	pid, qid := addAs(t, p, "same", "p"), addAs(t, q, "same", "q")
	pcode, qcode := approve(t, b, pid), approve(t, b, qid)

	// Q offers P's code for the same arguments: to Q it is a wrong code
	// for Q's own approval; P's approval is untouched.
	_, err := q.Redeem(pcode, fp("same"))
	requireCode(t, err, CodeWrong)
	requireNotNamed(t, err, pid)
	q.Spend(pcode)
	q.Finish(pcode, fp("same"), Outcome{Status: "confirmed", Summary: "forged"})
	require.Equal(t, Approved, state(t, b, pid), "another session's use of P's code spent P's approval")
	require.Nil(t, view(t, b, pid).Outcome, "another session wrote P's outcome")
	require.Empty(t, rv.got(), "nothing of P's was revoked")

	// P's own code still confirms P's preview, and only P's.
	tok, err := p.Redeem(pcode, fp("same"))
	require.NoError(t, err)
	require.Equal(t, "tok-p", tok)
	tok, err = q.Redeem(qcode, fp("same"))
	require.NoError(t, err)
	require.Equal(t, "tok-q", tok)
}

func TestAnotherSessionsWrongCodesNeverWithdrawAnApproval(t *testing.T) {
	for _, qHasOne := range []bool{false, true} {
		t.Run(fmt.Sprintf("the other session has its own approval: %v", qHasOne), func(t *testing.T) {
			b, _, _ := newTestBroker(t)
			p, q := b.Session("P"), b.Session("Q")
			pid := addAs(t, p, "same", "p")
			pcode := approve(t, b, pid)
			var qid string
			if qHasOne {
				qid = addAs(t, q, "same", "q")
				approve(t, b, qid)
			}
			for range maxAttempts + 2 {
				_, err := q.Redeem(wrongCode(pcode), fp("same"))
				requireNotNamed(t, err, pid)
				_, err = q.Redeem("not a code", fp("same"))
				requireNotNamed(t, err, pid)
			}
			require.Equal(t, Approved, state(t, b, pid), "another session's wrong codes withdrew P's approval")
			if qHasOne {
				require.Equal(t, Withdrawn, state(t, b, qid), "Q's wrong codes count against Q's own approval")
			}
			// P's own wrong codes still count against P's approval.
			_, err := p.Redeem(wrongCode(pcode), fp("same"))
			e := requireCode(t, err, CodeWrong)
			require.Contains(t, e.Message, fmt.Sprintf("%d attempt(s) left", maxAttempts-1))
			tok, err := p.Redeem(pcode, fp("same"))
			require.NoError(t, err)
			require.Equal(t, "tok-p", tok)
		})
	}
}

func TestARefusalNeverNamesAnotherSessionsPreview(t *testing.T) {
	b, _, _ := newTestBroker(t)
	p, q := b.Session("P"), b.Session("Q")
	pending := addAs(t, p, "same", "p1")
	approved := addAs(t, p, "same", "p2")
	approve(t, b, approved)
	rejected := addAs(t, p, "same", "p3")
	require.NoError(t, b.Reject(rejected))
	ids := []string{pending, approved, rejected}
	for _, code := range []string{"123-456", "12", ""} {
		_, err := q.Redeem(code, fp("same"))
		requireCode(t, err, CodeUnknown)
		requireNotNamed(t, err, ids...)
	}
	for _, id := range ids {
		_, ok := q.Get(id)
		require.False(t, ok, "Q sees P's preview %s", id)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, _, err := q.AwaitApproval(ctx, id, fp("same"))
		cancel()
		requireCode(t, err, CodeUnknown)
		requireNotNamed(t, err, ids...)
	}
	_, ok := p.Get(pending)
	require.True(t, ok, "a session sees its own preview")
}

func TestAFloodInOtherSessionsNeverCrowdsOutASession(t *testing.T) {
	b, _, rv := newTestBroker(t)
	var mine []string
	person := b.Session("P")
	mine = append(mine, addAs(t, person, "p0", "p0"))
	code := approve(t, b, mine[0])
	// 8 sessions × 70 previews each.
	for s := range 8 {
		flood := b.Session(fmt.Sprint("F", s))
		refused := 0
		for i := range 70 {
			_, err := flood.Add(Request{Tool: "wallet_send", Fingerprint: fp(fmt.Sprint(s, i)), Token: fmt.Sprint("tok-f", s, "-", i), Expires: b.now().Add(ttl)},
				func(string) Display { return Display{} })
			if err != nil {
				requireCode(t, err, CodeTooMany)
				requireNotNamed(t, err, mine...)
				refused++
			}
		}
		require.GreaterOrEqual(t, refused, 70-maxLivePerSession, "a session holds at most %d previews", maxLivePerSession)
	}
	// The person's session still gets its previews listed: the fullest
	// sessions give way, never the person's own entries.
	for i := 1; i < 20; i++ {
		mine = append(mine, addAs(t, person, fmt.Sprint("p", i), fmt.Sprint("p", i)))
	}
	require.Equal(t, Approved, state(t, b, mine[0]), "the flood touched the person's approval")
	for _, id := range mine[1:] {
		require.Equal(t, Pending, state(t, b, id))
	}
	for _, tok := range rv.got() {
		require.NotContains(t, tok, "tok-p", "a flood revoked the person's token")
	}
	dropped := 0
	for _, v := range b.List() {
		if v.State == Dropped {
			dropped++
		}
	}
	require.Equal(t, 19, dropped, "each of the person's new previews took the place of one of the flood's")
	live := 0
	for _, v := range b.List() {
		if v.State == Pending || v.State == Approved {
			live++
		}
	}
	require.LessOrEqual(t, live, maxLive)
	tok, err := person.Redeem(code, fp("p0"))
	require.NoError(t, err)
	require.Equal(t, "tok-p0", tok)
}

// A dropped preview tells its own session's confirm what happened.
func TestADroppedPreviewSaysSo(t *testing.T) {
	b, _, _ := newTestBroker(t)
	flood := b.Session("F")
	first := addAs(t, flood, "f0", "f0")
	for i := 1; i < maxLivePerSession; i++ {
		addAs(t, flood, fmt.Sprint("f", i), fmt.Sprint("f", i))
	}
	for s := 1; s*maxLivePerSession < maxLive; s++ {
		other := b.Session(fmt.Sprint("G", s))
		for i := range maxLivePerSession {
			addAs(t, other, fmt.Sprint("g", s, "-", i), fmt.Sprint("g", s, "-", i))
		}
	}
	addAs(t, b.Session("P"), "p", "p")
	var dropped []string
	for _, v := range b.List() {
		if v.State == Dropped {
			dropped = append(dropped, v.ID)
		}
	}
	require.Len(t, dropped, 1)
	require.Equal(t, first, dropped[0], "the oldest pending preview of the fullest session gives way (ties: the session whose preview is oldest)")
	_, err := flood.Redeem("123-456", fp("f0"))
	requireCode(t, err, CodeDropped)
}
