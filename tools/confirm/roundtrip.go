package confirm

// Asking the person in protocol 2026-07-28 (SEP-2322, multi round-trip
// requests). That version has no server-sent elicitation/create: the confirm
// answers input_required with the question, the client asks the person and
// calls the tool again with the answer and the requestState it was given.
// Rules of this file:
//
//   - The question is asked before the token is spent (the first call only
//     looks at the preview, gate.Peek); the retried call spends it, as a
//     2025-era confirm does, whatever the answer.
//   - requestState is a random name for one question walletgate asked, kept
//     here with the tool's fingerprint (tool and canonical arguments), the
//     confirm value the call carried and the mode (form or url). Nothing the
//     client echoes is believed: a retried call whose state walletgate did
//     not issue, issued for other arguments, another confirm value or mode,
//     expired, or already answered once, is refused ANSWER_UNKNOWN before the
//     token is touched — a forged or replayed answer changes nothing.
//   - Each question is answered once: the state is spent when a retry names
//     it, whatever follows.
//   - 2025-era requests keep the server-sent elicitation/create (elicit.go,
//     urlelicit.go); mcp-go's bridge from input_required to those requests is
//     not used, because it reports a failed elicitation as a JSON-RPC error
//     rather than a refusal the person and the assistant can read.

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/policy"
)

// CodeAnswerUnknown refuses a retried confirm whose answer walletgate did not
// ask for in this exchange, or already used.
const CodeAnswerUnknown = "ANSWER_UNKNOWN"

// answerKey names walletgate's one question in inputRequests/inputResponses.
const answerKey = "approve"

// maxAsks bounds the questions outstanding at once (as the gate bounds
// tokens); past it a confirm is refused rather than an older question lost.
const maxAsks = 256

// Kinds of question.
const (
	askForm = "form" // elicit mode: approve this preview, yes or no
	askURL  = "url"  // human mode: open the approval page of this preview
)

type roundTripKey struct{}

// WithRoundTrip carries a tools/call's inputResponses and requestState to the
// write handlers: every tool call's context passes through it.
func WithRoundTrip(ctx context.Context, rt mcp.MultiRoundTripParams) context.Context {
	return context.WithValue(ctx, roundTripKey{}, rt)
}

func roundTripOf(ctx context.Context) mcp.MultiRoundTripParams {
	rt, _ := ctx.Value(roundTripKey{}).(mcp.MultiRoundTripParams)
	return rt
}

// answering reports whether this call is a retry carrying answers.
func answering(ctx context.Context) bool {
	rt := roundTripOf(ctx)
	return rt.RequestState != "" || len(rt.InputResponses) > 0
}

// modern reports whether this request speaks protocol 2026-07-28 or later,
// where walletgate asks through the tool's answer.
func modern(ctx context.Context) bool {
	return mcp.IsModernProtocol(server.RequestProtocolVersion(ctx))
}

// clientCaps are the capabilities the client declared for this request: in
// 2026-07-28 on the request itself (never inferred from earlier requests),
// before it at initialize.
func clientCaps(ctx context.Context) mcp.ClientCapabilities {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if info.ClientCapabilities != nil {
			return *info.ClientCapabilities
		}
		return mcp.ClientCapabilities{}
	}
	if withInfo, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return withInfo.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}

// canElicitForm reports whether the client declared form elicitation (an
// elicitation capability with neither mode named means form).
func canElicitForm(ctx context.Context) bool {
	el := clientCaps(ctx).Elicitation
	return el != nil && (el.Form != nil || el.URL == nil)
}

// ask is one question walletgate asked and has not had answered.
type ask struct {
	fingerprint [32]byte
	confirm     string
	kind        string
	expires     time.Time
}

// asks are the questions outstanding, by requestState. Safe for concurrent
// use; the zero value is ready.
type asks struct {
	mu sync.Mutex
	m  map[string]ask
}

// open records a question and returns its requestState, or "" when maxAsks
// are outstanding.
func (a *asks) open(q ask, now time.Time) string {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return ""
	}
	state := "wgask_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]ask{}
	}
	for k, v := range a.m {
		if !now.Before(v.expires) {
			delete(a.m, k)
		}
	}
	if len(a.m) >= maxAsks {
		return ""
	}
	a.m[state] = q
	return state
}

// take spends the question named state and reports whether it was asked for
// exactly q's fingerprint, confirm value and kind, and has not expired.
func (a *asks) take(state string, q ask, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	got, ok := a.m[state]
	if !ok {
		return false
	}
	delete(a.m, state)
	return now.Before(got.expires) && got.kind == q.kind &&
		subtle.ConstantTimeCompare(got.fingerprint[:], q.fingerprint[:]) == 1 &&
		subtle.ConstantTimeCompare([]byte(got.confirm), []byte(q.confirm)) == 1
}

// answerUnknown is the refusal of a retry whose answer does not belong to
// this call.
func answerUnknown(tool string) *Refusal {
	return refuse(CodeAnswerUnknown, "this call carries an answer from the person that walletgate did not ask for with exactly this call, or one that was already used: each answer counts once, for the call it was asked for. Nothing was signed or sent, and the preview is unchanged. Call %s again with exactly the same arguments and \"confirm\", with no answer attached: walletgate then asks the person again through the client.", tool)
}

// takeAnswer checks a retried call's state against the question walletgate
// asked for this call, spends it, and returns the person's answer (nil when
// the client sent none under walletgate's key).
func (m *Mode) takeAnswer(ctx context.Context, kind, confirm, tool string, canonical []byte) (*mcp.ElicitationResult, *Refusal) {
	rt := roundTripOf(ctx)
	q := ask{fingerprint: gate.Fingerprint(tool, canonical), confirm: confirm, kind: kind}
	if rt.RequestState == "" || !m.asks.take(rt.RequestState, q, m.now()) {
		return nil, answerUnknown(tool)
	}
	return server.ElicitationResponse(rt.InputResponses, answerKey), nil
}

// AskFirst is the first call of a 2026-07-28 confirm that needs the person:
// it returns the input_required answer carrying the question, having spent
// nothing. nil, nil: no question is due (a 2025-era request, a retry, token
// mode, a client that cannot answer one, a confirm the engine refuses
// anyway) and the confirm proceeds.
func (m *Mode) AskFirst(ctx context.Context, confirm, tool string, canonical []byte) (*mcp.CallToolResult, *Refusal) {
	if !modern(ctx) || answering(ctx) {
		return nil, nil
	}
	var params mcp.ElicitationParams
	kind := ""
	switch {
	case m.mode == policy.ConfirmElicit && canElicitForm(ctx):
		v, ok := m.gate.Peek(confirm, tool, canonical)
		p, isPlan := v.(*engine.Plan)
		if !ok || !isPlan {
			return nil, nil // the engine says what is wrong with the token
		}
		kind, params = askForm, formQuestion(p)
	case m.Human() && approval.IsID(confirm) && m.canOpenURL(ctx):
		kind, params = askURL, m.urlQuestion(confirm)
	default:
		return nil, nil
	}
	state := m.asks.open(ask{fingerprint: gate.Fingerprint(tool, canonical), confirm: confirm, kind: kind, expires: m.now().Add(m.gate.TTL())}, m.now())
	if state == "" {
		return nil, refuse(CodeElicitationUnavailable, "walletgate has %d questions to the person outstanding and asks no more until they are answered or expire. Nothing was signed or sent. Answer or dismiss the open ones in your client, then call %s again.", maxAsks, tool)
	}
	return server.NewInputRequestBuilder(state).Elicit(answerKey, params).ToolResult(), nil
}
