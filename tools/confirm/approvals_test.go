package confirm_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools/confirm"
)

// decisions records what a session is told to record; safe for concurrent
// use.
type decisions struct {
	mu  sync.Mutex
	got []string
}

func (d *decisions) add(x approval.Decision) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, x.ID+" "+string(x.State))
}

func (d *decisions) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.got...)
}

// A broker shared by sessions: a rejection spends the token in the session
// that issued it, a session that left is never reached, and each decision
// is recorded once, by the earliest session still joined.
func TestApprovalsLifeCycle(t *testing.T) {
	hub := confirm.NewApprovals(nil, "")
	b := hub.Broker()
	type session struct {
		gate  *gate.Gate
		heard *decisions
		mode  *confirm.Mode
	}
	join := func() session {
		s := session{gate: gate.New(time.Minute, 8, nil), heard: &decisions{}}
		s.mode = confirm.New(confirm.Deps{Mode: policy.ConfirmHuman, Gate: s.gate, Approvals: hub, Record: s.heard.add})
		return s
	}
	list := func(s session, what string) (string, string) {
		t.Helper()
		token, expires, err := s.gate.Issue("wallet_send", []byte(what), nil)
		require.NoError(t, err)
		id, err := b.Add(approval.Request{Tool: "wallet_send", Fingerprint: gate.Fingerprint("wallet_send", []byte(what)), Token: token, Expires: expires},
			func(string) approval.Display { return approval.Display{} })
		require.NoError(t, err)
		return id, token
	}
	first, second, third := join(), join(), join()
	require.True(t, first.mode.HasBroker())

	id, _ := list(second, "a")
	list(third, "b")
	require.NoError(t, b.Reject(id))
	require.Equal(t, []int{0, 0, 1}, []int{first.gate.Pending(), second.gate.Pending(), third.gate.Pending()}, "only the issuing session's token is spent")
	require.Equal(t, []string{id + " rejected"}, first.heard.list(), "the earliest session records")
	require.Empty(t, second.heard.list())

	first.mode.Close()
	first.mode.Close() // twice is once
	id, _ = list(second, "c")
	_, _, err := b.Approve(id)
	require.NoError(t, err)
	require.Equal(t, []string{id + " approved"}, second.heard.list(), "the earliest session still joined records")
	require.Len(t, first.heard.list(), 1, "a session that left hears nothing")

	third.mode.Close()
	require.Equal(t, 1, third.gate.Pending())
	late, _ := list(third, "d") // its entry outlives the session
	require.NoError(t, b.Reject(late))
	require.Equal(t, 2, third.gate.Pending(), "a session that left is not reached")
}
