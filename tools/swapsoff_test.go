package tools_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/tools"
)

// The dev chain without its Uniswap artifacts: the swap tools are listed and
// refuse with a code and the step that turns swaps on — a client that calls
// them never gets a protocol error for an unknown tool.
func TestSwapsOffListsSwapToolsThatRefuseWithTheStep(t *testing.T) {
	const step = "swaps are off: run the install step"
	e := newEnv(t, func(d *tools.Deps) { d.SwapsOff = step })
	list := e.listTools()
	require.Contains(t, list, "wallet_swap_quote")
	require.Contains(t, list, "wallet_swap")
	before := e.state()
	for _, tool := range []string{"wallet_swap_quote", "wallet_swap"} {
		text := e.refused(tool, `{"token_in":"USDT","token_out":"WETH","amount_in":"1"}`, "SWAPS_UNAVAILABLE")
		require.Contains(t, text, step)
	}
	require.Equal(t, before, e.state())
}
