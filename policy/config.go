package policy

// Configuration rules. Load reads only WALLETGATE_* entries of the environment
// list it is given. A name with that prefix (in any letter case) that is not in
// Variables is refused, so a typo cannot silently drop a cap. An empty value
// counts as unset. Checks run in a fixed order and the first problem is
// returned: unknown or repeated names (sorted), then each variable in
// Variables order, then the rules that tie variables together (key sources,
// watch-only address). Every error is a *ConfigError whose message names the
// variable, shows the received value made safe to print (RPC URLs reduced to
// scheme://host[:port]), and states the expected form.

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// EnvPrefix is the prefix of every walletgate environment variable.
const EnvPrefix = "WALLETGATE_"

// The environment variable names.
const (
	EnvRPC                 = "WALLETGATE_RPC"
	EnvChainID             = "WALLETGATE_CHAIN_ID"
	EnvKeystore            = "WALLETGATE_KEYSTORE"
	EnvPasswordFile        = "WALLETGATE_PASSWORD_FILE"
	EnvKeyFile             = "WALLETGATE_KEY_FILE"
	EnvAddress             = "WALLETGATE_ADDRESS"
	EnvCapPerTx            = "WALLETGATE_CAP_PER_TX"
	EnvCapPerSession       = "WALLETGATE_CAP_PER_SESSION"
	EnvCapPerDay           = "WALLETGATE_CAP_PER_DAY"
	EnvAllowMainnet        = "WALLETGATE_ALLOW_MAINNET"
	EnvAllowUncappedTokens = "WALLETGATE_ALLOW_UNCAPPED_TOKENS"
	EnvAllowTo             = "WALLETGATE_ALLOW_TO"
	EnvAllowCalls          = "WALLETGATE_ALLOW_CALLS"
	EnvAllowTypedData      = "WALLETGATE_ALLOW_TYPED_DATA"
	EnvSignatureValidity   = "WALLETGATE_SIGNATURE_MAX_VALIDITY"
	EnvAllowPayTo          = "WALLETGATE_ALLOW_PAY_TO"
	EnvTools               = "WALLETGATE_TOOLS"
	EnvConfirm             = "WALLETGATE_CONFIRM"
	EnvConfirmTTL          = "WALLETGATE_CONFIRM_TTL"
	EnvStateDir            = "WALLETGATE_STATE_DIR"
	EnvStateURL            = "WALLETGATE_STATE_URL"
	EnvStatePasswordFile   = "WALLETGATE_STATE_PASSWORD_FILE"
	EnvLog                 = "WALLETGATE_LOG"
	EnvReceiptTimeout      = "WALLETGATE_RECEIPT_TIMEOUT"
	EnvRPCTimeout          = "WALLETGATE_RPC_TIMEOUT"
	EnvRPCBatchLimit       = "WALLETGATE_RPC_BATCH_LIMIT"
	EnvConfirmations       = "WALLETGATE_CONFIRMATIONS"
	EnvHumanAbove          = "WALLETGATE_HUMAN_ABOVE"
	EnvDevArtifacts        = "WALLETGATE_DEV_ARTIFACTS"
	EnvOpenBrowser         = "WALLETGATE_OPEN_BROWSER"
	EnvPriceFeeds          = "WALLETGATE_PRICE_FEEDS"
	EnvUSDUnpriced         = "WALLETGATE_USD_UNPRICED"
)

// Variable documents one environment variable for --help and the README.
type Variable struct {
	Name    string
	Meaning string
	Default string
}

