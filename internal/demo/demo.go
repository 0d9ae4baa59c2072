// Package demo is walletgate demo: the server on the embedded dev chain,
// an MCP client connected in-process, and what each tool returns printed
// for a person — a send previewed and confirmed, a swap, a permit, an x402
// payment end to end, and the refusals.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/internal/app"
	"github.com/walletgate/walletgate/policy"
)

// demoRecipient receives the demo's transfers.
var demoRecipient = common.HexToAddress("0x00000000000000000000000000000000000d3e30")

// Run runs walletgate's MCP server (version, as the build names itself) on
// the dev chain, connects an MCP client to it in-process, and prints what
// each tool returns, for a person, on stdout. ctx ends it; its cleanup
// stops the dev chain (which would stop anyway when its stdin pipe closes).
func Run(ctx context.Context, version string, stdout io.Writer) error {
	cfg, err := policy.Load(nil) // the demo ignores the environment: it is the same everywhere
	if err != nil {
		return err
	}
	// The x402 resource's listener comes first, so that its host can be
	// pinned to its payee as an operator would (WALLETGATE_ALLOW_PAY_TO).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	cfg.AllowPayTo = policy.PayeesAllowed{Pins: []policy.HostPin{{Host: ln.Addr().String(), PayTo: demoPayee}}}
	a, err := app.New(ctx, app.Options{Config: cfg, Dev: true, Logger: slog.New(slog.DiscardHandler), Version: version})
	if err != nil {
		return err
	}
	defer a.Close()
	deps := a.Deps()
	party, err := newDemoParty(deps.Chain)
	if err != nil {
		return err
	}
	resource := serveDemoResource(ln, party)
	defer resource.close()
	ms := a.Server().MCP(deps.Version)
	mc, err := client.NewInProcessClient(ms)
	if err != nil {
		return err
	}
	defer mc.Close()
	if err := mc.Start(ctx); err != nil {
		return err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "walletgate-demo", Version: version}
	res, err := mc.Initialize(ctx, init)
	if err != nil {
		return err
	}
	list, err := mc.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return err
	}
	var names []string
	for _, t := range list.Tools {
		names = append(names, t.Name)
	}

	p := &demoPrinter{w: stdout, ctx: ctx, c: mc}
	fmt.Fprintf(stdout, "walletgate demo: %s %s on the embedded dev chain (chain id %d, walletgate-devnet on 127.0.0.1; nothing leaves this machine).\n",
		res.ServerInfo.Name, res.ServerInfo.Version, app.DevChainID)
	fmt.Fprintf(stdout, "An MCP client is connected in-process; the server offers: %s.\n", strings.Join(names, ", "))

	p.call("Who am I?", "wallet_address", nil)
	p.call("What does the wallet hold?", "wallet_balance", nil)
	p.call("What may the assistant do?", "wallet_policy", nil)

	to := demoRecipient.Hex()
	send := map[string]any{"to": to, "amount": "25", "asset": "USDT"}
	preview := p.call("Send 25 USDT: the first call only previews (nothing is signed)", "wallet_send", send)
	token, _ := preview["confirm_token"].(string)
	confirm := map[string]any{"to": to, "amount": "25", "asset": "USDT", "confirm": token}
	done := p.call("The person agrees: the same call again, plus confirm", "wallet_send", confirm)
	tx, _ := done["tx_hash"].(string)
	p.call("Independently: did that transfer arrive as previewed?", "wallet_verify_tx", map[string]any{
		"tx": tx, "expected_to": to, "expected_amount": "25", "asset": "USDT",
	})
	p.call("The recipient's balances", "wallet_balance", map[string]any{"address": to, "tokens": []string{"USDT", "DAI"}})
	p.call("Replaying the same confirmation is refused", "wallet_send", confirm)

	eth := map[string]any{"to": to, "amount": "0.5"}
	preview = p.call("Send 0.5 ETH: preview", "wallet_send", eth)
	token, _ = preview["confirm_token"].(string)
	p.call("A confirmation for different arguments is refused, and spends the token", "wallet_send", map[string]any{"to": to, "amount": "0.6", "confirm": token})
	p.call("…so the original confirm no longer works either: ask for a new preview", "wallet_send", map[string]any{"to": to, "amount": "0.5", "confirm": token})

	if deps.SwapsOff != "" {
		fmt.Fprintf(stdout, "\n(%s)\n", deps.SwapsOff)
	} else {
		p.call("How much WETH would 50 USDT buy? (a read: nothing is signed)", "wallet_swap_quote", map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "50"})
		swap := map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "50", "slippage_bps": 50}
		preview = p.call("Swap 50 USDT for WETH: the preview lists every transaction (an exact approval, then the swap)", "wallet_swap", swap)
		token, _ = preview["confirm_token"].(string)
		swap["confirm"] = token
		p.call("Confirmed: both transactions are sent in order and the output is verified", "wallet_swap", swap)
	}
	p.demoPermit(party)
	p.demoX402(resource)
	p.call("More than the per-transaction cap is refused at preview", "wallet_send", map[string]any{"to": to, "amount": "150", "asset": "USDT"})
	p.call("An amount as a JSON number is refused", "wallet_send", map[string]any{"to": to, "amount": 25, "asset": "USDT"})
	p.call("A mistyped address checksum is refused", "wallet_send", map[string]any{"to": "0x00000000000000000000000000000000000D3e30", "amount": "1", "asset": "USDT"})
	p.call("A bad transaction hash is refused with a code and a way out", "wallet_verify_tx", map[string]any{"tx": "0x1234"})
	p.call("The caps now", "wallet_policy", nil)
	p.call("The wallet's balances now", "wallet_balance", nil)
	return p.err
}

type demoPrinter struct {
	w   io.Writer
	ctx context.Context
	c   *client.Client
	err error
}

// call calls a tool, prints its text, and returns its structured content.
func (p *demoPrinter) call(title, tool string, args map[string]any) map[string]any {
	if p.err != nil {
		return nil
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	argText := "{}"
	if args != nil {
		b, _ := json.Marshal(args)
		argText = string(b)
	}
	fmt.Fprintf(p.w, "\n── %s\n▶ %s %s\n", title, tool, argText)
	res, err := p.c.CallTool(p.ctx, req)
	if err != nil {
		p.err = fmt.Errorf("%s: %w", tool, err)
		return nil
	}
	prefix := "  "
	if res.IsError {
		prefix = "  ✗ "
	}
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			fmt.Fprintf(p.w, "%s%s\n", prefix, strings.ReplaceAll(t.Text, "\n", "\n  "))
		}
	}
	out, _ := res.StructuredContent.(map[string]any)
	return out
}
