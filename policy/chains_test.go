package policy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSeveralChainsPairWithTheirNodes(t *testing.T) {
	c, err := Load([]string{
		"WALLETGATE_RPC=https://base.example/KEY|https://base2.example,https://eth.example",
		"WALLETGATE_CHAIN_ID=base,1",
		"WALLETGATE_ADDRESS=0x00000000000000000000000000000000000d3E30",
	})
	require.NoError(t, err)
	require.Equal(t, uint64(8453), c.ChainID, "the first is the default")
	require.Equal(t, []string{"https://base.example/KEY", "https://base2.example"}, c.RPC, "the default chain's nodes")
	require.Equal(t, []ChainNode{{ID: 8453, RPC: []string{"https://base.example/KEY", "https://base2.example"}}, {ID: 1, RPC: []string{"https://eth.example"}}}, c.Chains)
	require.Equal(t, []uint64{8453, 1}, c.ChainIDs())

	eth := c.ForChain(1)
	require.Equal(t, uint64(1), eth.ChainID)
	require.Equal(t, []string{"https://eth.example"}, eth.RPC)
	require.Equal(t, []ChainNode{{ID: 1, RPC: []string{"https://eth.example"}}}, eth.Chains)

	// One chain id: every URL is a fallback of it, by either separator.
	one, err := Load([]string{"WALLETGATE_RPC=https://a.example|https://b.example,https://c.example", "WALLETGATE_CHAIN_ID=1"})
	require.NoError(t, err)
	require.Equal(t, []string{"https://a.example", "https://b.example", "https://c.example"}, one.RPC)
	require.Len(t, one.Chains, 1)
}

func TestSeveralChainsRefuseAMismatchedNodeList(t *testing.T) {
	_, err := Load([]string{"WALLETGATE_RPC=https://a.example/SECRET,https://b.example,https://c.example", "WALLETGATE_CHAIN_ID=8453,1"})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, EnvRPC, ce.Var)
	require.Contains(t, err.Error(), "one node entry per chain of WALLETGATE_CHAIN_ID, in its order (2 chains, 3 entries)")
	require.Contains(t, err.Error(), "separate a chain's fallback nodes with |")
	require.NotContains(t, err.Error(), "SECRET", "node URLs are shown as scheme://host only")
}

func TestCapItemsNameTheirChain(t *testing.T) {
	env := []string{
		"WALLETGATE_RPC=https://base.example,https://eth.example",
		"WALLETGATE_CHAIN_ID=8453,1",
		"WALLETGATE_CAP_PER_TX=ETH=0.01,USDC=25,ethereum:ETH=0.5,1:USDT=10",
		"WALLETGATE_CAP_PER_SESSION=ETH=0.1,USDC=100,ethereum:ETH=1,ethereum:USDT=20",
	}
	c, err := Load(env)
	require.NoError(t, err)
	base, eth := c.ForChain(8453), c.ForChain(1)
	require.Equal(t, []CapEntry{{Asset: "ETH", Amount: "0.01"}, {Asset: "USDC", Amount: "25"}}, base.CapPerTx, "unprefixed items are the default chain's")
	require.Equal(t, []CapEntry{{Asset: "ETH", Amount: "0.5"}, {Asset: "USDT", Amount: "10"}}, eth.CapPerTx)
	require.Equal(t, []CapEntry{{Asset: "ETH", Amount: "1"}, {Asset: "USDT", Amount: "20"}}, eth.CapPerSession)
	require.Nil(t, eth.CapPerDay, "no list: its default applies on each chain")
	require.Nil(t, base.HumanAbove)

	for _, tc := range []struct{ env, want string }{
		{"WALLETGATE_CAP_PER_TX=polygon:ETH=1", "chain 137 (Polygon PoS) is not in WALLETGATE_CHAIN_ID"},
		{"WALLETGATE_CAP_PER_TX=USDC=1,base:USDC=2", "USDC is given for the default chain base both with and without its prefix"},
		{"WALLETGATE_CAP_PER_DAY=nowhere:ETH=1", `names the chain "nowhere", which is neither a chain id nor a known name`},
		{"WALLETGATE_CAP_PER_TX=base:ETH=1,8453:ETH=2", "repeats the asset ETH"},
	} {
		_, err := Load(append(env[:2:2], tc.env))
		require.ErrorContains(t, err, tc.want, tc.env)
	}
	// With one chain, a prefix must name it.
	_, err = Load([]string{"WALLETGATE_RPC=https://eth.example", "WALLETGATE_CHAIN_ID=1", "WALLETGATE_CAP_PER_TX=base:ETH=1"})
	require.ErrorContains(t, err, "chain 8453 (Base) is not in WALLETGATE_CHAIN_ID")
	c, err = Load([]string{"WALLETGATE_RPC=https://eth.example", "WALLETGATE_CHAIN_ID=1", "WALLETGATE_CAP_PER_TX=ethereum:ETH=1"})
	require.NoError(t, err)
	require.Equal(t, []CapEntry{{Asset: "ETH", Amount: "1"}}, c.ForChain(1).CapPerTx)
}

func TestParseNetwork(t *testing.T) {
	for in, want := range map[string]uint64{"8453": 8453, "base": 8453, "BASE": 8453, "base-sepolia": 84532, "dev": 1337, "ethereum": 1, "arbitrum": 42161, "optimism": 10, "polygon": 137, "sepolia": 11155111} {
		got, ok := ParseNetwork(in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "0", "-1", "0x1", "mainnet", "base sepolia", "18446744073709551616"} {
		_, ok := ParseNetwork(in)
		require.False(t, ok, in)
	}
	require.Equal(t, "base", NetworkSlug(8453))
	require.Equal(t, "31337", NetworkSlug(31337))
}
