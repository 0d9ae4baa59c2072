// Command floor is the benchmark's floor: the least an MCP wallet server in Go
// can do at start-up — link mcp-go and go-ethereum's client packages, dial
// WALLETGATE_RPC, check eth_chainId once, and serve one read tool over stdio.
// walletgate-bench measures walletgate's cold start and idle memory against
// it, side by side in the same run. It is not a product; it holds no key.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	c, err := ethclient.DialContext(ctx, os.Getenv("WALLETGATE_RPC"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor: dial:", err)
		os.Exit(1)
	}
	id, err := c.ChainID(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor: eth_chainId:", err)
		os.Exit(1)
	}
	s := server.NewMCPServer("floor", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("wallet_chain_id", mcp.WithDescription("The node's chain id."), mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(id.String()), nil
		})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}
