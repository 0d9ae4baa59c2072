package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
)

// serveLines runs serveStdio with these input lines, waits for answers lines
// (0: none), closes its stdin, and returns every line it wrote, by JSON-RPC
// id, once it has returned, and what it wrote on stderr.
func serveLines(t *testing.T, ms *server.MCPServer, lines []string, answers int) (map[string]string, string) {
	t.Helper()
	inR, inW := io.Pipe()
	out, errs := &lockedBuffer{}, &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- serveStdio(context.Background(), ms, inR, out, errs) }()
	for _, l := range lines {
		_, err := io.WriteString(inW, l+"\n")
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return strings.Count(out.String(), "\n") >= answers }, 10*time.Second, time.Millisecond)
	require.NoError(t, inW.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("serveStdio did not return after stdin closed")
	}
	require.Zero(t, out.overlaps.Load(), "writes to stdout overlapped")
	byID := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &m), "every line is one whole JSON-RPC message: %.200s", l)
		require.Equal(t, "2.0", m.JSONRPC)
		require.NotContains(t, byID, string(m.ID), "one answer per request")
		byID[string(m.ID)] = l
	}
	return byID, errs.String()
}

// lockedBuffer is a strings.Builder safe for concurrent use that also
// counts Writes that overlapped: on a pipe, two writers' lines could then
// interleave (writes over PIPE_BUF are not atomic).
type lockedBuffer struct {
	mu       sync.Mutex
	b        strings.Builder
	writing  atomic.Int32
	overlaps atomic.Int32
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	if l.writing.Add(1) > 1 {
		l.overlaps.Add(1)
	}
	defer l.writing.Add(-1)
	time.Sleep(time.Millisecond) // a slow reader
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func echoServer(opts ...server.ServerOption) *server.MCPServer {
	ms := server.NewMCPServer("t", "1", append([]server.ServerOption{server.WithToolCapabilities(false)}, opts...)...)
	for _, name := range []string{"b_echo", "a_echo"} {
		tool := mcp.NewToolWithRawSchema(name, "echoes <x> & \u2028 y", json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`))
		tool.RawOutputSchema = json.RawMessage(`{"type":"object"}`)
		ms.AddTool(tool, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo"), nil
		})
	}
	return ms
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

// Every request is answered by mcp-go's stdio transport, tools/list
// included (with the bytes its own HandleMessage gives, cursor or not); list
// answers and tool call answers, written at once, never share a line; and
// every request read before stdin closed is answered before serveStdio
// returns.
func TestServeStdioAnswersEveryRequestThroughMCPGo(t *testing.T) {
	ms := echoServer()
	lines := []string{initLine, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"c","method":"tools/list","params":{"cursor":"not base64!"}}`}
	for i := range 30 {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`, 100+i),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"a_echo","arguments":{}}}`, 200+i))
	}
	got, _ := serveLines(t, ms, lines, 3+60)
	require.Equal(t, 3+60, len(got), "every request answered")

	want := func(req string) string {
		b, err := json.Marshal(ms.HandleMessage(context.Background(), []byte(req)))
		require.NoError(t, err)
		return string(b)
	}
	require.Equal(t, want(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), got["2"])
	require.Contains(t, got["2"], `"name":"a_echo"`)
	require.Contains(t, got["2"], `echoes \u003cx\u003e \u0026 \u2028 y`)
	require.Equal(t, want(`{"jsonrpc":"2.0","id":"c","method":"tools/list","params":{"cursor":"not base64!"}}`), got[`"c"`])
	require.Contains(t, got[`"c"`], `"error"`, "mcp-go's own answer to a bad cursor")
	for i := range 30 {
		require.Equal(t, want(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`, 100+i)), got[fmt.Sprint(100+i)])
		require.Contains(t, got[fmt.Sprint(200+i)], `"text":"echo"`)
	}
}
