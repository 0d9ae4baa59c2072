package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/walletgate/walletgate/tools"
)

// serveStdio serves MCP until stdin closes or ctx ends. stdout carries
// JSON-RPC only; the library's own errors go to stderr.
func serveStdio(ctx context.Context, ms *server.MCPServer, stdin io.Reader, stdout, stderr io.Writer) error {
	errs := log.New(stderr, "walletgate: mcp: ", 0)
	ss := server.NewStdioServer(ms)
	ss.SetErrorLogger(errs)
	out := &lineWriter{w: stdout}
	in := newLineLimiter(stdin, maxMessageBytes)
	l := &lister{ms: ms, out: out, errs: errs}
	var cancel context.CancelFunc = func() {}
	ss.SetContextFunc(func(ctx context.Context) context.Context {
		// The session's context, before the first line is read; ended
		// when serving ends, as mcp-go ends its own requests'.
		l.ctx, cancel = context.WithCancel(ctx)
		return ctx
	})
	in.divert = l.divert
	err := ss.Listen(ctx, in, out)
	l.stop()
	cancel()
	l.wg.Wait()
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stdio: %w", err)
	}
	return nil
}

// lineWriter serialises writes to stdout: the stdio transport writes each
// message (a line) in one Write, and so does lister.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// lister takes tools/list requests off the read path and answers each, as
// mcp-go's transport does a request, on its own goroutine (so a request
// still races the initialize before it exactly as it would there), through
// mcp-go's own handling (the handshake check, the hooks, the tool list); it
// writes the answer with tools.EncodeListResponse: the same bytes mcp-go
// would write, without the milliseconds encoding/json spends re-validating
// the schemas at every cold start. Anything else, and a tools/list with a
// cursor, goes on to mcp-go.
type lister struct {
	ms   *server.MCPServer
	ctx  context.Context
	out  io.Writer
	errs *log.Logger

	mu      sync.Mutex
	stopped bool           // serving ended: what is still read is dropped, as mcp-go drops it
	wg      sync.WaitGroup // answers under way
}

func (l *lister) divert(line []byte) bool {
	if l.ctx == nil || !bytes.Contains(line, []byte(`"tools/list"`)) {
		return false
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor *string `json:"cursor"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(line, &req) != nil || req.Method != string(mcp.MethodToolsList) ||
		len(req.ID) == 0 || string(req.ID) == "null" || req.Params.Cursor != nil ||
		req.Result != nil || req.Error != nil { // a response is mcp-go's to route
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return true
	}
	line = bytes.Clone(line) // the reader reuses its buffer
	l.wg.Go(func() {
		resp := l.answer(line, req.ID)
		if resp == nil {
			return // mcp-go answers nothing, so neither does this
		}
		b, ok := tools.EncodeListResponse(resp)
		if !ok {
			var err error
			if b, err = json.Marshal(resp); err != nil {
				l.errs.Printf("Error writing response: %v", err)
				return
			}
		}
		if _, err := l.out.Write(append(b, '\n')); err != nil {
			l.errs.Printf("Error writing response: %v", err)
		}
	})
	return true
}

// stop drops every later line: serving has ended.
func (l *lister) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
}

// answer is mcp-go's answer to the request, or, should it panic, the
// internal error mcp-go's transport would answer.
func (l *lister) answer(line []byte, id json.RawMessage) (resp mcp.JSONRPCMessage) {
	defer func() {
		if r := recover(); r != nil {
			l.errs.Printf("panic recovered in stdio message handler: %v", r)
			var v any
			_ = json.Unmarshal(id, &v)
			resp = mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(v),
				Error: mcp.NewJSONRPCErrorDetails(mcp.INTERNAL_ERROR, fmt.Sprintf("internal panic: %v", r), nil)}
		}
	}()
	return l.ms.HandleMessage(l.ctx, json.RawMessage(line))
}
