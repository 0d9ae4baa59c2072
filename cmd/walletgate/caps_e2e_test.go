package main_test

// Every operator limit binds every write kind (issue 25): every capped asset
// has every window, and the refusal says what fits without coaching.

import (
	"bytes"
	"context"
	"math/big"
	"os/exec"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/policy"
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

// An ETH send over its per-transaction cap — exactly the cap, since the fee
// counts — is refused with the most that fits now, the max fee taken out,
// and no coaching; that amount then previews and confirms, and one wei more
// is refused.
func TestCapRefusalSaysWhatFitsAndNeverCoaches(t *testing.T) {
	info := startDevnet(t)
	view := newChainView(t, info)
	c := startServer(t, cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile,
		"WALLETGATE_CAP_PER_TX=ETH=0.01", "WALLETGATE_CAP_PER_SESSION=ETH=0.05", "WALLETGATE_CAP_PER_DAY=ETH=0.1"))
	c.initialize()
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e26")
	send := func(amount string) map[string]any {
		return c.callTool("wallet_send", map[string]any{"to": to.Hex(), "amount": amount, "asset": "ETH"})
	}
	// The fee of a plain send, as its preview states it, and the refusal
	// at the same block (the dev chain's setup may still be mining when
	// walletgate starts: fees move with its blocks).
	var (
		fee, fits *big.Int
		feeStr    string
		msg       string
	)
	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 10, "the chain kept moving")
		before, err := view.node.BlockNumber(context.Background())
		require.NoError(t, err)
		small := send("0.001")
		require.NotEqual(t, true, small["isError"], text(small))
		feeStr = small["structuredContent"].(map[string]any)["preview"].(map[string]any)["max_fee"].(string)
		fee, err = policy.ParseAmount(feeStr, 18)
		require.NoError(t, err)
		require.Positive(t, fee.Sign())
		fits = new(big.Int).Sub(big.NewInt(1e16), fee)
		res := send("0.01")
		require.Equal(t, "CAP_EXCEEDED", refusalCode(res), text(res))
		msg = text(res)
		after, err := view.node.BlockNumber(context.Background())
		require.NoError(t, err)
		if before == after {
			break
		}
	}
	for _, s := range []string{
		"this needs up to " + policy.FormatAmount(new(big.Int).Add(big.NewInt(1e16), fee), 18) + " ETH (0.01 ETH plus a max network fee of " + feeStr + " ETH)",
		"more than its per transaction cap of 0.01 ETH",
		"At most " + policy.FormatAmount(fits, 18) + " ETH fits now (the max network fee of this write, " + feeStr + " ETH, counts too)",
		"Caps are the operator's limits (WALLETGATE_CAP_PER_TX)",
	} {
		require.Contains(t, msg, s)
	}
	require.NotContains(t, strings.ToLower(msg), "split", "a refusal never coaches a way around the cap")
	require.NotContains(t, strings.ToLower(msg), "smaller")

	over := send(policy.FormatAmount(new(big.Int).Add(fits, big.NewInt(1)), 18))
	require.Equal(t, "CAP_EXCEEDED", refusalCode(over), "one wei more than fits: %s", text(over))
	args := map[string]any{"to": to.Hex(), "amount": policy.FormatAmount(fits, 18), "asset": "ETH"}
	preview := c.callTool("wallet_send", args)
	require.NotEqual(t, true, preview["isError"], "what the refusal said fits: %s", text(preview))
	args["confirm"] = preview["structuredContent"].(map[string]any)["confirm_token"]
	res := c.callTool("wallet_send", args)
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	got, err := view.node.BalanceAt(context.Background(), to, nil)
	require.NoError(t, err)
	require.Equal(t, fits, got, "on chain: exactly the amount that fits")
}
