package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

// What a tools/list answer costs inside mcp-go, as a client's first one
// does at every cold start (docs/mcp-go-proposal.md): the handling (the
// hooks, the tool list) and the encoding (encoding/json over mcp-go's
// Tool.MarshalJSON), for the keyed server's tools; and "cached", what
// encoding the same answer costs when its bytes are kept (encoding/json
// still validates them once): the proposal's floor.
func BenchmarkToolsListAnswer(b *testing.B) {
	ctx := context.Background()
	d, err := devnet.Start(ctx, devnet.Options{})
	require.NoError(b, err)
	b.Cleanup(func() { d.Close() })
	c, err := chain.NewFromRPC(ctx, d.RPC(), "embedded dev chain")
	require.NoError(b, err)
	b.Cleanup(c.Close)
	cfg, err := policy.Load(nil)
	require.NoError(b, err)
	deps := tools.Deps{Chain: c, Signer: signer.Dev(), Address: signer.DevAddress, Config: cfg}
	deps.Caps, err = tools.ResolveCaps(ctx, c, cfg, tools.DevCaps)
	require.NoError(b, err)
	ms := tools.NewMCPServer(deps)
	ms.HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}`))
	list := json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	resp := ms.HandleMessage(ctx, list)
	out, err := json.Marshal(resp)
	require.NoError(b, err)
	b.Run("handle", func(b *testing.B) {
		for b.Loop() {
			ms.HandleMessage(ctx, list)
		}
	})
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(out)))
		for b.Loop() {
			if _, err := json.Marshal(resp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		b.SetBytes(int64(len(out)))
		cached := json.RawMessage(out)
		for b.Loop() {
			if _, err := json.Marshal(cached); err != nil {
				b.Fatal(err)
			}
		}
	})
}
