package policy

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// canary is a secret that must never appear in an error message.
const canary = "CANARY7f3a9e"

func TestLoadDefaults(t *testing.T) {
	cfg, err := Load([]string{"HOME=/root", "PATH=/bin", "=C:=C:\\"})
	require.NoError(t, err)
	require.Equal(t, Config{
		SignatureValidity: time.Hour,
		Confirm:           "token",
		ConfirmTTL:        5 * time.Minute,
		LogLevel:          slog.LevelInfo,
		ReceiptTimeout:    60 * time.Second,
		RPCTimeout:        20 * time.Second,
		Confirmations:     1,
	}, cfg)
}

// TestLoadEachVariable sets one variable at a time (plus what it needs) and
// checks a good value lands in Config and a bad one is refused with a message
// naming the variable and the expected form.
func TestLoadEachVariable(t *testing.T) {
	addr := mustAddress(usdtChecksum)
	payeeA, payeeB := mustAddress("0x00000000000000000000000000000000000000a1"), mustAddress("0x00000000000000000000000000000000000000b2")
	type good struct {
		name  string
		value string
		check func(t *testing.T, c Config)
	}
	type bad struct {
		name     string
		value    string
		expected string // fragment of the expected form in the message
	}
	tests := []struct {
		variable string
		extra    []string // other entries the variable needs to be valid
		good     []good
		bad      []bad
	}{
		{EnvRPC, nil, []good{
			{"one url", "https://node.example:8545", func(t *testing.T, c Config) { require.Equal(t, []string{"https://node.example:8545"}, c.RPC) }},
			{"fallbacks with spaces", "http://127.0.0.1:8545, wss://node.example/ws/KEY", func(t *testing.T, c Config) {
				require.Equal(t, []string{"http://127.0.0.1:8545", "wss://node.example/ws/KEY"}, c.RPC)
			}},
			{"ws", "ws://localhost:8546", func(t *testing.T, c Config) { require.Equal(t, []string{"ws://localhost:8546"}, c.RPC) }},
		}, []bad{
			{"no scheme", "localhost:8545", "no scheme://host"},
			{"ftp", "ftp://node.example", "scheme ftp"},
			{"no host", "https:///path", "no scheme://host"},
			{"port only", "http://:8545", "no host name"},
			{"empty item", "https://a.example,,https://b.example", "item 2 is empty"},
			{"unparseable", "https://node.example:port/", "not a valid URL"},
			{"relative", "/v3/KEY", "no scheme://host"},
			{"too many", strings.Repeat("http://a.example,", MaxRPCURLs) + "http://a.example", "at most 16"},
		}},
		{EnvChainID, nil, []good{
			{"mainnet", "1", func(t *testing.T, c Config) { require.Equal(t, uint64(1), c.ChainID) }},
			{"sepolia", "11155111", func(t *testing.T, c Config) { require.Equal(t, uint64(11155111), c.ChainID) }},
			{"max uint64", "18446744073709551615", func(t *testing.T, c Config) { require.Equal(t, uint64(18446744073709551615), c.ChainID) }},
			{"space", " 1", func(t *testing.T, c Config) { require.Equal(t, uint64(1), c.ChainID) }},
			{"name", "sepolia", func(t *testing.T, c Config) { require.Equal(t, uint64(11155111), c.ChainID) }},
			{"name any case", "Base", func(t *testing.T, c Config) { require.Equal(t, uint64(8453), c.ChainID) }},
			{"several, the first the default", "base, 1", func(t *testing.T, c Config) {
				require.Equal(t, uint64(8453), c.ChainID)
				require.Nil(t, c.Chains, "no node configured: no chains paired")
			}},
		}, []bad{
			{"zero", "0", "greater than 0"},
			{"hex", "0x1", "decimal chain id"},
			{"sign", "+1", "decimal chain id"},
			{"underscore", "11_155_111", "decimal chain id"},
			{"overflow", "18446744073709551616", "decimal chain id"},
			{"unknown name", "basee", "item 1 is not one"},
			{"listed twice", "1,ethereum", "chain 1 is listed twice"},
			{"empty item", "1,,8453", "item 2 is not one"},
			{"too many", "1,2,3,4,5,6,7,8,9", "at most 8 chains"},
		}},
		{EnvKeystore, []string{EnvPasswordFile + "=/run/pw"}, []good{
			{"path", "/keys/UTC--wallet.json", func(t *testing.T, c Config) {
				require.Equal(t, "/keys/UTC--wallet.json", c.Keystore)
				require.Equal(t, "/run/pw", c.PasswordFile)
			}},
		}, []bad{
			{"newline in path", "/keys/a\n", "without control characters"},
		}},
		{EnvPasswordFile, []string{EnvKeystore + "=/keys/k.json"}, []good{
			{"path", "/run/secrets/pw", func(t *testing.T, c Config) { require.Equal(t, "/run/secrets/pw", c.PasswordFile) }},
		}, []bad{
			{"nul in path", "/run/pw\x00", "without control characters"},
		}},
		{EnvKeyFile, nil, []good{
			{"path", "/run/secrets/key", func(t *testing.T, c Config) { require.Equal(t, "/run/secrets/key", c.KeyFile) }},
		}, []bad{
			{"tab in path", "/run/\tkey", "without control characters"},
		}},
		{EnvAddress, nil, []good{
			{"checksummed", usdtChecksum, func(t *testing.T, c Config) { require.Equal(t, &addr, c.Address) }},
			{"lowercase", strings.ToLower(usdtChecksum), func(t *testing.T, c Config) { require.Equal(t, &addr, c.Address) }},
		}, []bad{
			{"bad checksum", "0xDAC17F958D2ee523a2206206994597C13D831ec7", "EIP-55 checksum"},
			{"short", "0x1234", "0x followed by 40 hex digits"},
		}},
		{EnvCapPerTx, nil, []good{
			{"list", "ETH=0.01,USDC=25", func(t *testing.T, c Config) {
				require.Equal(t, []CapEntry{{"ETH", "0.01", 0}, {"USDC", "25", 0}}, c.CapPerTx)
			}},
		}, []bad{
			{"exponent", "ETH=1e18", "exponent"},
			{"duplicate", "ETH=1,ETH=2", "repeats"},
		}},
		{EnvCapPerSession, nil, []good{
			{"list", "ETH=0.1", func(t *testing.T, c Config) { require.Equal(t, []CapEntry{{"ETH", "0.1", 0}}, c.CapPerSession) }},
		}, []bad{
			{"no equals", "ETH", "has no '='"},
		}},
		{EnvCapPerDay, nil, []good{
			{"list", "DAI=100", func(t *testing.T, c Config) { require.Equal(t, []CapEntry{{"DAI", "100", 0}}, c.CapPerDay) }},
		}, []bad{
			{"trailing comma", "DAI=100,", "is empty"},
		}},
		{EnvAllowMainnet, nil, []good{
			{"true", "true", func(t *testing.T, c Config) { require.True(t, c.AllowMainnet) }},
			{"TRUE", "TRUE", func(t *testing.T, c Config) { require.True(t, c.AllowMainnet) }},
			{"false", "False", func(t *testing.T, c Config) { require.False(t, c.AllowMainnet) }},
		}, []bad{
			{"one", "1", "true or false"},
			{"yes", "yes", "true or false"},
			{"on", "on", "true or false"},
			{"spaced", "true ", "true or false"},
			{"long s", "fal\u017fe", "true or false"},
		}},
		{EnvAllowUncappedTokens, nil, []good{
			{"true", "true", func(t *testing.T, c Config) { require.True(t, c.AllowUncappedTokens) }},
			{"false", "false", func(t *testing.T, c Config) { require.False(t, c.AllowUncappedTokens) }},
		}, []bad{
			{"t", "t", "true or false"},
			{"zero", "0", "true or false"},
		}},
		{EnvAllowTo, nil, []good{
			{"two", usdtChecksum + ", 0x4200000000000000000000000000000000000006", func(t *testing.T, c Config) {
				require.Equal(t, []common.Address{addr, mustAddress("0x4200000000000000000000000000000000000006")}, c.AllowTo)
			}},
		}, []bad{
			{"zero address", "0x0000000000000000000000000000000000000000", "zero address"},
			{"repeat", usdtChecksum + "," + strings.ToLower(usdtChecksum), "item 2 repeats"},
			{"empty item", usdtChecksum + ",", "item 2 is empty"},
			{"bad checksum", "0xDAC17F958D2ee523a2206206994597C13D831ec7", "EIP-55"},
		}},
		{EnvAllowCalls, nil, []good{
			{"any", "any", func(t *testing.T, c Config) { require.True(t, c.AllowCalls.Any) }},
			{"a contract and a function", usdtChecksum + ",0x4200000000000000000000000000000000000006:0x095ea7b3", func(t *testing.T, c Config) {
				require.Equal(t, usdtChecksum+",0x4200000000000000000000000000000000000006:0x095ea7b3", c.AllowCalls.String())
				require.True(t, c.AllowCalls.Allows(addr, []byte{1, 2, 3, 4}))
				require.True(t, c.AllowCalls.Allows(mustAddress("0x4200000000000000000000000000000000000006"), []byte{0x09, 0x5e, 0xa7, 0xb3, 0}))
				require.False(t, c.AllowCalls.Allows(mustAddress("0x4200000000000000000000000000000000000006"), []byte{0xa9, 0x05, 0x9c, 0xbb}))
				require.False(t, c.AllowCalls.Allows(mustAddress("0x4200000000000000000000000000000000000007"), nil))
			}},
		}, []bad{
			{"zero address", "0x0000000000000000000000000000000000000000", "zero address"},
			{"short selector", usdtChecksum + ":0x095ea7", "8 hex digits"},
			{"selector without 0x", usdtChecksum + ":095ea7b3", "8 hex digits"},
			{"repeat", usdtChecksum + "," + usdtChecksum, "item 2 repeats"},
			{"empty item", usdtChecksum + ",", "item 2 is empty"},
			{"bad checksum", "0xDAC17F958D2ee523a2206206994597C13D831ec7", "EIP-55"},
			{"any among others", "any," + usdtChecksum, "item 1"},
		}},
		{EnvAllowTypedData, nil, []good{
			{"any", "any", func(t *testing.T, c Config) { require.True(t, c.AllowTypedDataAny) }},
			{"known", "known", func(t *testing.T, c Config) { require.False(t, c.AllowTypedDataAny) }},
		}, []bad{
			{"true", "true", "known or any"},
			{"all", "all", "known or any"},
		}},
		{EnvSignatureValidity, nil, []good{
			{"10m", "10m", func(t *testing.T, c Config) { require.Equal(t, 10*time.Minute, c.SignatureValidity) }},
		}, []bad{
			{"too short", "10s", "between 30s and 168h"},
			{"too long", "200h", "between 30s and 168h"},
			{"no unit", "3600", "between 30s and 168h"},
		}},
		{EnvAllowPayTo, nil, []good{
			{"an address and pinned hosts", usdtChecksum + ",API.example.com=" + payeeA.Hex() + ",127.0.0.1:4021=" + payeeB.Hex(), func(t *testing.T, c Config) {
				require.Equal(t, []common.Address{addr}, c.AllowPayTo.Addresses)
				require.Equal(t, []HostPin{{"api.example.com", payeeA}, {"127.0.0.1:4021", payeeB}}, c.AllowPayTo.Pins)
				require.Equal(t, usdtChecksum+",api.example.com="+payeeA.Hex()+",127.0.0.1:4021="+payeeB.Hex(), c.AllowPayTo.String())
				require.True(t, c.AllowPayTo.Allows(addr, "evil.example"), "an address item binds the payee, whatever the server says it is")
				require.True(t, c.AllowPayTo.Allows(payeeA, "api.example.com:443"), "a pinned host without a port matches any port")
				require.True(t, c.AllowPayTo.Allows(payeeA, "elsewhere.example"), "a pinned address is an allowed payee")
				require.False(t, c.AllowPayTo.Allows(common.Address{1}, "api.example.com"), "a server claiming a pinned host is paid only at its pinned address")
				require.False(t, c.AllowPayTo.Allows(addr, "api.example.com"), "even an otherwise allowed address is not paid for a host pinned to another")
				require.False(t, c.AllowPayTo.Allows(payeeA, "127.0.0.1:4021"), "the pin of 127.0.0.1:4021 is payeeB")
				require.True(t, c.AllowPayTo.Allows(payeeB, "127.0.0.1:4021"))
				require.True(t, c.AllowPayTo.Allows(payeeA, "127.0.0.1:4022"), "a pinned host with a port pins only that port")
				pin, ok := c.AllowPayTo.Pinned("API.example.com:8443")
				require.True(t, ok)
				require.Equal(t, payeeA, pin)
				_, ok = c.AllowPayTo.Pinned("api.example.com.evil.example")
				require.False(t, ok)
			}},
		}, []bad{
			{"a bare host", "api.example.com", "item 1, api.example.com, is a host without its payee address"},
			{"a bare host among addresses", usdtChecksum + ",127.0.0.1:4021", "name the address it pays: 127.0.0.1:4021=0x"},
			{"url", "https://api.example.com/x", "neither an address nor host=address"},
			{"a pin to the zero address", "api.example.com=0x0000000000000000000000000000000000000000", "zero address"},
			{"a pin with a bad address", "api.example.com=0x1234", "item 1"},
			{"a pin without a host", "=" + payeeA.Hex(), "neither an address nor host=address"},
			{"zero address", "0x0000000000000000000000000000000000000000", "zero address"},
			{"repeat", "a.example=" + payeeA.Hex() + ",A.example=" + payeeB.Hex(), "item 2 repeats a.example"},
			{"empty item", usdtChecksum + ",", "item 2 is empty"},
		}},
		{EnvTools, nil, []good{
			{"all", "all", func(t *testing.T, c Config) { require.Equal(t, "all", c.Tools) }},
			{"read", "READ", func(t *testing.T, c Config) { require.Equal(t, "read", c.Tools) }},
		}, []bad{
			{"write", "write", "all or read"},
			{"readonly", "readonly", "all or read"},
		}},
		{EnvConfirm, nil, []good{
			{"token", "token", func(t *testing.T, c Config) { require.Equal(t, "token", c.Confirm) }},
			{"human", "human", func(t *testing.T, c Config) { require.Equal(t, "human", c.Confirm) }},
			{"elicit", "Elicit", func(t *testing.T, c Config) { require.Equal(t, "elicit", c.Confirm) }},
		}, []bad{
			{"none", "none", "token, human or elicit"},
		}},
		{EnvConfirmTTL, nil, []good{
			{"minutes", "2m", func(t *testing.T, c Config) { require.Equal(t, 2*time.Minute, c.ConfirmTTL) }},
			{"lower bound", "10s", func(t *testing.T, c Config) { require.Equal(t, 10*time.Second, c.ConfirmTTL) }},
			{"upper bound", "1h", func(t *testing.T, c Config) { require.Equal(t, time.Hour, c.ConfirmTTL) }},
		}, []bad{
			{"words", "5 minutes", "a Go duration between 10s and 1h, like 5m"},
			{"bare number", "300", "a Go duration between 10s and 1h"},
			{"too short", "9s", "between 10s and 1h"},
			{"too long", "61m", "between 10s and 1h"},
			{"negative", "-5m", "between 10s and 1h"},
		}},
		{EnvStateDir, nil, []good{
			{"path", "/var/lib/walletgate", func(t *testing.T, c Config) { require.Equal(t, "/var/lib/walletgate", c.StateDir) }},
		}, []bad{
			{"newline", "/var/lib\n", "without control characters"},
		}},
		{EnvStateURL, nil, []good{
			{"tcp", "postgres://walletgate:s3cret@db.internal:5432/walletgate?sslmode=require", func(t *testing.T, c Config) {
				require.Equal(t, "postgres://walletgate:s3cret@db.internal:5432/walletgate?sslmode=require", c.StateURL)
			}},
			{"unix socket", "postgresql://walletgate@localhost/walletgate?host=/run/postgresql", func(t *testing.T, c Config) {
				require.Equal(t, "postgresql://walletgate@localhost/walletgate?host=/run/postgresql", c.StateURL)
			}},
		}, []bad{
			{"mysql", "mysql://db.internal/walletgate", "scheme mysql"},
			{"no host", "postgres:///walletgate", "no host"},
		}},
		{EnvStatePasswordFile, nil, []good{
			{"path", "/run/secrets/pg", func(t *testing.T, c Config) { require.Equal(t, "/run/secrets/pg", c.StatePasswordFile) }},
		}, []bad{
			{"newline", "/run\n", "without control characters"},
		}},
		{EnvDevArtifacts, nil, []good{
			{"path", "/opt/uniswap/node_modules", func(t *testing.T, c Config) { require.Equal(t, "/opt/uniswap/node_modules", c.DevArtifacts) }},
		}, []bad{
			{"newline", "/opt\n", "without control characters"},
		}},
		{EnvLog, nil, []good{
			{"debug", "debug", func(t *testing.T, c Config) { require.Equal(t, slog.LevelDebug, c.LogLevel) }},
			{"warn", "WARN", func(t *testing.T, c Config) { require.Equal(t, slog.LevelWarn, c.LogLevel) }},
			{"error", "error", func(t *testing.T, c Config) { require.Equal(t, slog.LevelError, c.LogLevel) }},
			{"info", "info", func(t *testing.T, c Config) { require.Equal(t, slog.LevelInfo, c.LogLevel) }},
		}, []bad{
			{"warning", "warning", "debug, info, warn or error"},
			{"slog offset form", "INFO+2", "debug, info, warn or error"},
		}},
		{EnvReceiptTimeout, nil, []good{
			{"seconds", "90s", func(t *testing.T, c Config) { require.Equal(t, 90*time.Second, c.ReceiptTimeout) }},
			{"lower bound", "1s", func(t *testing.T, c Config) { require.Equal(t, time.Second, c.ReceiptTimeout) }},
			{"upper bound", "30m", func(t *testing.T, c Config) { require.Equal(t, 30*time.Minute, c.ReceiptTimeout) }},
		}, []bad{
			{"too short", "500ms", "between 1s and 30m"},
			{"too long", "31m", "between 1s and 30m"},
			{"words", "a minute", "a Go duration"},
		}},
		{EnvRPCTimeout, nil, []good{
			{"seconds", "5s", func(t *testing.T, c Config) { require.Equal(t, 5*time.Second, c.RPCTimeout) }},
			{"lower bound", "1s", func(t *testing.T, c Config) { require.Equal(t, time.Second, c.RPCTimeout) }},
			{"upper bound", "5m", func(t *testing.T, c Config) { require.Equal(t, 5*time.Minute, c.RPCTimeout) }},
		}, []bad{
			{"too short", "100ms", "between 1s and 5m"},
			{"too long", "6m", "between 1s and 5m"},
			{"a number", "20", "a Go duration"},
		}},
		{EnvRPCBatchLimit, nil, []good{
			{"ten", "10", func(t *testing.T, c Config) { require.Equal(t, 10, c.RPCBatchLimit) }},
			{"lower bound", "1", func(t *testing.T, c Config) { require.Equal(t, 1, c.RPCBatchLimit) }},
			{"upper bound", "1000", func(t *testing.T, c Config) { require.Equal(t, 1000, c.RPCBatchLimit) }},
		}, []bad{
			{"zero", "0", "from 1 to 1000"},
			{"too many", "1001", "from 1 to 1000"},
			{"not a number", "ten", "a whole number"},
		}},
		{EnvHumanAbove, []string{EnvConfirm + "=human"}, []good{
			{"list", "ETH=0.05,USDC=20", func(t *testing.T, c Config) {
				require.Equal(t, []CapEntry{{"ETH", "0.05", 0}, {"USDC", "20", 0}}, c.HumanAbove)
			}},
		}, []bad{
			{"exponent", "ETH=5e-2", "exponent"},
			{"duplicate", "USDC=1,USDC=2", "repeats"},
			{"unlimited", "ETH=0.05,USDC=unlimited", "unlimited is for the cap windows"},
		}},
		{EnvPriceFeeds, nil, []good{
			{"two feeds", "ETH=0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419/24h,USDC=0x8fFfFfd4AfB6115b954Bd326cbe7B4BA576818f6", func(t *testing.T, c Config) {
				require.Len(t, c.PriceFeeds, 2)
				require.Equal(t, 24*time.Hour, c.PriceFeeds[0].Heartbeat)
				require.Equal(t, DefaultHeartbeat, c.PriceFeeds[1].Heartbeat)
			}},
		}, []bad{
			{"no feed", "ETH", "ASSET=0xFEED"},
			{"bad address", "ETH=0x1234", "bad feed address"},
		}},
		{EnvUSDUnpriced, nil, []good{
			{"one", "dai", func(t *testing.T, c Config) { require.Equal(t, []CapEntry{{Asset: "DAI"}}, c.USDUnpriced) }},
		}, []bad{
			{"usd", "USD", "needs no price"},
		}},
		{EnvOpenBrowser, nil, []good{
			{"off", "off", func(t *testing.T, c Config) { require.Equal(t, OpenBrowserOff, c.OpenBrowser) }},
			{"0", "0", func(t *testing.T, c Config) { require.Equal(t, OpenBrowserOff, c.OpenBrowser) }},
			{"true", "TRUE", func(t *testing.T, c Config) { require.Equal(t, OpenBrowserOn, c.OpenBrowser) }},
			{"a program", "/usr/bin/firefox", func(t *testing.T, c Config) { require.Equal(t, "/usr/bin/firefox", c.OpenBrowser) }},
		}, []bad{
			{"relative program", "firefox", "absolute path"},
			{"yes", "./open", "absolute path"},
			{"control character", "/usr/bin/x\x01", "control characters"},
		}},
		{EnvConfirmations, nil, []good{
			{"one", "1", func(t *testing.T, c Config) { require.Equal(t, uint64(1), c.Confirmations) }},
			{"max", "64", func(t *testing.T, c Config) { require.Equal(t, uint64(64), c.Confirmations) }},
		}, []bad{
			{"zero", "0", "from 1 to 64"},
			{"too many", "65", "from 1 to 64"},
			{"negative", "-1", "from 1 to 64"},
			{"float", "1.0", "from 1 to 64"},
		}},
	}

	covered := map[string]bool{}
	for _, tc := range tests {
		covered[tc.variable] = true
		t.Run(tc.variable, func(t *testing.T) {
			require.NotEmpty(t, tc.good)
			require.NotEmpty(t, tc.bad)
			for _, g := range tc.good {
				t.Run("good/"+g.name, func(t *testing.T) {
					cfg, err := Load(append([]string{tc.variable + "=" + g.value}, tc.extra...))
					require.NoError(t, err)
					g.check(t, cfg)
				})
			}
			for _, b := range tc.bad {
				t.Run("bad/"+b.name, func(t *testing.T) {
					cfg, err := Load(append([]string{tc.variable + "=" + b.value}, tc.extra...))
					require.Error(t, err, "accepted as %+v", cfg)
					var ce *ConfigError
					require.True(t, errors.As(err, &ce), "error %T is not *ConfigError", err)
					require.Equal(t, tc.variable, ce.Var)
					msg := err.Error()
					require.True(t, strings.HasPrefix(msg, tc.variable+"="), "message %q does not start with the variable", msg)
					require.Contains(t, msg, ": expected ")
					require.Contains(t, msg, b.expected)
					require.Equal(t, Config{}, cfg)
				})
			}
		})
	}
	for _, v := range Variables {
		require.True(t, covered[v.Name], "no test cases for %s", v.Name)
	}
}

