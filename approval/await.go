package approval

// Waiting for the person in the client: with URL-mode elicitation the client
// opens the approval page for a preview, the person decides there, and the
// confirm that asked waits for the decision instead of a code the model would
// carry. The page stays the only place a preview is approved.

import (
	"context"
	"crypto/subtle"
	"time"
)

// AwaitApproval waits until ctx ends or preview id expires for the person's
// decision on it. id must be a preview of fingerprint. On approval it uses the
// approval as a code would (once) and returns the gate token and the code, so
// that Finish can record the outcome under it; a rejection, a withdrawal, an
// expiry or an approval already used is an *Error.
func (b *Broker) AwaitApproval(ctx context.Context, id string, fingerprint [32]byte) (token, code string, err error) {
	return b.await(ctx, "", id, fingerprint)
}

// AwaitApproval is Broker.AwaitApproval for this session's previews only.
func (s Session) AwaitApproval(ctx context.Context, id string, fingerprint [32]byte) (token, code string, err error) {
	return s.b.await(ctx, s.name, id, fingerprint)
}

func (b *Broker) await(ctx context.Context, session, id string, fingerprint [32]byte) (token, code string, err error) {
	for {
		b.mu.Lock()
		e := b.entries[id]
		if e == nil || e.session != session || subtle.ConstantTimeCompare(e.fingerprint[:], fingerprint[:]) != 1 {
			b.mu.Unlock()
			return "", "", &Error{Code: CodeUnknown, Message: "the id given names no preview of this call in this session (it is not repeated here: it may be another session's). Nothing was signed or sent. " + howTo}
		}
		now := b.now()
		switch e.stateAt(now) {
		case Approved:
			e.state = Used
			token, code = e.token, FormatCode(e.code)
			e.token = ""
			b.notifyLocked()
			b.mu.Unlock()
			return token, code, nil
		case Rejected:
			b.mu.Unlock()
			return "", "", &Error{Code: CodeRejected, Message: "the person rejected preview " + id + " on the approval page. Nothing was signed or sent."}
		case Withdrawn:
			b.mu.Unlock()
			return "", "", &Error{Code: CodeWithdrawn, Message: "the approval of preview " + id + " was withdrawn. Nothing was signed or sent. " + howTo}
		case Dropped:
			b.mu.Unlock()
			return "", "", &Error{Code: CodeDropped, Message: "preview " + id + " was dropped before the person decided: the approval list was full and this session held more previews than its share. Nothing was signed or sent. " + howTo}
		case Used:
			b.mu.Unlock()
			return "", "", &Error{Code: CodeUsed, Message: "preview " + id + " was already approved and used; each approval works once. Nothing was signed or sent. " + howTo}
		case Expired:
			b.mu.Unlock()
			return "", "", &Error{Code: CodeExpired, Message: "preview " + id + " expired at " + stamp(e.expires) + " before the person decided. Nothing was signed or sent. " + howTo}
		}
		changed, left := b.changed, e.expires.Sub(now)
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return "", "", &Error{Code: CodePending, Message: "the person has not decided on preview " + id + " yet, and the request ended. Nothing was signed or sent. They can still approve it on the page; then confirm again."}
		case <-changed:
		case <-time.After(left):
		}
	}
}
