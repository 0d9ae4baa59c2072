package main_test

// Every operator limit binds every write kind (issue 25): every capped asset
// has every window, and the refusal says what fits without coaching.

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// capRows is wallet_policy's caps of one symbol, by window: "limit used
// remaining".
func capRows(t *testing.T, c *stdioClient, symbol string) map[string]string {
	t.Helper()
	pol := c.callTool("wallet_policy", map[string]any{})["structuredContent"].(map[string]any)
	out := map[string]string{}
	for _, cp := range pol["caps"].([]any) {
		m := cp.(map[string]any)
		if m["symbol"] == symbol {
			out[m["window"].(string)] = m["limit"].(string) + " " + m["used"].(string) + " " + m["remaining"].(string)
		}
	}
	return out
}

// A cap in one window (the form the Claude Desktop bundle suggested) refuses
// to start, naming the asset, the windows it lacks and the line to write;
// with every window named (one of them explicitly unlimited) the day cap
// binds the token, on chain.
func TestACapInOneWindowRefusesToStart(t *testing.T) {
	info := startDevnet(t)
	base := []string{"WALLETGATE_RPC=" + info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE=" + info.KeyFile}

	cmd := exec.Command(binary)
	cmd.Env = withStateDir(t, cleanEnv(append(base, "WALLETGATE_CAP_PER_TX=USDT=25")...))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.Error(t, cmd.Run(), "a token capped per transaction only must not start: %s", stderr.String())
	require.Empty(t, stdout.String())
	for _, s := range []string{
		"USDT is in WALLETGATE_CAP_PER_TX but missing from WALLETGATE_CAP_PER_SESSION (not set, so its default ETH=0.05 applies) and WALLETGATE_CAP_PER_DAY (not set, so its default ETH=0.1 applies)",
		"ETH is in WALLETGATE_CAP_PER_SESSION and WALLETGATE_CAP_PER_DAY but missing from WALLETGATE_CAP_PER_TX",
		"WALLETGATE_CAP_PER_DAY=ETH=0.1,USDT=<amount>", "USDT=100", "USDT=unlimited",
	} {
		require.Contains(t, stderr.String(), s)
	}

	view := newChainView(t, info)
	c := startServer(t, cleanEnv(append(base, "WALLETGATE_CAP_PER_TX=ETH=0.01,USDT=25",
		"WALLETGATE_CAP_PER_SESSION=ETH=0.05,USDT=unlimited", "WALLETGATE_CAP_PER_DAY=ETH=0.1,USDT=40")...))
	c.initialize()
	require.Equal(t, map[string]string{"per transaction": "25 0 25", "per day": "40 0 40"}, capRows(t, c, "USDT"),
		"USDT: per transaction and per day, no session row (unlimited, as written)")
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e25")
	args := map[string]any{"to": to.Hex(), "amount": "25", "asset": "USDT"}
	args["confirm"] = c.callTool("wallet_send", args)["structuredContent"].(map[string]any)["confirm_token"]
	res := c.callTool("wallet_send", args)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	res = c.callTool("wallet_send", map[string]any{"to": to.Hex(), "amount": "20", "asset": "USDT"})
	require.Equal(t, "CAP_EXCEEDED", refusalCode(res), text(res))
	require.Contains(t, text(res), "per day")
	require.Equal(t, "25000000", view.usdtOf(to).String(), "on chain: the first send only")
	require.Equal(t, map[string]string{"per transaction": "25 0 25", "per day": "40 25 15"}, capRows(t, c, "USDT"))
}