func TestStateURLPasswordIsNeverShown(t *testing.T) {
	_, err := Load([]string{"WALLETGATE_STATE_URL=mysql://walletgate:s3cret@db.internal/walletgate"})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "s3cret")
	require.Contains(t, err.Error(), "mysql://db.internal")
}

func TestConfigErrorMessage(t *testing.T) {
	_, err := Load([]string{"WALLETGATE_CONFIRM_TTL=5 minutes"})
	require.EqualError(t, err, `WALLETGATE_CONFIRM_TTL="5 minutes": expected a Go duration between 10s and 1h, like 5m`)

	_, err = Load([]string{"WALLETGATE_TOOLS=all\n\u202eevil"})
	require.EqualError(t, err, `WALLETGATE_TOOLS="all\n\u202eevil": expected all or read`)

	_, err = Load([]string{"WALLETGATE_TOOLS=" + strings.Repeat("x", 1000)})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.LessOrEqual(t, len(ce.Value), maxValueDisplay+len("…"))
}

func TestLoadRefusesUnknownVariables(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		wantVar string
		want    string
	}{
		{"typo", []string{"WALLETGATE_CAP_PERTX=ETH=1"}, "WALLETGATE_CAP_PERTX", "did you mean WALLETGATE_CAP_PER_TX?"},
		{"plural", []string{"WALLETGATE_CONFIRMATION=2"}, "WALLETGATE_CONFIRMATION", "did you mean WALLETGATE_CONFIRMATIONS?"},
		{"lower case", []string{"walletgate_rpc=http://x.example"}, "walletgate_rpc", "write WALLETGATE_RPC"},
		{"far from anything", []string{"WALLETGATE_SOMETHING_ELSE=1"}, "WALLETGATE_SOMETHING_ELSE", "this name is unknown)"},
		{"empty value still refused", []string{"WALLETGATE_CAP_PERTX="}, "WALLETGATE_CAP_PERTX", "unknown"},
		{"no equals sign", []string{"WALLETGATE_CAPS"}, "WALLETGATE_CAPS", "unknown"},
		{"first in sorted order", []string{"WALLETGATE_ZZZ=1", "WALLETGATE_AAA=1"}, "WALLETGATE_AAA", "unknown"},
		{"unknown before bad values", []string{"WALLETGATE_CHAIN_ID=x", "WALLETGATE_ZZZ=1"}, "WALLETGATE_ZZZ", "unknown"},
		{"repeated", []string{"WALLETGATE_CHAIN_ID=1", "WALLETGATE_CHAIN_ID=2"}, "WALLETGATE_CHAIN_ID", "set once"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.environ)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.wantVar, ce.Var)
			require.Empty(t, ce.Value, "the value of an unknown or repeated variable is withheld")
			require.Contains(t, err.Error(), tc.want)
		})
	}
	// Other prefixes are none of Load's business.
	_, err := Load([]string{"WALLETGATEX=1", "MY_WALLETGATE_RPC=1", "XWALLETGATE_RPC=1"})
	require.NoError(t, err)
}