// Variables lists every environment variable walletgate reads, in the order
// Load checks them. It is the single list: Load refuses any WALLETGATE_* name
// not in it, and a test checks that Load handles each one.
var Variables = []Variable{
	{EnvRPC, "node URL(s), http, https, ws or wss: with one chain id, comma-separated fallbacks that must serve that chain; with several, one entry per chain in WALLETGATE_CHAIN_ID's order, a chain's fallbacks separated by |", "not set"},
	{EnvChainID, "expected chain id (decimal, or a name: ethereum, base, arbitrum, optimism, polygon, sepolia, base-sepolia, dev); the node must report the same. Several, comma-separated, serve several chains, the first the default", "not set"},
	{EnvKeystore, "path of a go-ethereum keystore file holding the signing key", "not set"},
	{EnvPasswordFile, "path of a file holding the keystore password; required with WALLETGATE_KEYSTORE", "not set"},
	{EnvKeyFile, "path of a file holding a hex private key; instead of WALLETGATE_KEYSTORE", "not set"},
	{EnvAddress, "watch-only wallet address (0x + 40 hex digits) when no key is configured", "not set"},
	{EnvCapPerTx, "per-transaction caps, like ETH=0.01,USDC=25,0xdAC1…=25; an asset named in any of the three cap lists needs an amount, or unlimited, in each of them", capDefault(0)},
	{EnvCapPerSession, "per-session (process lifetime) caps, same form", capDefault(1)},
	{EnvCapPerDay, "per rolling 24 hours caps, same form; persisted across restarts", capDefault(2)},
	{EnvAllowMainnet, "true to allow write tools on a value-bearing network (unknown chains count as mainnet)", "false"},
	{EnvAllowUncappedTokens, "true to allow sending tokens that have no cap configured", "false"},
	{EnvAllowTo, "comma-separated recipient addresses; when set, writes may only go to these", "any recipient"},
	{EnvAllowCalls, "contracts wallet_call may call: comma-separated addresses, each optionally ADDR:0xSELECTOR, or any", "none: wallet_call is off"},
	{EnvAllowTypedData, "any to let wallet_sign_typed_data sign typed data of unknown kinds (shown whole, no cap applies); known to sign only permits and transfer authorizations, decoded and capped", "known"},
	{EnvSignatureValidity, "the longest a signed permit or transfer authorization may stay valid (its deadline or validBefore from now), a Go duration between 30s and 168h", "1h"},
	{EnvAllowPayTo, "comma-separated payees wallet_pay_x402 may pay, by address: 0x… addresses, or a resource host pinned to the one address it may be paid at, host=0x… (like api.example.com=0x…; a bare host is refused: the paying server writes its own URL)", "any payee (the caps still apply)"},
	{EnvTools, "all, or read to list only the read tools", "all with a key, read without"},
	{EnvConfirm, "confirmation mode: token, human or elicit", "token"},
	{EnvConfirmTTL, "lifetime of a confirmation token, a Go duration between 10s and 1h", "5m"},
	{EnvStateDir, "directory of the spend journal and audit log", "under the user's state directory"},
	{EnvStateURL, "postgres:// URL of a PostgreSQL database that holds the wallet's caps, nonces, open transactions and audit chain, shared by every walletgate on that wallet and chain (shown host-only); needs walletgate-shared beside walletgate, which it becomes", "not set: the local journal"},
	{EnvStatePasswordFile, "path of a file holding the password of WALLETGATE_STATE_URL's database user, instead of putting it in the URL", "not set"},
	{EnvLog, "stderr log level: debug, info, warn or error", "info"},
	{EnvReceiptTimeout, "how long to wait for a sent transaction's receipt, a Go duration between 1s and 30m", "the chain's: 3m on Ethereum, 60s on OP-stack, Arbitrum and dev chains, 90s on Polygon"},
	{EnvRPCTimeout, "how long one request to the node may take before it fails (RPC_ERROR), a Go duration between 1s and 5m", "20s"},
	{EnvRPCBatchLimit, "the most requests walletgate sends the node in one JSON-RPC batch (larger ones are split), 1 to 1000; a node that refuses a batch as too large lowers it by itself", "none"},
	{EnvConfirmations, "blocks a transaction must have (including its own) to count as included, 1 to 64", "the chain's: 2, 3 on Polygon, 1 on dev chains"},
	{EnvHumanAbove, "with WALLETGATE_CONFIRM=human: a cap list like ETH=0.05,USDC=20; a write that spends at most these (ETH counting value plus max fees) confirms with a token, anything above or in an asset not named needs a person", "a person approves every write"},
	{EnvOpenBrowser, "with WALLETGATE_CONFIRM=human: whether a preview a person must approve opens its approval page in the person's default browser: on (xdg-open with a desktop session, open on macOS, rundll32 on Windows), off, or the absolute path of a program run with one argument, the file:// address of a 0600 file that forwards the browser to the page", "on"},
	{EnvPriceFeeds, "with USD in a cap list: Chainlink USD feeds that add to or override the pinned ones, ASSET=0xFEED items, each optionally CHAIN: before and /HEARTBEAT after (like ETH=0x5f4e…8419/1h,base:USDC=0x…/24h)", "the pinned feeds (ETH, USDC, USDT, DAI on Ethereum, OP, Arbitrum, Polygon and the dev chains), heartbeat 1h"},
	{EnvUSDUnpriced, "with USD in a cap list: assets (optionally CHAIN:ASSET) that may be spent without a USD price; they are bounded by their own caps only and left out of the USD total", "none: an asset without a fresh price is refused (PRICE_UNAVAILABLE)"},
	{EnvDevArtifacts, "the dev chain only: a node_modules directory holding the Uniswap npm artifacts (walletgate-devnet install-artifacts fills the default)", "testdata/node_modules upward from the working directory or the binary, then the user's data directory"},
}

