package confirm

// The approval broker's life cycle. A broker lists the previews of every
// session it serves (stdio: one; walletgate service: one per connection),
// and each session keeps its tokens in a gate of its own. Rules: the broker
// is built here with its revoke and decision functions fixed, before any
// session exists; a session joins when its Mode is built and leaves when it
// is closed; a person's rejection spends the token in every joined gate
// (only the issuing one holds it); each decision is recorded once, by the
// session that previewed it while it is joined, else by the earliest
// session still joined (they share one journal).

import (
	"sync"
	"time"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/gate"
)

// Approvals is an approval broker and the sessions that list previews in
// it. Safe for concurrent use.
type Approvals struct {
	broker *approval.Broker

	mu     sync.Mutex
	joined []*member // in join order
}

type member struct {
	session string
	gate    *gate.Gate
	record  func(approval.Decision) // nil: records nothing
}

// NewApprovals returns an empty broker on clock now (time.Now when nil);
// where is what the model is told about where the person approves
// (approval.Options.Where).
func NewApprovals(now func() time.Time, where string) *Approvals {
	a := &Approvals{}
	a.broker = approval.NewBroker(approval.Options{Now: now, Revoke: a.revoke, Decided: a.decided, Where: where})
	return a
}

// Broker is the broker, for the page and the terminal to serve.
func (a *Approvals) Broker() *approval.Broker { return a.broker }

// join adds a session; leave removes it, once.
func (a *Approvals) join(session string, g *gate.Gate, record func(approval.Decision)) (leave func()) {
	m := &member{session: session, gate: g, record: record}
	a.mu.Lock()
	a.joined = append(a.joined, m)
	a.mu.Unlock()
	return sync.OnceFunc(func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		for i, x := range a.joined {
			if x == m {
				a.joined = append(a.joined[:i:i], a.joined[i+1:]...)
				return
			}
		}
	})
}

// revoke spends token in whichever joined gate issued it. The broker calls
// it under its own lock; a.mu is never held while calling into the broker,
// so the order is always broker, then a.mu, then a gate.
func (a *Approvals) revoke(token string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.joined {
		m.gate.Revoke(token)
	}
}

// decided records d once, through the session that previewed it, or the
// earliest joined session that records when that one has left.
func (a *Approvals) decided(d approval.Decision) {
	a.mu.Lock()
	var record func(approval.Decision)
	for _, m := range a.joined {
		if m.record != nil && m.session == d.Session {
			record = m.record
			break
		}
	}
	for _, m := range a.joined {
		if record == nil && m.record != nil {
			record = m.record
			break
		}
	}
	a.mu.Unlock()
	if record != nil {
		record(d)
	}
}