func TestLoadKeySourceRules(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		wantVar string
		want    string
	}{
		{"keystore without password", []string{"WALLETGATE_KEYSTORE=/k"}, EnvPasswordFile, "because WALLETGATE_KEYSTORE is set"},
		{"password without keystore", []string{"WALLETGATE_PASSWORD_FILE=/p"}, EnvPasswordFile, "only together with WALLETGATE_KEYSTORE"},
		{"keystore and key file", []string{"WALLETGATE_KEYSTORE=/k", "WALLETGATE_PASSWORD_FILE=/p", "WALLETGATE_KEY_FILE=/f"}, EnvKeyFile, "one key source"},
		{"address with key file", []string{"WALLETGATE_KEY_FILE=/f", "WALLETGATE_ADDRESS=" + usdtChecksum}, EnvAddress, "ambiguous"},
		{"address with keystore", []string{"WALLETGATE_KEYSTORE=/k", "WALLETGATE_PASSWORD_FILE=/p", "WALLETGATE_ADDRESS=" + usdtChecksum}, EnvAddress, "ambiguous"},
		{"empty password file counts as unset", []string{"WALLETGATE_KEYSTORE=/k", "WALLETGATE_PASSWORD_FILE="}, EnvPasswordFile, "because WALLETGATE_KEYSTORE is set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.environ)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.wantVar, ce.Var)
			require.True(t, strings.HasPrefix(err.Error(), tc.wantVar), "message %q", err)
			require.Contains(t, err.Error(), tc.want)
		})
	}

	valid := []struct {
		name    string
		environ []string
	}{
		{"keystore with password", []string{"WALLETGATE_KEYSTORE=/k", "WALLETGATE_PASSWORD_FILE=/p"}},
		{"key file alone", []string{"WALLETGATE_KEY_FILE=/f"}},
		{"watch-only", []string{"WALLETGATE_ADDRESS=" + usdtChecksum}},
		{"nothing", nil},
	}
	for _, tc := range valid {
		t.Run("valid/"+tc.name, func(t *testing.T) {
			_, err := Load(tc.environ)
			require.NoError(t, err)
		})
	}
}

