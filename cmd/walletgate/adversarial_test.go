package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"
)

// walletgateBehindProxy runs walletgate against `walletgate devnet` through
// a fault-injecting proxy.
func walletgateBehindProxy(t *testing.T, extraEnv ...string) (*stdioClient, *rpcProxy) {
	t.Helper()
	info := startDevnet(t)
	proxy := newRPCProxy(t, info.RPC)
	env := append([]string{"WALLETGATE_RPC=" + proxy.srv.URL, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE=" + info.KeyFile,
		"WALLETGATE_CAP_PER_TX=ETH=1,USDT=100", "WALLETGATE_CAP_PER_SESSION=ETH=2,USDT=200", "WALLETGATE_CAP_PER_DAY=ETH=2,USDT=200"}, extraEnv...)
	c := startServer(t, cleanEnv(env...))
	c.initialize()
	return c, proxy
}

func policyCaps(t *testing.T, c *stdioClient) string {
	t.Helper()
	b, err := json.Marshal(c.callTool("wallet_policy", map[string]any{})["structuredContent"].(map[string]any)["caps"])
	require.NoError(t, err)
	return string(b)
}

func TestHugeGasEstimateIsRefused(t *testing.T) {
	c, proxy := walletgateBehindProxy(t)
	capsBefore := policyCaps(t, c)
	proxy.set("eth_estimateGas", json.RawMessage(`"0x3b9aca00"`)) // a billion gas
	res := c.callTool("wallet_send", map[string]any{"to": "0x00000000000000000000000000000000000a0001", "amount": "1", "asset": "USDT"})
	require.Equal(t, true, res["isError"])
	require.True(t, strings.HasPrefix(text(res), "FEE_TOO_HIGH: "), text(res))
	require.Equal(t, capsBefore, policyCaps(t, c))
	require.Zero(t, proxy.count("eth_sendRawTransaction"))
}

func TestHugeFeeIsCaughtByTheETHCap(t *testing.T) {
	c, proxy := walletgateBehindProxy(t)
	capsBefore := policyCaps(t, c)
	proxy.set("eth_maxPriorityFeePerGas", json.RawMessage(`"0x38d7ea4c68000"`)) // 1,000,000 gwei tip
	res := c.callTool("wallet_send", map[string]any{"to": "0x00000000000000000000000000000000000a0002", "amount": "1", "asset": "USDT"})
	require.Equal(t, true, res["isError"])
	require.True(t, strings.HasPrefix(text(res), "CAP_EXCEEDED: "), text(res))
	require.Contains(t, text(res), "network fee")
	require.Equal(t, capsBefore, policyCaps(t, c))
	require.Zero(t, proxy.count("eth_sendRawTransaction"))
}

func TestChainIDChangingUnderARunningServer(t *testing.T) {
	c, proxy := walletgateBehindProxy(t)
	args := map[string]any{"to": "0x00000000000000000000000000000000000a0003", "amount": "1", "asset": "USDT"}
	preview := c.callTool("wallet_send", args)
	token := preview["structuredContent"].(map[string]any)["confirm_token"].(string)

	proxy.set("eth_chainId", json.RawMessage(`"0x1"`)) // the node is now "mainnet"
	capsBefore := policyCaps(t, c)
	args["confirm"] = token
	res := c.callTool("wallet_send", args)
	require.Equal(t, true, res["isError"])
	require.True(t, strings.HasPrefix(text(res), "CHAIN_CHANGED: "), text(res))
	delete(args, "confirm")
	res = c.callTool("wallet_send", args)
	require.True(t, strings.HasPrefix(text(res), "CHAIN_CHANGED: "), text(res))
	require.Equal(t, capsBefore, policyCaps(t, c))
	require.Zero(t, proxy.count("eth_sendRawTransaction"))
}

// TestCanarySecretsNeverLeak runs a whole session — reads, a preview, a
// confirmed send, refusals, a node failing — with canary secrets in the
// keystore password, the key and the RPC URL, at debug log level, and scans
// everything walletgate wrote.
func TestCanarySecretsNeverLeak(t *testing.T) {
	info := startDevnet(t)
	proxy := newRPCProxy(t, info.RPC)
	const (
		password = "pw-canary-7f3a9c"
		user     = "user-canary-1b2c"
		urlPass  = "urlpw-canary-4d5e"
		pathKey  = "pathkey-canary-6f7a"
		queryKey = "querykey-canary-8b9c"
	)
	keyBytes, err := os.ReadFile(info.KeyFile)
	require.NoError(t, err)
	keyHex := strings.TrimSpace(string(keyBytes))
	key, err := crypto.HexToECDSA(keyHex)
	require.NoError(t, err)
	dir := t.TempDir()
	ks := keystore.NewKeyStore(dir, keystore.LightScryptN, keystore.LightScryptP)
	acct, err := ks.ImportECDSA(key, password)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(acct.URL.Path, 0o600))
	pwFile := filepath.Join(dir, "password")
	require.NoError(t, os.WriteFile(pwFile, []byte(password+"\n"), 0o600))

	rpcURL := strings.Replace(proxy.srv.URL, "http://", "http://"+user+":"+urlPass+"@", 1) + "/v3/" + pathKey + "?apikey=" + queryKey
	state := t.TempDir()
	c := startServer(t, cleanEnv("WALLETGATE_RPC="+rpcURL, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEYSTORE="+acct.URL.Path,
		"WALLETGATE_PASSWORD_FILE="+pwFile, "WALLETGATE_LOG=debug", "WALLETGATE_CAP_PER_TX=ETH=1,USDT=100", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=100",
		"WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100", "WALLETGATE_STATE_DIR="+state))
	var stdout strings.Builder
	record := func(m map[string]any) { b, _ := json.Marshal(m); stdout.Write(b) }

	record(c.initialize())
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"wallet_address", map[string]any{}},
		{"wallet_balance", map[string]any{}},
		{"wallet_policy", map[string]any{}},
		{"wallet_send", map[string]any{"to": "0x00000000000000000000000000000000000a0004", "amount": "2", "asset": "USDT"}},
		{"wallet_send", map[string]any{"to": "0x00000000000000000000000000000000000a0004", "amount": 2}},
		{"wallet_verify_tx", map[string]any{"tx": "0x12"}},
	} {
		res := c.callTool(call.tool, call.args)
		record(res)
		if sc, ok := res["structuredContent"].(map[string]any); ok && sc["confirm_token"] != nil {
			call.args["confirm"] = sc["confirm_token"]
			done := c.callTool(call.tool, call.args)
			record(done)
			require.Equal(t, "confirmed", done["structuredContent"].(map[string]any)["status"], text(done))
		}
	}
	// The node fails: its errors must not carry the URL either.
	proxy.srv.Close()
	record(c.callTool("wallet_balance", map[string]any{}))

	files, _ := filepath.Glob(filepath.Join(state, "*", "*"))
	require.NotEmpty(t, files, "the journal was written")
	var journals strings.Builder
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		journals.Write(raw)
	}
	require.Contains(t, journals.String(), `"kind":"signed"`)
	everything := stdout.String() + "\n" + c.stderr.String() + "\n" + journals.String()
	require.Contains(t, c.stderr.String(), "level=DEBUG", "debug logging was on")
	for _, secret := range []string{password, user, urlPass, pathKey, queryKey, keyHex, strings.ToUpper(keyHex)} {
		require.NotContains(t, everything, secret)
	}
}
