package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/tools"
	"github.com/walletgate/walletgate/tools/confirm"
)

// In service mode the model is told what the person does, never a command,
// an address or a path it could use itself.
func TestServiceModeNamesOnlyWhatThePersonDoes(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	hub := confirm.NewApprovals(nil, "on the approval page") // as walletgate service run builds it
	e := serverOn(t, d, withJournal(t, dir, "svc", ""), func(deps *tools.Deps) {
		deps.Config.Confirm = "human"
		deps.Approvals = hub
		deps.Service = true
	})
	p, text := e.humanPreview(map[string]any{"to": addr("0x00000000000000000000000000000000000000f5").Hex(), "amount": "1", "asset": "USDT"})
	id := p.Approval.ID
	require.Contains(t, text, "ask the person to approve preview "+id+" on the approval page")
	require.Contains(t, p.Approval.How, "ask the person to approve preview "+id+" on the approval page")
	args := map[string]any{"to": addr("0x00000000000000000000000000000000000000f5").Hex(), "amount": "1", "asset": "USDT", "confirm": "123-456"}
	pending := e.refused("wallet_send", mustJSON(args), "APPROVAL_PENDING")
	require.Contains(t, pending, "Ask them to review it on the approval page")
	init, err := e.mcp.Initialize(e.ctx, mcp.InitializeRequest{})
	require.NoError(t, err)
	var pol map[string]any
	e.ok("wallet_policy", `{}`, &pol)
	raw, err := json.Marshal(pol)
	require.NoError(t, err)
	for what, s := range map[string]string{"preview": text, "approval": p.Approval.How, "instructions": init.Instructions, "refusal": pending, "wallet_policy": string(raw)} {
		for _, leak := range []string{"walletgate approvals", "state directory", "walletgate's log", "`", "http://", dir} {
			require.NotContains(t, s, leak, "%s in service mode names %q", what, leak)
		}
	}
}
