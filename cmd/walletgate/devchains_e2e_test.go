package main_test

import (
	"context"
	"math/big"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"
)

// startDevnetIn runs `walletgate devnet --http 127.0.0.1:0 args…` with state
// as its state directory and returns its line.
func startDevnetIn(t *testing.T, state string, args ...string) devnetInfo {
	t.Helper()
	info, _ := runDevnet(t, state, args...)
	return info
}

// Two dev chains side by side (walletgate-devnet and walletgate-devnet
// --chain-id 31337): other ports, one shared dev key file, each its own
// chain; a walletgate on each sends USDT there (its id read and checked at
// start), and a walletgate told the other id refuses to start.
func TestTwoDevChainsSideBySide(t *testing.T) {
	state := t.TempDir()
	a := startDevnetIn(t, state)
	b := startDevnetIn(t, state, "--chain-id", "31337")
	require.EqualValues(t, 1337, a.ChainID)
	require.EqualValues(t, 31337, b.ChainID)
	require.NotEqual(t, a.RPC, b.RPC)
	require.Equal(t, filepath.Join(state, "devnet", "dev.key"), a.KeyFile)
	require.Equal(t, a.KeyFile, b.KeyFile, "the same public dev key, one file")

	to := common.HexToAddress("0x00000000000000000000000000000000000e2e27")
	for _, info := range []devnetInfo{a, b} {
		id := big.NewInt(int64(info.ChainID)).String()
		usdt := info.Contracts["USDT"]
		c := startServer(t, withStateDir(t, cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID="+id, "WALLETGATE_KEY_FILE="+info.KeyFile,
			"WALLETGATE_CAP_PER_TX=ETH=0.1,"+usdt+"=50", "WALLETGATE_CAP_PER_SESSION=ETH=0.5,"+usdt+"=80", "WALLETGATE_CAP_PER_DAY=ETH=0.5,"+usdt+"=80")))
		c.initialize()
		addr := c.callTool("wallet_address", map[string]any{})["structuredContent"].(map[string]any)
		require.EqualValues(t, info.ChainID, addr["chain_id"])

		node, err := ethclient.Dial(info.RPC)
		require.NoError(t, err)
		got, err := node.ChainID(context.Background())
		require.NoError(t, err)
		require.EqualValues(t, info.ChainID, got.Uint64())
		token := common.HexToAddress(usdt)
		balance := func() *big.Int {
			out, err := node.CallContract(context.Background(), ethereum.CallMsg{To: &token, Data: append(common.FromHex("0x70a08231"), common.LeftPadBytes(to.Bytes(), 32)...)}, nil)
			require.NoError(t, err)
			return new(big.Int).SetBytes(out)
		}
		args := map[string]any{"to": to.Hex(), "amount": "12.5", "asset": usdt}
		preview := c.callTool("wallet_send", args)
		sc, ok := preview["structuredContent"].(map[string]any)
		require.True(t, ok, text(preview))
		args["confirm"] = sc["confirm_token"]
		done := c.callTool("wallet_send", args)
		require.Nil(t, done["isError"], text(done))
		require.Equal(t, "confirmed", done["structuredContent"].(map[string]any)["status"])
		require.Equal(t, big.NewInt(12_500_000), balance(), "chain %d: moved once, on this chain only", info.ChainID)
		node.Close()
	}

	cmd := exec.Command(binary)
	cmd.Env = withStateDir(t, cleanEnv("WALLETGATE_RPC="+b.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+b.KeyFile))
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "chain id mismatch")
}