// Bounds and defaults of the typed variables.
const (
	DefaultConfirm        = ConfirmToken
	ConfirmToken          = "token"  // the model confirms with the preview's token
	ConfirmHuman          = "human"  // a person approves on a local page or terminal
	ConfirmElicit         = "elicit" // a person approves through MCP elicitation
	DefaultConfirmTTL     = 5 * time.Minute
	MinConfirmTTL         = 10 * time.Second
	MaxConfirmTTL         = time.Hour
	DefaultReceiptTimeout = 60 * time.Second
	MinReceiptTimeout     = time.Second
	MaxReceiptTimeout     = 30 * time.Minute
	DefaultRPCTimeout     = 20 * time.Second
	MinRPCTimeout         = time.Second
	MaxRPCTimeout         = 5 * time.Minute
	MaxRPCBatchLimit      = 1000
	DefaultConfirmations  = 1
	MaxConfirmations      = 64
	// MaxRPCURLs is the most node URLs WALLETGATE_RPC may list.
	MaxRPCURLs = 16
	// MaxAllowTo is the most addresses WALLETGATE_ALLOW_TO may list.
	MaxAllowTo = 256
	// OpenBrowserOn and OpenBrowserOff are WALLETGATE_OPEN_BROWSER's words.
	OpenBrowserOn  = "on"
	OpenBrowserOff = "off"
)

// Config is walletgate's validated configuration. Its zero value is not
// meaningful; use Load. Key material is never held here: the key fields are
// paths.
type Config struct {
	RPC     []string // the default chain's node URLs, in fallback order; nil if not set
	ChainID uint64   // the default chain; 0: not set
	// Chains are the configured chains, the default first (chains.go):
	// one with a single chain id, nil when WALLETGATE_RPC is not set.
	Chains       []ChainNode
	chainIDs     []uint64        // WALLETGATE_CHAIN_ID as read, until Load pairs it with WALLETGATE_RPC
	rpc          string          // WALLETGATE_RPC as read, until then
	Keystore     string          // keystore file path; "" if not set
	PasswordFile string          // keystore password file path; set iff Keystore is
	KeyFile      string          // private key file path; never with Keystore
	Address      *common.Address // watch-only address; never with a key

	CapPerTx      []CapEntry
	CapPerSession []CapEntry
	CapPerDay     []CapEntry

	AllowMainnet        bool
	AllowUncappedTokens bool
	AllowTo             []common.Address // nil: any recipient
	AllowCalls          CallsAllowed     // zero: wallet_call is off
	AllowTypedDataAny   bool             // sign typed data of unknown kinds (uncapped, shown whole)
	SignatureValidity   time.Duration    // MinSignatureMaxValidity..MaxSignatureMaxValidity
	AllowPayTo          PayeesAllowed    // zero: any payee

	Tools      string        // "all", "read", or "" (decided by whether a key exists)
	Confirm    string        // "token", "human" or "elicit"
	ConfirmTTL time.Duration // MinConfirmTTL..MaxConfirmTTL
	StateDir   string        // "": the caller's default
	// StateURL is the PostgreSQL database of the shared state ("": the
	// local journal); it may hold a password: show it only through
	// RedactURL. StatePasswordFile is a file holding that password.
	StateURL          string
	StatePasswordFile string
	DevArtifacts      string // Uniswap artifacts for the dev chain; "": searched for
	LogLevel          slog.Level
	ReceiptTimeout    time.Duration // MinReceiptTimeout..MaxReceiptTimeout
	ReceiptTimeoutSet bool          // the operator set it: the chain's default does not apply
	RPCTimeout        time.Duration // MinRPCTimeout..MaxRPCTimeout: the bound on one request to the node
	RPCBatchLimit     int           // 0 (none) or 1..MaxRPCBatchLimit: the most requests in one batch
	Confirmations     uint64        // 1..MaxConfirmations
	ConfirmationsSet  bool          // the operator set it: the chain's default does not apply
	// OpenBrowser, in human mode, is how a preview a person must approve
	// is shown to them: "" or OpenBrowserOn (the platform's opener; the
	// default), OpenBrowserOff, or the absolute path of a program given the
	// page's address.
	OpenBrowser string
	// HumanAbove, in human mode, is the tier below which a token suffices:
	// a write whose every spent asset is named here and spends at most its
	// amount needs no person. nil: a person approves every write.
	HumanAbove []CapEntry
	// PriceFeeds are WALLETGATE_PRICE_FEEDS (policy.FeedsFor merges them
	// with the pinned feeds); USDUnpriced are WALLETGATE_USD_UNPRICED.
	PriceFeeds  []PriceFeed
	USDUnpriced []CapEntry
}

