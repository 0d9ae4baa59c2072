package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
	"github.com/walletgate/walletgate/tools/schemacheck"
)

// env is a dev chain with walletgate's MCP server and a connected client.
type env struct {
	lastTx string // the last transaction a helper confirmed
	t      *testing.T
	ctx    context.Context
	dev    *devnet.Devnet
	chain  *chain.Client
	mcp    *client.Client
	// schemas are the output schemas of the tools as the client listed
	// them; every result call receives is checked against its tool's.
	schemas *schemacheck.Set
}

func newEnv(t *testing.T, mutate ...func(*tools.Deps)) *env {
	t.Helper()
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return serverOn(t, d, mutate...)
}

// serverOn starts a fresh walletgate server (fresh caps and tokens) on an
// existing dev chain.
func serverOn(t *testing.T, d *devnet.Devnet, mutate ...func(*tools.Deps)) *env {
	t.Helper()
	return serverWithClient(t, d, nil, mutate...)
}

// serverWithClient is serverOn with client options (an elicitation handler).
func serverWithClient(t *testing.T, d *devnet.Devnet, opts []client.ClientOption, mutate ...func(*tools.Deps)) *env {
	t.Helper()
	ctx := context.Background()
	c, err := chain.NewFromRPC(ctx, d.RPC(), "embedded dev chain")
	require.NoError(t, err)
	t.Cleanup(c.Close)
	cfg, err := policy.Load(nil)
	require.NoError(t, err)
	deps := tools.Deps{Chain: c, Signer: signer.Dev(), Address: signer.DevAddress, Config: cfg}
	for _, m := range mutate {
		m(&deps)
	}
	if deps.Caps.Limits.PerTx == nil {
		deps.Caps, err = tools.ResolveCaps(ctx, c, deps.Config, tools.DevCaps)
		require.NoError(t, err)
	}
	mc, err := client.NewInProcessClientWithOptions(tools.NewMCPServer(deps), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { mc.Close() })
	require.NoError(t, mc.Start(ctx))
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "0"}
	_, err = mc.Initialize(ctx, init)
	require.NoError(t, err)
	return &env{t: t, ctx: ctx, dev: d, chain: c, mcp: mc, schemas: listedSchemas(t, ctx, mc)}
}

// wireTools is tools/list's answer exactly as it arrives, tool by tool: the
// Go client's mcp.Tool keeps only part of an output schema (a top-level
// oneOf is dropped), so schemas are read from the wire, as ajv reads them.
func wireTools(t *testing.T, ctx context.Context, mc *client.Client) []json.RawMessage {
	t.Helper()
	resp, err := mc.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(1 << 40)), Method: "tools/list"})
	require.NoError(t, err)
	require.Nil(t, resp.Error)
	var list struct {
		Tools []json.RawMessage `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(resp.Result, &list))
	return list.Tools
}

// listedSchemas compiles the output schemas of the tools a client lists, as
// they are on the wire.
func listedSchemas(t *testing.T, ctx context.Context, mc *client.Client) *schemacheck.Set {
	t.Helper()
	schemas := map[string]json.RawMessage{}
	for _, raw := range wireTools(t, ctx, mc) {
		var tool struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		require.NoError(t, json.Unmarshal(raw, &tool))
		require.NotEmpty(t, tool.OutputSchema, "%s declares no outputSchema", tool.Name)
		schemas[tool.Name] = tool.OutputSchema
	}
	set, err := schemacheck.Compile(schemas)
	require.NoError(t, err)
	return set
}

// call calls a tool with arguments given as raw JSON (so tests can send what
// a hostile client would) and returns the result.
func (e *env) call(tool string, argsJSON string) *mcp.CallToolResult {
	e.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = json.RawMessage(argsJSON)
	req.Params.RawArguments = json.RawMessage(argsJSON)
	res, err := e.mcp.CallTool(e.ctx, req)
	require.NoError(e.t, err)
	// Every answer, refusals included, is checked as a strict client (the
	// TypeScript SDK) checks it: a result its schema does not allow is an
	// error in such a client even when the action succeeded.
	require.NoError(e.t, e.schemas.Check(tool, res.StructuredContent, res.IsError), "%s %s: %s", tool, argsJSON, resultText(res))
	return res
}

// ok calls a tool, requires success and decodes its structured content.
func (e *env) ok(tool, argsJSON string, out any) string {
	e.t.Helper()
	res := e.call(tool, argsJSON)
	text := resultText(res)
	require.False(e.t, res.IsError, "%s %s: %s", tool, argsJSON, text)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(e.t, err)
	require.NoError(e.t, json.Unmarshal(b, out))
	return text
}

// refused calls a tool and requires a refusal with the code.
func (e *env) refused(tool, argsJSON, code string) string {
	e.t.Helper()
	res := e.call(tool, argsJSON)
	text := resultText(res)
	require.True(e.t, res.IsError, "%s %s should be refused, got: %s", tool, argsJSON, text)
	require.True(e.t, strings.HasPrefix(text, code+": "), "want code %s, got: %s", code, text)
	require.Nil(e.t, res.StructuredContent)
	return text
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// mustJSON renders v as JSON for building arguments.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func addr(hex string) common.Address { return common.HexToAddress(hex) }

// clock is a fake clock for TTL tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// listTools maps each tool's name to its amount argument's description (or "").
func (e *env) listTools() map[string]string {
	e.t.Helper()
	list, err := e.mcp.ListTools(e.ctx, mcp.ListToolsRequest{})
	require.NoError(e.t, err)
	out := map[string]string{}
	for _, tool := range list.Tools {
		desc := ""
		if p, ok := tool.InputSchema.Properties["amount"].(map[string]any); ok {
			desc, _ = p["description"].(string)
		}
		out[tool.Name] = desc
	}
	return out
}
