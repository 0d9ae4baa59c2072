package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

// demoRecipient receives the demo's transfers.
var demoRecipient = common.HexToAddress("0x00000000000000000000000000000000000d3e30")

// cmdDemo runs walletgate's MCP server on the dev chain, connects an MCP
// client to it in-process, and prints what each tool returns, for a person.
func cmdDemo(argv []string, stdout, stderr io.Writer) error {
	if len(argv) > 0 {
		return usagef("demo takes no arguments")
	}
	ctx := context.Background()
	cfg, err := policy.Load(nil) // the demo ignores the environment: it is the same everywhere
	if err != nil {
		return err
	}
	d, c, err := startDev(ctx, cfg)
	if err != nil {
		return err
	}
	defer d.Close()
	defer c.Close()

	ms := tools.NewMCPServer(tools.Deps{Chain: c, Signer: signer.Dev(), Address: signer.DevAddress, Config: cfg, Version: versionString()})
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
	init.Params.ClientInfo = mcp.Implementation{Name: "walletgate-demo", Version: versionString()}
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
	fmt.Fprintf(stdout, "walletgate demo: %s %s on the embedded dev chain (chain id %d, in-process; nothing leaves this machine).\n",
		res.ServerInfo.Name, res.ServerInfo.Version, devnet.ChainID)
	fmt.Fprintf(stdout, "An MCP client is connected in-process; the server offers: %s.\n", strings.Join(names, ", "))

	p.call("Who am I?", "wallet_address", nil)
	p.call("What does the wallet hold?", "wallet_balance", nil)

	// A transfer made directly on the chain, outside walletgate, to have
	// something real to verify.
	rcpt, err := d.SendAsDev(ctx, &d.Contracts.USDT, nil, chain.TransferData(demoRecipient, big.NewInt(25_000_000)), 300_000)
	if err != nil {
		return fmt.Errorf("demo transfer: %w", err)
	}
	fmt.Fprintf(stdout, "\n(The demo itself now sends 25 USDT from the dev account to %s, directly on the chain: tx %s.)\n", demoRecipient.Hex(), rcpt.TxHash.Hex())
	p.call("Did that transfer arrive as expected?", "wallet_verify_tx", map[string]any{
		"tx": rcpt.TxHash.Hex(), "expected_to": demoRecipient.Hex(), "expected_amount": "25", "asset": "USDT",
	})
	p.call("And was it 26 USDT? (it was not)", "wallet_verify_tx", map[string]any{
		"tx": rcpt.TxHash.Hex(), "expected_to": demoRecipient.Hex(), "expected_amount": "26", "asset": "USDT",
	})
	p.call("The recipient's balances", "wallet_balance", map[string]any{"address": demoRecipient.Hex(), "tokens": []string{"USDT", "DAI"}})
	p.call("A hash nobody sent", "wallet_verify_tx", map[string]any{"tx": "0x" + strings.Repeat("ab", 32)})
	p.call("Bad input is refused with a code and a way out", "wallet_verify_tx", map[string]any{"tx": "0x1234"})
	p.call("An amount as a JSON number is refused too", "wallet_verify_tx", map[string]any{"tx": rcpt.TxHash.Hex(), "expected_amount": 25})
	p.call("What may the assistant do?", "wallet_policy", nil)
	return p.err
}

type demoPrinter struct {
	w   io.Writer
	ctx context.Context
	c   *client.Client
	err error
}

func (p *demoPrinter) call(title, tool string, args map[string]any) {
	if p.err != nil {
		return
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
		return
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
}