// ConfigError reports a configuration variable that was refused. Var is the
// variable's name; Value is the received value made safe to print (escaped,
// truncated, RPC URLs redacted to scheme://host[:port]), or empty when the
// variable is unset or its value is withheld (the value of an unknown variable
// might be a secret); Expected states the expected form and, in parentheses,
// what was wrong.
type ConfigError struct {
	Var      string
	Value    string
	Expected string
}

// Error returns `VAR="value": expected …`, or `VAR: expected …` without a
// value.
func (e *ConfigError) Error() string {
	if e.Value == "" {
		return e.Var + ": expected " + e.Expected
	}
	return e.Var + `="` + e.Value + `": expected ` + e.Expected
}

// maxValueDisplay is how many bytes of a refused value a ConfigError shows.
const maxValueDisplay = 120

func configError(name, value, expected string) *ConfigError {
	return &ConfigError{Var: name, Value: display(value, maxValueDisplay), Expected: expected}
}

// Load builds a Config from environ, a list of "NAME=VALUE" entries as
// os.Environ returns them. It reads nothing else. Errors are *ConfigError.
func Load(environ []string) (Config, error) {
	cfg := Config{
		Confirm:        DefaultConfirm,
		ConfirmTTL:     DefaultConfirmTTL,
		LogLevel:       slog.LevelInfo,
		ReceiptTimeout: DefaultReceiptTimeout,
		RPCTimeout:     DefaultRPCTimeout,
		Confirmations:  DefaultConfirmations,

		SignatureValidity: DefaultSignatureMaxValidity,
	}
	env, err := collectEnv(environ)
	if err != nil {
		return Config{}, err
	}
	home := homeOf(environ)
	for _, v := range Variables {
		value := env[v.Name]
		if value == "" {
			continue
		}
		if err := cfg.set(v.Name, value, home); err != nil {
			return Config{}, err
		}
	}
	if err := cfg.checkKeySources(); err != nil {
		return Config{}, err
	}
	if err := cfg.pairChains(cfg.chainIDs, cfg.rpc); err != nil {
		return Config{}, err
	}
	cfg.chainIDs, cfg.rpc = nil, ""
	if cfg.HumanAbove != nil && cfg.Confirm != ConfirmHuman {
		// Fail closed: a tier without human mode would suggest a person
		// approves the larger writes when nobody does.
		return Config{}, configError(EnvHumanAbove, env[EnvHumanAbove], "to be set only with "+EnvConfirm+"=human (it says which writes a person must approve; in "+cfg.Confirm+" mode none is asked)")
	}
	return cfg, nil
}

// collectEnv returns the WALLETGATE_* entries of environ by name, refusing
// unknown names, names in the wrong letter case, and names given twice.
func collectEnv(environ []string) (map[string]string, error) {
	known := make(map[string]bool, len(Variables))
	for _, v := range Variables {
		known[v.Name] = true
	}
	env := make(map[string]string)
	var unknown, repeated []string
	for _, entry := range environ {
		name, value, _ := strings.Cut(entry, "=")
		if !strings.HasPrefix(asciiUpper(name), EnvPrefix) {
			continue
		}
		if !known[name] {
			unknown = append(unknown, name)
			continue
		}
		if _, dup := env[name]; dup {
			repeated = append(repeated, name)
			continue
		}
		env[name] = value
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, unknownVariableError(unknown[0])
	}
	if len(repeated) > 0 {
		slices.Sort(repeated)
		return nil, &ConfigError{Var: repeated[0], Expected: "to be set once; it appears more than once in the environment, so which value applies is ambiguous"}
	}
	return env, nil
}

// unknownVariableError refuses a WALLETGATE_* name that is not in Variables,
// suggesting the closest known name. The value is withheld.
func unknownVariableError(name string) *ConfigError {
	e := &ConfigError{Var: display(name, maxDisplay)}
	if upper := asciiUpper(name); upper != name && slices.ContainsFunc(Variables, func(v Variable) bool { return v.Name == upper }) {
		e.Expected = "an upper-case variable name (write " + upper + ")"
		return e
	}
	e.Expected = "one of the variables walletgate --help lists (this name is unknown"
	if s := closestVariable(name); s != "" {
		e.Expected += "; did you mean " + s + "?"
	}
	e.Expected += ")"
	return e
}

