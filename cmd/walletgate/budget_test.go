package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// What an assistant is handed before it does anything: the tools/list
// answer, which a client puts in the model's context. Its budget, measured
// on the bytes walletgate writes on stdout, with every opt-in that lists
// more (wallet_call, uncapped tokens, any typed data) and in both the token
// mode and the mode with the longest confirm descriptions (human, with a
// threshold):
//
//   - tool descriptions plus input schemas (what the model reads to call a
//     tool) at most 8 KB;
//   - the whole answer at most 40 KB.
//
// Before issue 28 it was 102 KB (12.9 KB of descriptions and input
// schemas) with every opt-in; BENCHMARKS.md has the figures.
func TestToolListBudget(t *testing.T) {
	const (
		maxDescribed = 8_000
		maxList      = 40_000
	)
	optIns := []string{"WALLETGATE_ALLOW_CALLS=any", "WALLETGATE_ALLOW_UNCAPPED_TOKENS=true", "WALLETGATE_ALLOW_TYPED_DATA=any"}
	for _, mode := range []struct {
		name string
		env  []string
	}{
		{"token", nil},
		{"human with a threshold", []string{"WALLETGATE_CONFIRM=human", "WALLETGATE_HUMAN_ABOVE=ETH=0.01"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			c := startServer(t, cleanEnv(append(optIns, mode.env...)...), "--dev")
			c.initialize()
			line := c.rawAnswer(`{"jsonrpc":"2.0","id":"budget","method":"tools/list"}`, `"budget"`)
			var msg struct {
				Result struct {
					Tools []struct {
						Name        string          `json:"name"`
						Description json.RawMessage `json:"description"`
						InputSchema json.RawMessage `json:"inputSchema"`
					} `json:"tools"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal([]byte(line), &msg))
			var names []string
			described := 0
			for _, tool := range msg.Result.Tools {
				names = append(names, tool.Name)
				described += len(tool.Description) + len(tool.InputSchema)
			}
			require.Contains(t, names, "wallet_call", "every opt-in is on")
			require.Contains(t, names, "wallet_swap", "the swap tools are listed")
			t.Logf("tools/list: %d tools, %d bytes; descriptions + input schemas %d bytes", len(names), len(line), described)
			require.LessOrEqual(t, described, maxDescribed, "descriptions + input schemas")
			require.LessOrEqual(t, len(line), maxList, "the whole tools/list answer")
		})
	}
}

// The caps are stated once, where a model reads them before it writes (the
// server's instructions), and wallet_policy answers each with what is used
// and what remains; a write tool's description only says that they apply.
func TestCapsAreStatedOnce(t *testing.T) {
	c := startServer(t, cleanEnv(), "--dev")
	init := c.initialize()
	const usdt = "USDT 100 / 500 / 1000"
	require.Contains(t, init["instructions"], "Caps (per transaction / per session / per day): ")
	require.Contains(t, init["instructions"], usdt)
	line := c.rawAnswer(`{"jsonrpc":"2.0","id":"caps","method":"tools/list"}`, `"caps"`)
	require.NotContains(t, line, usdt, "no tool description repeats the caps")
	require.NotContains(t, line, "at most 100 per transaction", "no tool description repeats the caps")
	require.Contains(t, line, "counts against the caps (see wallet_policy)")

	policy := text(c.callTool("wallet_policy", map[string]any{}))
	require.Contains(t, policy, "USDT per transaction: 0 / 100, 100 left")
}

// rawAnswer writes one request line and returns the answer's line exactly as
// walletgate wrote it (the one whose id is id, as JSON).
func (c *stdioClient) rawAnswer(request, id string) string {
	c.t.Helper()
	c.send(request)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-c.lines:
			require.True(c.t, ok, "server closed stdout; stderr:\n%s", c.stderr.String())
			if strings.HasPrefix(line, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,`, id)) {
				return line
			}
		case <-deadline:
			c.t.Fatalf("no answer to %s; stderr:\n%s", request, c.stderr.String())
			return ""
		}
	}
}
