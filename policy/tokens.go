package policy

import "github.com/ethereum/go-ethereum/common"

// Token is an ERC-20 token walletgate knows by address on one chain. Symbols
// are display names and lookup keys for operator and assistant input; caps and
// fingerprints always use the address.
type Token struct {
	Address  common.Address
	Symbol   string
	Name     string
	Decimals uint8
}

// tokenSpec is one line of a known-token table as written in source.
type tokenSpec struct {
	address  string // EIP-55, parsed with ParseAddress at start-up
	symbol   string // ASCII, unique within its chain
	name     string
	decimals uint8
}

// tokenSpecs are the known tokens per chain id. Every address is written in
// EIP-55 form; tokens_test.go checks that, and that no symbol repeats within a
// chain.
var tokenSpecs = map[uint64][]tokenSpec{
	// Ethereum mainnet. Checked against:
	//   USDC, USDT, DAI, WBTC (address and decimals): the Superchain token list
	//     maintained by Optimism, github.com/ethereum-optimism/ethereum-optimism.github.io,
	//     data/<SYMBOL>/data.json, "ethereum" entries. Circle's own page
	//     (developers.circle.com/stablecoins/usdc-contract-addresses) was found
	//     but its EVM rows could not be read; Tether's and Sky's (MakerDAO's)
	//     own address pages were not found. These are also the widely published
	//     addresses (Etherscan shows DAI's contract as "Dai", 18 decimals).
	//   WETH: Uniswap's v3 Ethereum deployment page, "Wrapped Native Token
	//     Addresses" (github.com/Uniswap/docs, content/protocols/v3/deployments/
	//     v3-ethereum-deployments.mdx), and the Superchain token list.
	1: {
		{"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "USDC", "USD Coin", 6},
		{"0xdAC17F958D2ee523a2206206994597C13D831ec7", "USDT", "Tether USD", 6},
		{"0x6B175474E89094C44Da98b954EedeAC495271d0F", "DAI", "Dai Stablecoin", 18},
		{"0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", "WETH", "Wrapped Ether", 18},
		{"0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599", "WBTC", "Wrapped BTC", 8},
	},
	// Sepolia. Checked against:
	//   USDC (Circle's testnet USDC): Circle's own "use-usdc" skill
	//     (github.com/circlefin/skills, skills.sh/circlefin/skills/use-usdc),
	//     which cites developers.circle.com/stablecoins/usdc-contract-addresses.
	//   WETH: Uniswap's v3 Ethereum deployment page, "Wrapped Native Token
	//     Addresses", Sepolia row.
	11155111: {
		{"0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238", "USDC", "USDC (Circle testnet)", 6},
		{"0xfFf9976782d46CC05630D1f6eBAb18b2324d6B14", "WETH", "Wrapped Ether", 18},
	},
	// Base. Checked against:
	//   USDC (native, Circle-issued) and DAI (bridged from Ethereum): the
	//     Superchain token list, data/USDC and data/DAI, "base" entries.
	//   WETH: the WETH9 predeploy in docs.base.org's L2 contract addresses
	//     (docs.base.org/chain/base-contracts), and Uniswap's v3 Base
	//     deployment page.
	8453: {
		{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "USDC", "USD Coin", 6},
		{"0x4200000000000000000000000000000000000006", "WETH", "Wrapped Ether", 18},
		{"0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb", "DAI", "Dai Stablecoin", 18},
	},
	// Base Sepolia. Checked against:
	//   USDC (Circle's testnet USDC): Circle's "use-usdc" skill, as for Sepolia.
	//   WETH: the WETH9 predeploy in docs.base.org's L2 contract addresses
	//     (Base Testnet (Sepolia)), and Uniswap's v3 Base deployment page.
	84532: {
		{"0x036CbD53842c5426634e7929541eC2318f3dCF7e", "USDC", "USDC (Circle testnet)", 6},
		{"0x4200000000000000000000000000000000000006", "WETH", "Wrapped Ether", 18},
	},
	// walletgate dev chain. These tokens are deployed by walletgate itself at
	// start-up: they are the CREATE addresses of the dev account
	// 0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c at nonces 0 (USDT-like), 1
	// (DAI-like) and 2 (WETH9, deployed with Uniswap). WETH exists only when
	// the Uniswap npm artifacts were installed (`cd testdata && npm ci`);
	// otherwise there is no code at its address. tokens_test.go recomputes
	// them; the dev-chain package's tests check the deployed contracts against
	// this table. USDC (a USD Coin look-alike with EIP-2612 and EIP-3009) is
	// deployed last, by the second dev account, the dev facilitator
	// 0x055696E7e2c364D6d9bDc69135cD742430f26Dd2, at its nonce 0, so it is
	// there with or without Uniswap.
	1337: {
		{"0x412c113686C5eC57D6DC7A01d0499e93Cc9E8dcC", "USDT", "Tether USD (walletgate dev)", 6},
		{"0x724E69488a4fbd92D7ef62c614229104D4CeF976", "DAI", "Dai Stablecoin (walletgate dev)", 18},
		{"0xAb3FdEd59bC78b898549724cbD7Be930a8aa913D", "WETH", "Wrapped Ether (walletgate dev)", 18},
		{"0x04418AF818c2BC352F5957A35a2DC9fa22b091fd", "USDC", "USD Coin (walletgate dev)", 6},
	},
}

// tokenTable is tokenSpecs with parsed addresses.
var tokenTable = buildTokenTable(tokenSpecs)

func buildTokenTable(specs map[uint64][]tokenSpec) map[uint64][]Token {
	table := make(map[uint64][]Token, len(specs))
	for chainID, list := range specs {
		tokens := make([]Token, len(list))
		for i, s := range list {
			tokens[i] = Token{Address: mustAddress(s.address), Symbol: s.symbol, Name: s.name, Decimals: s.decimals}
		}
		table[chainID] = tokens
	}
	return table
}

// KnownTokens returns a copy of the known tokens on a chain, in table order;
// nil for a chain with none.
func KnownTokens(chainID uint64) []Token {
	list := tokenTable[chainID]
	if len(list) == 0 {
		return nil
	}
	return append([]Token(nil), list...)
}

// TokenBySymbol finds a known token on a chain by symbol. The match is exact
// except for ASCII case ("usdc" finds USDC); non-ASCII input never matches, so
// Unicode case folding (ſ → s, K → k) cannot make a look-alike symbol match.
func TokenBySymbol(chainID uint64, symbol string) (Token, bool) {
	for _, t := range tokenTable[chainID] {
		if asciiEqualFold(t.Symbol, symbol) {
			return t, true
		}
	}
	return Token{}, false
}

// TokenByAddress finds a known token on a chain by address.
func TokenByAddress(chainID uint64, a common.Address) (Token, bool) {
	for _, t := range tokenTable[chainID] {
		if t.Address == a {
			return t, true
		}
	}
	return Token{}, false
}

// asciiEqualFold reports whether a and b are equal ignoring ASCII letter case
// only. Any non-ASCII byte compares by exact value.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if asciiLower(a[i]) != asciiLower(b[i]) {
			return false
		}
	}
	return true
}

func asciiLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// asciiUpper upper-cases ASCII letters and leaves every other byte alone.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}