// closestVariable returns the known name within edit distance 3 of name that
// is closest (first in Variables order on a tie), or "".
func closestVariable(name string) string {
	best, bestDist := "", 4
	upper := asciiUpper(name)
	for _, v := range Variables {
		if d := editDistance(upper, v.Name); d < bestDist {
			best, bestDist = v.Name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, by bytes. Long
// inputs are cut to keep it cheap: a name that long is no near miss anyway.
func editDistance(a, b string) int {
	const limit = 64
	if len(a) > limit {
		a = a[:limit]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// set parses one non-empty variable into c; home expands a path's ~.
func (c *Config) set(name, value, home string) *ConfigError {
	r, ok := setters[name]
	if !ok {
		// Unreachable while setters has every entry of Variables; the tests
		// check that it does.
		return &ConfigError{Var: name, Expected: "a variable this version of walletgate can read (internal error: no rule for it)"}
	}
	return r.set(c, value, home)
}

// setter reads one variable into a Config.
type setter interface {
	set(c *Config, value, home string) *ConfigError
}

// rule is how one variable is read: parse turns its (non-empty) value into
// a T, or says what was expected; field is where in the Config it goes;
// also, when set, records what else the value decides.
type rule[T any] struct {
	variable string
	parse    func(name, value, home string) (T, *ConfigError)
	field    func(*Config) *T
	also     func(c *Config, value string)
}

func (r rule[T]) set(c *Config, value, home string) *ConfigError {
	v, err := r.parse(r.variable, value, home)
	if err != nil {
		return err
	}
	*r.field(c) = v
	if r.also != nil {
		r.also(c, value)
	}
	return nil
}

// setters are the rules of every variable, by name.
var setters = func() map[string]setter {
	m := map[string]setter{}
	for _, r := range []interface {
		setter
		name() string
	}{
		rule[[]string]{EnvRPC, valueOnly(parseRPCList), func(c *Config) *[]string { return &c.RPC }, func(c *Config, value string) { c.rpc = value }},
		rule[[]uint64]{EnvChainID, valueOnly(parseChainIDs), func(c *Config) *[]uint64 { return &c.chainIDs }, func(c *Config, _ string) { c.ChainID = c.chainIDs[0] }},
		rule[string]{EnvStateURL, parseStateURL, func(c *Config) *string { return &c.StateURL }, nil},
		rule[string]{EnvKeystore, parsePath, func(c *Config) *string { return &c.Keystore }, nil},
		rule[string]{EnvPasswordFile, parsePath, func(c *Config) *string { return &c.PasswordFile }, nil},
		rule[string]{EnvKeyFile, parsePath, func(c *Config) *string { return &c.KeyFile }, nil},
		rule[string]{EnvStateDir, parsePath, func(c *Config) *string { return &c.StateDir }, nil},
		rule[string]{EnvStatePasswordFile, parsePath, func(c *Config) *string { return &c.StatePasswordFile }, nil},
		rule[string]{EnvDevArtifacts, parsePath, func(c *Config) *string { return &c.DevArtifacts }, nil},
		rule[string]{EnvOpenBrowser, func(_, value, home string) (string, *ConfigError) { return parseOpenBrowser(value, home) }, func(c *Config) *string { return &c.OpenBrowser }, nil},
		rule[*common.Address]{EnvAddress, parseWatchAddress, func(c *Config) **common.Address { return &c.Address }, nil},
		rule[[]CapEntry]{EnvCapPerTx, parseCaps, func(c *Config) *[]CapEntry { return &c.CapPerTx }, nil},
		rule[[]CapEntry]{EnvCapPerSession, parseCaps, func(c *Config) *[]CapEntry { return &c.CapPerSession }, nil},
		rule[[]CapEntry]{EnvCapPerDay, parseCaps, func(c *Config) *[]CapEntry { return &c.CapPerDay }, nil},
		rule[[]CapEntry]{EnvHumanAbove, parseHumanAbove, func(c *Config) *[]CapEntry { return &c.HumanAbove }, nil},
		rule[bool]{EnvAllowMainnet, parseBool, func(c *Config) *bool { return &c.AllowMainnet }, nil},
		rule[bool]{EnvAllowUncappedTokens, parseBool, func(c *Config) *bool { return &c.AllowUncappedTokens }, nil},
		rule[[]common.Address]{EnvAllowTo, valueOnly(parseAllowTo), func(c *Config) *[]common.Address { return &c.AllowTo }, nil},
		rule[CallsAllowed]{EnvAllowCalls, valueOnly(parseAllowCalls), func(c *Config) *CallsAllowed { return &c.AllowCalls }, nil},
		rule[bool]{EnvAllowTypedData, parseChoice(map[string]bool{"known": false, "any": true}, "known or any", "known", "any"), func(c *Config) *bool { return &c.AllowTypedDataAny }, nil},
		rule[time.Duration]{EnvSignatureValidity, parseDuration(MinSignatureMaxValidity, MaxSignatureMaxValidity, "a Go duration between 30s and 168h, like 1h"), func(c *Config) *time.Duration { return &c.SignatureValidity }, nil},
		rule[PayeesAllowed]{EnvAllowPayTo, valueOnly(parseAllowPayTo), func(c *Config) *PayeesAllowed { return &c.AllowPayTo }, nil},
		rule[[]PriceFeed]{EnvPriceFeeds, parsePriceFeeds, func(c *Config) *[]PriceFeed { return &c.PriceFeeds }, nil},
		rule[[]CapEntry]{EnvUSDUnpriced, parseUSDUnpriced, func(c *Config) *[]CapEntry { return &c.USDUnpriced }, nil},
		rule[string]{EnvTools, parseChoice(map[string]string{"all": "all", "read": "read"}, "all or read", "all", "read"), func(c *Config) *string { return &c.Tools }, nil},
		rule[string]{EnvConfirm, parseChoice(map[string]string{"token": "token", "human": "human", "elicit": "elicit"}, "token, human or elicit", "token", "human", "elicit"), func(c *Config) *string { return &c.Confirm }, nil},
		rule[time.Duration]{EnvConfirmTTL, parseDuration(MinConfirmTTL, MaxConfirmTTL, "a Go duration between 10s and 1h, like 5m"), func(c *Config) *time.Duration { return &c.ConfirmTTL }, nil},
		rule[slog.Level]{EnvLog, parseChoice(map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}, "debug, info, warn or error", "debug", "info", "warn", "error"), func(c *Config) *slog.Level { return &c.LogLevel }, nil},
		rule[time.Duration]{EnvReceiptTimeout, parseDuration(MinReceiptTimeout, MaxReceiptTimeout, "a Go duration between 1s and 30m, like 60s"), func(c *Config) *time.Duration { return &c.ReceiptTimeout }, func(c *Config, _ string) { c.ReceiptTimeoutSet = true }},
		rule[time.Duration]{EnvRPCTimeout, parseDuration(MinRPCTimeout, MaxRPCTimeout, "a Go duration between 1s and 5m, like 20s"), func(c *Config) *time.Duration { return &c.RPCTimeout }, nil},
		rule[int]{EnvRPCBatchLimit, parseCount[int](MaxRPCBatchLimit, "a whole number of requests from 1 to 1000, like 10"), func(c *Config) *int { return &c.RPCBatchLimit }, nil},
		rule[uint64]{EnvConfirmations, parseCount[uint64](MaxConfirmations, "a whole number of blocks from 1 to 64, like 1"), func(c *Config) *uint64 { return &c.Confirmations }, func(c *Config, _ string) { c.ConfirmationsSet = true }},
	} {
		m[r.name()] = r
	}
	return m
}()

func (r rule[T]) name() string { return r.variable }

// valueOnly is a parser of the value alone as a rule's parse.
func valueOnly[T any](parse func(string) (T, *ConfigError)) func(name, value, home string) (T, *ConfigError) {
	return func(_, value, _ string) (T, *ConfigError) { return parse(value) }
}

// parseStateURL is WALLETGATE_STATE_URL's: a postgres URL with a host.
func parseStateURL(name, value, _ string) (string, *ConfigError) {
	if problem := stateURLProblem(value); problem != "" {
		return "", &ConfigError{Var: name, Value: RedactURL(value), Expected: "a postgres:// or postgresql:// URL with a host, like postgres://walletgate@db.internal:5432/walletgate (" + problem + ")"}
	}
	return value, nil
}

// parsePath is a path setting's: checked, its ~ or $HOME expanded.
func parsePath(name, value, home string) (string, *ConfigError) {
	if err := checkPath(name, value); err != nil {
		return "", err
	}
	return expandHome(name, value, home)
}

// parseWatchAddress is WALLETGATE_ADDRESS's: one strict address.
func parseWatchAddress(name, value, _ string) (*common.Address, *ConfigError) {
	a, err := ParseAddress(value)
	if err != nil {
		return nil, configError(name, value, "an address, 0x followed by 40 hex digits ("+err.(*AddressError).Reason+")")
	}
	return &a, nil
}

// parsePriceFeeds is WALLETGATE_PRICE_FEEDS's: ASSET=0xFEED items.
func parsePriceFeeds(name, value, _ string) ([]PriceFeed, *ConfigError) {
	feeds, err := ParsePriceFeeds(value)
	if err != nil {
		return nil, configError(name, value, "a list of ASSET=0xFEED items, like ETH=0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419/1h,base:USDC=0x… ("+err.Error()+")")
	}
	return feeds, nil
}

// parseUSDUnpriced is WALLETGATE_USD_UNPRICED's: a list of assets.
func parseUSDUnpriced(name, value, _ string) ([]CapEntry, *ConfigError) {
	list, err := ParseUnpriced(value)
	if err != nil {
		return nil, configError(name, value, "a list of assets, like DAI,base:0x… ("+err.Error()+")")
	}
	return list, nil
}

// parseCaps is a cap window's: a cap list.
func parseCaps(name, value, _ string) ([]CapEntry, *ConfigError) {
	entries, err := ParseCapList(value)
	if err != nil {
		return nil, configError(name, value, "a cap list of ASSET=AMOUNT items, like ETH=0.01,USDC=25,0xdAC17F958D2ee523a2206206994597C13D831ec7=25 ("+err.Error()+")")
	}
	return entries, nil
}

// parseHumanAbove is WALLETGATE_HUMAN_ABOVE's: a cap list with amounts.
func parseHumanAbove(name, value, home string) ([]CapEntry, *ConfigError) {
	entries, err := parseCaps(name, value, home)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(entries, func(e CapEntry) bool { return e.Amount == Unlimited }); i >= 0 {
		return nil, configError(name, value, "a list of ASSET=AMOUNT items with amounts, like ETH=0.05,USDC=20 ("+entries[i].Asset+"="+Unlimited+": unlimited is for the cap windows; leave an asset out here and a person approves its writes)")
	}
	return entries, nil
}

// parseBool is a switch's: true or false, in any letter case.
func parseBool(name, value, _ string) (bool, *ConfigError) {
	switch {
	case asciiEqualFold(value, "true"):
		return true, nil
	case asciiEqualFold(value, "false"):
		return false, nil
	}
	return false, configError(name, value, "true or false")
}

// parseChoice is one of choices (in any letter case, as oneOf takes them),
// each meaning its value in means.
func parseChoice[T any](means map[string]T, expected string, choices ...string) func(name, value, home string) (T, *ConfigError) {
	return func(name, value, _ string) (T, *ConfigError) {
		v, ok := oneOf(value, choices...)
		if !ok {
			var zero T
			return zero, configError(name, value, expected)
		}
		return means[v], nil
	}
}

// parseDuration is a Go duration between lo and hi.
func parseDuration(lo, hi time.Duration, expected string) func(name, value, home string) (time.Duration, *ConfigError) {
	return func(name, value, _ string) (time.Duration, *ConfigError) {
		d, ok := parseDurationIn(value, lo, hi)
		if !ok {
			return 0, configError(name, value, expected)
		}
		return d, nil
	}
}

// parseCount is a whole number from 1 to most.
func parseCount[T int | uint64](most uint64, expected string) func(name, value, home string) (T, *ConfigError) {
	return func(name, value, _ string) (T, *ConfigError) {
		n, ok := parseDecimalUint(value)
		if !ok || n < 1 || n > most {
			return 0, configError(name, value, expected)
		}
		return T(n), nil
	}
}

// checkKeySources enforces the rules between the key variables: a keystore
// needs a password file and vice versa, a key file excludes a keystore, and a
// watch-only address excludes any key.
func (c *Config) checkKeySources() *ConfigError {
	switch {
	case c.Keystore != "" && c.KeyFile != "":
		return configError(EnvKeyFile, c.KeyFile, "to be unset when WALLETGATE_KEYSTORE is set: give one key source, a keystore with its password file or a key file")
	case c.Keystore != "" && c.PasswordFile == "":
		return &ConfigError{Var: EnvPasswordFile, Expected: "the path of a file holding the keystore password, because WALLETGATE_KEYSTORE is set"}
	case c.PasswordFile != "" && c.Keystore == "":
		return configError(EnvPasswordFile, c.PasswordFile, "to be set only together with WALLETGATE_KEYSTORE, the keystore file this password unlocks")
	case c.Address != nil && (c.Keystore != "" || c.KeyFile != ""):
		return configError(EnvAddress, c.Address.Hex(), "to be unset when a key is configured (WALLETGATE_KEYSTORE or WALLETGATE_KEY_FILE): the key determines the address, so giving both is ambiguous")
	}
	return nil
}

// parseAllowTo parses WALLETGATE_ALLOW_TO: comma-separated recipients, no
// empty items, no repeats, no zero address.
func parseAllowTo(value string) ([]common.Address, *ConfigError) {
	const expected = "comma-separated recipient addresses, each 0x followed by 40 hex digits"
	items := strings.Split(value, ",")
	if len(items) > MaxAllowTo {
		return nil, configError(EnvAllowTo, value, fmt.Sprintf("%s (at most %d; got %d)", expected, MaxAllowTo, len(items)))
	}
	list := make([]common.Address, 0, len(items))
	for i, raw := range items {
		item := trimSpaceTab(raw)
		if item == "" {
			return nil, configError(EnvAllowTo, value, fmt.Sprintf("%s (item %d is empty)", expected, i+1))
		}
		a, err := ParseRecipient(item)
		if err != nil {
			return nil, configError(EnvAllowTo, value, fmt.Sprintf("%s (item %d: %s)", expected, i+1, err.Error()))
		}
		if slices.Contains(list, a) {
			return nil, configError(EnvAllowTo, value, fmt.Sprintf("%s (item %d repeats %s)", expected, i+1, a.Hex()))
		}
		list = append(list, a)
	}
	return list, nil
}

// checkPath refuses a path containing control characters (a pasted newline,
// for instance). Paths are otherwise taken as given; whether they exist is for
// the caller to find out.
// homeOf is the user's home directory as environ gives it (HOME, or
// USERPROFILE where HOME is unset, as on Windows); "" when neither is.
func homeOf(environ []string) string {
	var home, profile string
	for _, e := range environ {
		switch {
		case strings.HasPrefix(e, "HOME="):
			home = e[len("HOME="):]
		case strings.HasPrefix(e, "USERPROFILE="):
			profile = e[len("USERPROFILE="):]
		}
	}
	if home != "" {
		return home
	}
	return profile
}

// expandHome expands a leading ~ or $HOME (${HOME}) in a path setting to
// home, as a shell would and a JSON or TOML client configuration does not.
// What cannot be expanded is refused in words: ~user, another variable,
// or a home that environ does not name.
func expandHome(name, value, home string) (string, *ConfigError) {
	rest, ok := "", false
	for _, prefix := range []string{"~", "$HOME", "${HOME}"} {
		if value == prefix {
			rest, ok = "", true
		} else if r, found := strings.CutPrefix(value, prefix); found && (r[0] == '/' || r[0] == '\\') {
			rest, ok = r, true
		}
		if ok {
			break
		}
	}
	switch {
	case ok && home == "":
		return "", configError(name, value, "a full path: "+value[:1]+"… names the home directory, but neither HOME nor USERPROFILE is set for walletgate (clients often start servers with few variables)")
	case ok:
		return strings.TrimRight(home, "/\\") + rest, nil
	case strings.HasPrefix(value, "~"):
		return "", configError(name, value, "a full path, or one starting with ~/ or $HOME/ for your own home directory (~user is not expanded)")
	case looksLikeVariable(value):
		return "", configError(name, value, "a full path: only a leading ~/ or $HOME/ is expanded, no other variable")
	}
	return value, nil
}

// looksLikeVariable reports whether s holds $NAME or ${…}, which a shell
// would have expanded.
func looksLikeVariable(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if c := s[i+1]; s[i] == '$' && (c == '{' || c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return true
		}
	}
	return false
}

func checkPath(name, value string) *ConfigError {
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < ' ' || c == 0x7f {
			return configError(name, value, "a file system path without control characters")
		}
	}
	return nil
}

// parseDecimalUint parses ASCII decimal digits only (no sign, no 0x, no
// underscores) into a uint64.
func parseDecimalUint(s string) (uint64, bool) {
	if s == "" || len(s) > 20 || !onlyBytes(s, "0123456789") {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// parseDurationIn parses a Go duration and requires lo ≤ d ≤ hi.
func parseDurationIn(s string, lo, hi time.Duration) (time.Duration, bool) {
	if len(s) > 32 {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < lo || d > hi {
		return 0, false
	}
	return d, true
}

// oneOf matches s against lower-case choices ignoring ASCII case and returns
// the matching choice.
func oneOf(s string, choices ...string) (string, bool) {
	for _, c := range choices {
		if asciiEqualFold(s, c) {
			return c, true
		}
	}
	return "", false
}

// parseOpenBrowser reads WALLETGATE_OPEN_BROWSER: on (also true, 1), off
// (also false, 0), or the absolute path of a program (~ and $HOME expanded).
func parseOpenBrowser(value, home string) (string, *ConfigError) {
	switch {
	case asciiEqualFold(value, "on"), asciiEqualFold(value, "true"), value == "1":
		return OpenBrowserOn, nil
	case asciiEqualFold(value, "off"), asciiEqualFold(value, "false"), value == "0":
		return OpenBrowserOff, nil
	}
	const expected = "on, off, or the absolute path of a program that opens the address it is given"
	if err := checkPath(EnvOpenBrowser, value); err != nil {
		return "", configError(EnvOpenBrowser, value, expected+" ("+err.Expected+")")
	}
	path, err := expandHome(EnvOpenBrowser, value, home)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(path) {
		return "", configError(EnvOpenBrowser, value, expected+" (a relative path would depend on the directory the client starts walletgate in)")
	}
	return path, nil
}
