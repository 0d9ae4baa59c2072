package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"

	"github.com/mark3labs/mcp-go/server"
)

// serveStdio serves MCP until stdin closes or ctx ends, through mcp-go's
// stdio transport (which answers every request, tools/list included, and
// writes each message in one Write). stdout carries JSON-RPC only; the
// library's own errors go to stderr. stdin's lines are bounded
// (lineLimiter).
func serveStdio(ctx context.Context, ms *server.MCPServer, stdin io.Reader, stdout, stderr io.Writer) error {
	return serveBounded(ctx, ms, newLineLimiter(stdin, maxMessageBytes), stdout, stderr)
}

// serveBounded is serveStdio over lines already bounded.
func serveBounded(ctx context.Context, ms *server.MCPServer, lines *lineLimiter, stdout, stderr io.Writer) error {
	ss := server.NewStdioServer(ms)
	ss.SetErrorLogger(log.New(stderr, "walletgate: mcp: ", 0))
	err := ss.Listen(ctx, lines, stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stdio: %w", err)
	}
	return nil
}
