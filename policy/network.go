package policy

import (
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Kind says whether a network carries real value. The zero Kind is treated as
// Mainnet: anything not known to be a testnet or a local dev chain is
// value-bearing.
type Kind string

// The kinds of network.
const (
	Mainnet Kind = "mainnet" // real funds
	Testnet Kind = "testnet" // public test network; its coins have no value
	Dev     Kind = "dev"     // local development chain
)

// ValueBearing reports whether funds on this kind of network have real value.
// It is true for Mainnet and for any Kind that is neither Testnet nor Dev
// (fail closed).
func (k Kind) ValueBearing() bool {
	return k != Testnet && k != Dev
}

// Marker is the label a preview shows for the network: "MAINNET (real funds)",
// "testnet" or "local dev chain".
func (k Kind) Marker() string {
	switch k {
	case Testnet:
		return "testnet"
	case Dev:
		return "local dev chain"
	default:
		return "MAINNET (real funds)"
	}
}

// Uniswap holds the addresses of a network's Uniswap v3 deployment that
// walletgate uses: the factory (pool lookup), QuoterV2 (quotes) and
// SwapRouter02 (swaps).
type Uniswap struct {
	Factory      common.Address
	QuoterV2     common.Address
	SwapRouter02 common.Address
}

// Network describes an EVM chain walletgate knows by chain id. Uniswap is nil
// where no deployment has been checked against an official source; on the
// walletgate dev chain (1337) it is the deployment walletgate makes itself.
type Network struct {
	ChainID uint64
	Name    string
	Kind    Kind
	Uniswap *Uniswap
}

// ValueBearing reports whether funds on this network have real value.
func (n Network) ValueBearing() bool { return n.Kind.ValueBearing() }

// Marker is the label a preview shows for this network.
func (n Network) Marker() string { return n.Kind.Marker() }

// The Uniswap v3 deployments below were checked against Uniswap's official
// deployment pages (github.com/Uniswap/docs, content/protocols/v3/deployments):
// v3-ethereum-deployments.mdx ("Mainnet" and "Ethereum Sepolia" columns) and
// v3-base-deployments.mdx ("Base" and "Base Sepolia" columns). The Base
// mainnet QuoterV2, SwapRouter02 ("swapRouter") and factory ("v3CoreFactory")
// also match docs.base.org/chain/contracts.
var networks = []Network{
	{ChainID: 1, Name: "Ethereum mainnet", Kind: Mainnet, Uniswap: &Uniswap{
		Factory:      mustAddress("0x1F98431c8aD98523631AE4a59f267346ea31F984"),
		QuoterV2:     mustAddress("0x61fFE014bA17989E743c5F6cB21bF9697530B21e"),
		SwapRouter02: mustAddress("0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45"),
	}},
	{ChainID: 10, Name: "OP Mainnet", Kind: Mainnet},
	{ChainID: 137, Name: "Polygon PoS", Kind: Mainnet},
	{ChainID: 8453, Name: "Base", Kind: Mainnet, Uniswap: &Uniswap{
		Factory:      mustAddress("0x33128a8fC17869897dcE68Ed026d694621f6FDfD"),
		QuoterV2:     mustAddress("0x3d4e44Eb1374240CE5F1B871ab261CD16335B76a"),
		SwapRouter02: mustAddress("0x2626664c2603336E57B271c5C0b26F421741e481"),
	}},
	{ChainID: 42161, Name: "Arbitrum One", Kind: Mainnet},
	{ChainID: 11155111, Name: "Sepolia", Kind: Testnet, Uniswap: &Uniswap{
		Factory:      mustAddress("0x0227628f3F023bb0B980b67D528571c95c6DaC1c"),
		QuoterV2:     mustAddress("0xEd1f6473345F45b75F8179591dd5bA1888cf2FB3"),
		SwapRouter02: mustAddress("0x3bFA4769FB09eefC5a80d6E87c3B9C650f7Ae48E"),
	}},
	{ChainID: 17000, Name: "Holesky", Kind: Testnet},
	{ChainID: 560048, Name: "Hoodi", Kind: Testnet},
	{ChainID: 11155420, Name: "OP Sepolia", Kind: Testnet},
	{ChainID: 84532, Name: "Base Sepolia", Kind: Testnet, Uniswap: &Uniswap{
		Factory:      mustAddress("0x4752ba5DBc23f44D87826276BF6Fd6b1C372aD24"),
		QuoterV2:     mustAddress("0xC5290058841028F1614F3A6F0F5816cAd0df5E27"),
		SwapRouter02: mustAddress("0x94cC0AaC535CCDB3C01d6787D6413C739ae12bc4"),
	}},
	// 1337 is also go-ethereum's --dev and simulated-backend chain id. The
	// Uniswap contracts are the ones walletgate's dev chain deploys at start-up
	// (chain/devnet): CREATE addresses of the dev account
	// 0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c at nonces 3 (factory), 5
	// (QuoterV2) and 6 (SwapRouter02). They exist only when the Uniswap npm
	// artifacts were installed (`cd testdata && npm ci`); otherwise there is no
	// code at these addresses. network_test.go recomputes them; the dev-chain
	// package's tests check the deployed contracts against this entry.
	{ChainID: 1337, Name: "walletgate dev chain", Kind: Dev, Uniswap: &Uniswap{
		Factory:      mustAddress("0x9e06930f33f47fc033f19a37a3ED61E5D377DDb0"),
		QuoterV2:     mustAddress("0x822006857350e9535B148A8F8185a42E4cF78F04"),
		SwapRouter02: mustAddress("0x1E0aF1ab8983d418EDE9dA543395CaaD0Fe6c755"),
	}},
	{ChainID: 31337, Name: "Hardhat/Anvil local chain", Kind: Dev},
}

// Finality is how a chain's blocks come and settle, and what walletgate
// waits for there unless the operator says otherwise
// (WALLETGATE_CONFIRMATIONS, WALLETGATE_RECEIPT_TIMEOUT).
type Finality struct {
	BlockTime      time.Duration
	Confirmations  uint64        // blocks, its own included, before a receipt counts
	ReceiptTimeout time.Duration // how long a sent transaction is waited for
}

// Finality is the network's: Ethereum and its testnets (12 s blocks, a
// one-block reorg happens) wait for 2 blocks and 3 minutes; OP-stack chains
// and Arbitrum (2 s and 0.25 s, ordered by a sequencer whose unsafe head can
// still reorg) 2 blocks and 60 s; Polygon PoS (2 s, with deeper reorgs in its
// history) 3 blocks and 90 s; local dev chains 1 block and 60 s. A chain
// walletgate does not know waits as Ethereum does.
func (n Network) Finality() Finality {
	switch n.ChainID {
	case 10, 8453, 84532, 11155420:
		return Finality{BlockTime: 2 * time.Second, Confirmations: 2, ReceiptTimeout: time.Minute}
	case 42161:
		return Finality{BlockTime: 250 * time.Millisecond, Confirmations: 2, ReceiptTimeout: time.Minute}
	case 137:
		return Finality{BlockTime: 2 * time.Second, Confirmations: 3, ReceiptTimeout: 90 * time.Second}
	}
	if n.Kind == Dev {
		return Finality{BlockTime: time.Second, Confirmations: 1, ReceiptTimeout: time.Minute}
	}
	return Finality{BlockTime: 12 * time.Second, Confirmations: 2, ReceiptTimeout: 3 * time.Minute}
}

// LookupNetwork returns the network with the given chain id. An unknown id
// yields Name "unknown chain <id>" and Kind Mainnet: an unrecognised chain is
// treated as carrying real funds. The result is a copy; changing it does not
// change the table.
func LookupNetwork(chainID uint64) Network {
	for _, n := range networks {
		if n.ChainID == chainID {
			return copyNetwork(n)
		}
	}
	return Network{ChainID: chainID, Name: fmt.Sprintf("unknown chain %d", chainID), Kind: Mainnet}
}

// KnownNetworks returns a copy of the network table, in table order.
func KnownNetworks() []Network {
	out := make([]Network, len(networks))
	for i, n := range networks {
		out[i] = copyNetwork(n)
	}
	return out
}

func copyNetwork(n Network) Network {
	if n.Uniswap != nil {
		u := *n.Uniswap
		n.Uniswap = &u
	}
	return n
}

// mustAddress parses a table address with ParseAddress and panics if it is
// malformed or has a wrong checksum; the tables are constants of this
// package, so a failure is a programming error caught by the tests.
func mustAddress(s string) common.Address {
	a, err := ParseAddress(s)
	if err != nil {
		panic("policy: bad table address: " + err.Error())
	}
	return a
}

// networkNames are the names by which a tool's network argument, a cap
// list's chain prefix and WALLETGATE_CHAIN_ID may give a chain, in the order
// messages list them.
var networkNames = []struct {
	name string
	id   uint64
}{
	{"ethereum", 1}, {"base", 8453}, {"arbitrum", 42161}, {"optimism", 10}, {"polygon", 137},
	{"sepolia", 11155111}, {"base-sepolia", 84532}, {"op-sepolia", 11155420}, {"holesky", 17000}, {"hoodi", 560048},
	{"dev", 1337},
}

// NetworkNames lists the chain names ParseNetwork knows.
func NetworkNames() []string {
	out := make([]string, len(networkNames))
	for i, n := range networkNames {
		out[i] = n.name
	}
	return out
}

// ParseNetwork reads a chain as an operator or a model gives it: a decimal
// chain id greater than 0, or one of NetworkNames (any letter case).
func ParseNetwork(s string) (uint64, bool) {
	if id, ok := parseDecimalUint(s); ok {
		return id, id > 0
	}
	for _, n := range networkNames {
		if asciiEqualFold(s, n.name) {
			return n.id, true
		}
	}
	return 0, false
}

// NetworkSlug is the short name of a chain (ParseNetwork reads it back): its
// name in NetworkNames, or its decimal id.
func NetworkSlug(id uint64) string {
	for _, n := range networkNames {
		if n.id == id {
			return n.name
		}
	}
	return fmt.Sprint(id)
}
