package policy

import (
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
)

func TestLookupNetwork(t *testing.T) {
	tests := []struct {
		name    string
		chainID uint64
		want    string
		kind    Kind
		uniswap bool
	}{
		{"ethereum", 1, "Ethereum mainnet", Mainnet, true},
		{"optimism", 10, "OP Mainnet", Mainnet, false},
		{"polygon", 137, "Polygon PoS", Mainnet, false},
		{"base", 8453, "Base", Mainnet, true},
		{"arbitrum", 42161, "Arbitrum One", Mainnet, false},
		{"sepolia", 11155111, "Sepolia", Testnet, true},
		{"holesky", 17000, "Holesky", Testnet, false},
		{"hoodi", 560048, "Hoodi", Testnet, false},
		{"base sepolia", 84532, "Base Sepolia", Testnet, true},
		{"walletgate dev", 1337, "walletgate dev chain", Dev, true},
		{"hardhat/anvil", 31337, "Hardhat/Anvil local chain", Dev, false},
		{"unknown is mainnet", 999999, "unknown chain 999999", Mainnet, false},
		{"zero is unknown", 0, "unknown chain 0", Mainnet, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := LookupNetwork(tc.chainID)
			require.Equal(t, tc.chainID, n.ChainID)
			require.Equal(t, tc.want, n.Name)
			require.Equal(t, tc.kind, n.Kind)
			require.Equal(t, tc.uniswap, n.Uniswap != nil)
			require.Equal(t, tc.kind == Mainnet, n.ValueBearing())
		})
	}
}

func TestKindMarkerAndValueBearing(t *testing.T) {
	tests := []struct {
		kind         Kind
		marker       string
		valueBearing bool
	}{
		{Mainnet, "MAINNET (real funds)", true},
		{Testnet, "testnet", false},
		{Dev, "local dev chain", false},
		{"", "MAINNET (real funds)", true},        // zero value fails closed
		{"staging", "MAINNET (real funds)", true}, // unknown kind fails closed
	}
	for _, tc := range tests {
		t.Run(string(tc.kind), func(t *testing.T) {
			require.Equal(t, tc.marker, tc.kind.Marker())
			require.Equal(t, tc.valueBearing, tc.kind.ValueBearing())
		})
	}
}

func TestNetworkTable(t *testing.T) {
	seen := map[uint64]bool{}
	for _, n := range KnownNetworks() {
		require.False(t, seen[n.ChainID], "chain %d listed twice", n.ChainID)
		seen[n.ChainID] = true
		if u := n.Uniswap; u != nil {
			require.NotZero(t, u.Factory, "%s factory", n.Name)
			require.NotZero(t, u.QuoterV2, "%s QuoterV2", n.Name)
			require.NotZero(t, u.SwapRouter02, "%s SwapRouter02", n.Name)
		}
	}
	// The brief's mainnet numbers, as given.
	u := LookupNetwork(1).Uniswap
	require.Equal(t, "0x61fFE014bA17989E743c5F6cB21bF9697530B21e", u.QuoterV2.Hex())
	require.Equal(t, "0x1F98431c8aD98523631AE4a59f267346ea31F984", u.Factory.Hex())
	require.Equal(t, "0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45", u.SwapRouter02.Hex())
}

func TestDevUniswapIsDevAccountCreateAddresses(t *testing.T) {
	dev := mustAddress("0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c")
	u := LookupNetwork(1337).Uniswap
	require.NotNil(t, u)
	// Deployment order on the dev chain: USDT 0, DAI 1, WETH9 2, factory 3,
	// position manager 4, QuoterV2 5, SwapRouter02 6.
	require.Equal(t, crypto.CreateAddress(dev, 3), u.Factory)
	require.Equal(t, crypto.CreateAddress(dev, 5), u.QuoterV2)
	require.Equal(t, crypto.CreateAddress(dev, 6), u.SwapRouter02)
}

func TestLookupNetworkReturnsCopy(t *testing.T) {
	n := LookupNetwork(1)
	n.Uniswap.QuoterV2[0] ^= 0xff
	n.Name = "changed"
	again := LookupNetwork(1)
	require.Equal(t, "0x61fFE014bA17989E743c5F6cB21bF9697530B21e", again.Uniswap.QuoterV2.Hex())
	require.Equal(t, "Ethereum mainnet", again.Name)

	all := KnownNetworks()
	all[0].Uniswap.Factory[0] ^= 0xff
	require.Equal(t, "0x1F98431c8aD98523631AE4a59f267346ea31F984", LookupNetwork(1).Uniswap.Factory.Hex())
}

// The public dev keys sign for exactly the chains this table calls local
// dev chains: a dev chain id added here or there must be added to both.
func TestDevChainsAreTheDevKeysChains(t *testing.T) {
	var dev []uint64
	for _, n := range KnownNetworks() {
		if n.Kind == Dev {
			dev = append(dev, n.ChainID)
		}
	}
	require.ElementsMatch(t, dev, signer.DevChainIDs)
}

// Each chain's waits follow its block time: a receipt timeout of at least 15
// blocks (and a minute), more than one confirmation wherever a reorg can
// undo a block, one on a local dev chain.
func TestFinalityFollowsTheBlockTime(t *testing.T) {
	for _, n := range append(KnownNetworks(), LookupNetwork(4242)) {
		f := n.Finality()
		require.GreaterOrEqual(t, f.ReceiptTimeout, max(15*f.BlockTime, time.Minute), n.Name)
		if n.Kind == Dev {
			require.EqualValues(t, 1, f.Confirmations, n.Name)
		} else {
			require.GreaterOrEqual(t, f.Confirmations, uint64(2), n.Name)
		}
	}
	require.Equal(t, 12*time.Second, LookupNetwork(1).Finality().BlockTime)
	require.Equal(t, 2*time.Second, LookupNetwork(8453).Finality().BlockTime)
	require.Equal(t, "OP Sepolia", LookupNetwork(11155420).Name)
	require.Equal(t, Testnet, LookupNetwork(11155420).Kind)
}
