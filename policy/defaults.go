package policy

// The default cap lists: one table, read by the ledger (through
// tools.ResolveCaps), the amount descriptions the model reads and
// wallet_policy (both from the resolved ledger), --help (Variables) and the
// README, whose table a test compares with this one.

// DefaultCaps are the cap lists for a window whose variable is unset, per
// transaction, per session and per day. They are deliberately small: an
// operator who wants more says so, and no token is capped (so none can be
// sent) until one is named.
var DefaultCaps = [3]string{"ETH=0.01", "ETH=0.05", "ETH=0.1"}

// DevCaps replace DefaultCaps on the embedded dev chain (--dev, demo), whose
// funds are play money, so the demo can send its tokens.
var DevCaps = [3]string{"ETH=1,USDT=100,DAI=100,WETH=1,USDC=100", "ETH=5,USDT=500,DAI=500,WETH=5,USDC=500", "ETH=10,USDT=1000,DAI=1000,WETH=10,USDC=1000"}

// capDefault is how --help and the README state a cap variable's default.
func capDefault(window int) string {
	return DefaultCaps[window] + "; on the embedded dev chain " + DevCaps[window]
}
