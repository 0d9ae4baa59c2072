package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// serveStdio serves MCP until stdin closes or ctx ends, through mcp-go's
// stdio transport (which answers every request, tools/list included).
// stdout carries JSON-RPC only; the library's own errors go to stderr.
// stdin's lines are bounded (lineLimiter).
func serveStdio(ctx context.Context, ms *server.MCPServer, stdin io.Reader, stdout, stderr io.Writer) error {
	ss := server.NewStdioServer(ms)
	ss.SetErrorLogger(log.New(stderr, "walletgate: mcp: ", 0))
	err := ss.Listen(ctx, newLineLimiter(stdin, maxMessageBytes), &lineWriter{w: stdout})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stdio: %w", err)
	}
	return nil
}

// lineWriter serialises writes to stdout: the stdio transport writes each
// message (a line) in one Write, but not all of them under one lock (a
// request to the client, such as elicitation, is written beside answers).
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