func TestLoadReportsFirstProblemInVariablesOrder(t *testing.T) {
	bad := map[string]string{}
	for _, v := range Variables {
		bad[v.Name] = "\x01bad"
	}
	// Every permutation of the environment must report the same, first, variable.
	var environ []string
	for _, v := range Variables {
		environ = append(environ, v.Name+"="+bad[v.Name])
	}
	for shift := range environ {
		rotated := append(append([]string{}, environ[shift:]...), environ[:shift]...)
		_, err := Load(rotated)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, Variables[0].Name, ce.Var)
	}
	// Dropping the first bad variable moves the report to the next one.
	_, err := Load(environ[1:])
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, Variables[1].Name, ce.Var)
}

func TestLoadFullConfig(t *testing.T) {
	cfg, err := Load([]string{
		"WALLETGATE_RPC=https://a.example,https://b.example",
		"WALLETGATE_CHAIN_ID=11155111",
		"WALLETGATE_KEY_FILE=/run/key",
		"WALLETGATE_CAP_PER_TX=ETH=0.01,USDC=25",
		"WALLETGATE_CAP_PER_SESSION=ETH=0.1",
		"WALLETGATE_CAP_PER_DAY=ETH=0.2",
		"WALLETGATE_ALLOW_MAINNET=false",
		"WALLETGATE_ALLOW_UNCAPPED_TOKENS=true",
		"WALLETGATE_ALLOW_TO=" + usdtChecksum,
		"WALLETGATE_TOOLS=all",
		"WALLETGATE_CONFIRM=human",
		"WALLETGATE_CONFIRM_TTL=2m",
		"WALLETGATE_STATE_DIR=/var/lib/wg",
		"WALLETGATE_LOG=debug",
		"WALLETGATE_RECEIPT_TIMEOUT=2m",
		"WALLETGATE_CONFIRMATIONS=3",
	})
	require.NoError(t, err)
	require.Equal(t, DefaultSignatureMaxValidity, cfg.SignatureValidity)
	cfg.SignatureValidity = 0
	require.Equal(t, Config{
		RPC:                 []string{"https://a.example", "https://b.example"},
		ChainID:             11155111,
		Chains:              []ChainNode{{ID: 11155111, RPC: []string{"https://a.example", "https://b.example"}}},
		KeyFile:             "/run/key",
		CapPerTx:            []CapEntry{{"ETH", "0.01", 0}, {"USDC", "25", 0}},
		CapPerSession:       []CapEntry{{"ETH", "0.1", 0}},
		CapPerDay:           []CapEntry{{"ETH", "0.2", 0}},
		AllowUncappedTokens: true,
		AllowTo:             []common.Address{mustAddress(usdtChecksum)},
		Tools:               "all",
		Confirm:             "human",
		ConfirmTTL:          2 * time.Minute,
		StateDir:            "/var/lib/wg",
		LogLevel:            slog.LevelDebug,
		ReceiptTimeout:      2 * time.Minute,
		ReceiptTimeoutSet:   true,
		RPCTimeout:          20 * time.Second,
		Confirmations:       3,
		ConfirmationsSet:    true,
	}, cfg)
}

