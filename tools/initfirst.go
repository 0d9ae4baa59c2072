package tools

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// initFirst refuses, with a JSON-RPC error, a legacy-era request (one whose
// _meta names no 2026-07-28-era protocol version) that arrives on a session
// before initialize was answered there: those protocol versions begin with
// initialize, and mcp-go serves such requests anyway. A 2026-07-28-era
// request carries its version and capabilities in _meta and needs no
// handshake. ping is allowed before initialize, as the specification allows.
//
// A session counts as initialized once its initialize has been handled (not
// at notifications/initialized, which a client sends without waiting and
// which mcp-go may handle after the next request): mcp-go marks the session
// then, and done remembers it for requests that come without a session.
// Safe for concurrent use.
type initFirst struct {
	done sync.Map // session id ("" without a session) → struct{}
}

// errNotInitialized is the refusal; mcp-go answers it as -32600 (invalid
// request) with this message.
var errNotInitialized = errors.New("initialize first: this request names no 2026-07-28 protocol version in params._meta, so it belongs to a protocol version that begins with the initialize request; send initialize, then notifications/initialized, then this request")

func sessionKey(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}

func (h *initFirst) hooks() *server.Hooks {
	hooks := &server.Hooks{}
	hooks.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, _ *mcp.InitializeResult) {
		h.done.Store(sessionKey(ctx), struct{}{})
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		h.done.Delete(s.SessionID())
	})
	hooks.AddOnRequestInitialization(func(ctx context.Context, _ any, message any) error {
		raw, ok := message.(json.RawMessage)
		if !ok {
			return nil // not a wire message: nothing to judge
		}
		var req struct {
			Method string `json:"method"`
			Params struct {
				Meta *mcp.Meta `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &req) != nil {
			return nil // malformed: the method's own parser answers it
		}
		switch {
		case req.Method == string(mcp.MethodInitialize), req.Method == string(mcp.MethodPing):
			return nil
		case mcp.IsModernProtocol(req.Params.Meta.ProtocolVersion()):
			return nil
		}
		if s := server.ClientSessionFromContext(ctx); s != nil && s.Initialized() {
			return nil // mcp-go marks a session at initialize (and at a 2026-07-28-era request)
		}
		if _, ok := h.done.Load(sessionKey(ctx)); ok {
			return nil
		}
		return errNotInitialized
	})
	return hooks
}