func TestVariablesList(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range Variables {
		require.True(t, strings.HasPrefix(v.Name, EnvPrefix), v.Name)
		require.Equal(t, strings.ToUpper(v.Name), v.Name)
		require.False(t, seen[v.Name], "%s listed twice", v.Name)
		require.NotEmpty(t, v.Meaning, v.Name)
		require.NotEmpty(t, v.Default, v.Name)
		seen[v.Name] = true
		// Load has a rule for it: an empty value is "unset", and a value
		// that no rule could accept reaches the variable's own rule rather
		// than the internal "no rule" error.
		var c Config
		err := c.set(v.Name, "\x01", "")
		require.NotNil(t, err, v.Name)
		require.NotContains(t, err.Error(), "internal error", v.Name)
	}
	var c Config
	require.Contains(t, c.set("WALLETGATE_NOT_A_VARIABLE", "1", "").Error(), "internal error")
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "abc", 0},
		{"abc", "abd", 1},
		{"abc", "ab", 1},
		{"ab", "abc", 1},
		{"kitten", "sitting", 3},
		{"", "abc", 3},
	}
	for _, tc := range tests {
		t.Run(tc.a+"→"+tc.b, func(t *testing.T) {
			require.Equal(t, tc.want, editDistance(tc.a, tc.b))
		})
	}
}

func TestHumanAboveNeedsHumanMode(t *testing.T) {
	for _, mode := range []string{"", "token", "elicit"} {
		env := []string{EnvHumanAbove + "=ETH=0.05"}
		if mode != "" {
			env = append(env, EnvConfirm+"="+mode)
		}
		cfg, err := Load(env)
		var ce *ConfigError
		require.True(t, errors.As(err, &ce), "mode %q: %v", mode, err)
		require.Equal(t, EnvHumanAbove, ce.Var)
		require.Contains(t, err.Error(), "only with WALLETGATE_CONFIRM=human")
		require.Equal(t, Config{}, cfg)
	}
	cfg, err := Load([]string{EnvHumanAbove + "=ETH=0.05", EnvConfirm + "=human"})
	require.NoError(t, err)
	require.Equal(t, []CapEntry{{"ETH", "0.05", 0}}, cfg.HumanAbove)
}

// Path settings as people write them in a JSON or TOML client config: a
// leading ~ or $HOME is expanded from the environment walletgate was given;
// what cannot be expanded is refused in words, never taken literally.
func TestPathsExpandHome(t *testing.T) {
	load := func(env ...string) (Config, error) { return Load(env) }
	for _, tc := range []struct {
		value, home, want string
	}{
		{"~/wallet/key", "/home/ann", "/home/ann/wallet/key"},
		{"~", "/home/ann/", "/home/ann"},
		{"$HOME/wallet/key", "/home/ann", "/home/ann/wallet/key"},
		{"${HOME}/key", "/home/ann", "/home/ann/key"},
		{"/etc/walletgate/key", "/home/ann", "/etc/walletgate/key"},
		{"relative/key", "", "relative/key"},
		{"/srv/cost$5", "/home/ann", "/srv/cost$5"}, // a literal $ before a digit stays
	} {
		c, err := load("HOME="+tc.home, EnvKeyFile+"="+tc.value)
		require.NoError(t, err, tc.value)
		require.Equal(t, tc.want, c.KeyFile, tc.value)
	}
	c, err := load("USERPROFILE=C:\\Users\\ann", EnvStateDir+"=~\\walletgate")
	require.NoError(t, err)
	require.Equal(t, "C:\\Users\\ann\\walletgate", c.StateDir, "Windows: USERPROFILE when HOME is unset")
	for _, tc := range []struct{ value, home, says string }{
		{"~/key", "", "neither HOME nor USERPROFILE is set"},
		{"~bob/key", "/home/ann", "~user is not expanded"},
		{"$XDG_CONFIG_HOME/walletgate/key", "/home/ann", "only a leading ~/ or $HOME/ is expanded"},
		{"$HOMEDIR/key", "/home/ann", "only a leading ~/ or $HOME/ is expanded"},
	} {
		env := []string{EnvKeyFile + "=" + tc.value}
		if tc.home != "" {
			env = append(env, "HOME="+tc.home)
		}
		_, err := Load(env)
		require.Error(t, err, tc.value)
		require.Contains(t, err.Error(), EnvKeyFile)
		require.Contains(t, err.Error(), tc.says, tc.value)
	}
}

// Every variable has its rule in setters, and setters reads no other.
func TestEveryVariableHasOneRule(t *testing.T) {
	names := map[string]bool{}
	for _, v := range Variables {
		names[v.Name] = true
		require.Contains(t, setters, v.Name, "setters has no rule for %s", v.Name)
	}
	for name := range setters {
		require.True(t, names[name], "setters reads %s, which Variables does not document", name)
	}
}
