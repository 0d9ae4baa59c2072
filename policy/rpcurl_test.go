package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRedactURL(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"brief example", "https://user:pass@host:8545/v3/KEY?x=y", "https://host:8545"},
		{"fragment", "https://host/#" + canary, "https://host"},
		{"user only", "wss://" + canary + "@node.example/ws", "wss://node.example"},
		{"ipv6", "http://[::1]:8545/" + canary, "http://[::1]:8545"},
		{"upper-case scheme", "HTTPS://node.example/" + canary, "https://node.example"},
		{"no scheme", canary + "@localhost:8545", redactedURL},
		{"bad port", "https://" + canary + "@host:port/", redactedURL},
		{"no host", "https:///" + canary, redactedURL},
		{"empty", "", redactedURL},
		{"control character", "https://host/\n" + canary, redactedURL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RedactURL(tc.in)
			require.Equal(t, tc.want, got)
			require.NotContains(t, got, canary)
		})
	}
}

// TestRPCSecretNeverInErrors puts a canary secret in every part of RPC URLs
// that may carry one, in good and bad URLs, and checks no ConfigError shows it.
func TestRPCSecretNeverInErrors(t *testing.T) {
	good := "https://user:" + canary + "@node.example:8545/v3/" + canary + "?key=" + canary + "#" + canary
	values := []string{
		good + ",ftp://" + canary + "@x.example/" + canary,
		good + ",,",
		good + "," + canary + "@localhost:8545",
		good + ",https://" + canary + ":" + canary + "@host:badport/" + canary,
		"https://" + canary + "@:8545/" + canary,
		"https://user:" + canary + "@host/\x00" + canary,
		strings.Repeat(good+",", MaxRPCURLs) + good,
		"ftp://" + canary + ".example/",
	}
	for i, v := range values {
		_, err := Load([]string{EnvRPC + "=" + v})
		require.Error(t, err, "value %d accepted", i)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, EnvRPC, ce.Var)
		// The last value puts the canary in the host, which is shown by
		// design (the host is what an operator needs to see).
		if i == len(values)-1 {
			require.Contains(t, err.Error(), canary)
			continue
		}
		require.NotContains(t, err.Error(), canary, "value %d", i)
		require.NotContains(t, ce.Value+ce.Expected, canary, "value %d", i)
	}

	// A good URL with secrets is kept whole in Config: the node needs it.
	cfg, err := Load([]string{EnvRPC + "=" + good})
	require.NoError(t, err)
	require.Equal(t, []string{good}, cfg.RPC)

	// Secrets in a misspelled variable's value are withheld too.
	_, err = Load([]string{"WALLETGATE_RPC_URL=" + good})
	require.Error(t, err)
	require.NotContains(t, err.Error(), canary)
}

func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{
		"https://user:pass@host:8545/v3/KEY?x=y", "http://[::1]:8545/x", "wss://a@b/c#d", "localhost:8545",
		"", "https://host:port/", "//host/path", "https://h/%zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := RedactURL(s)
		if got == redactedURL {
			return
		}
		scheme, hostport, ok := strings.Cut(got, "://")
		if !ok || scheme == "" || hostport == "" {
			t.Fatalf("RedactURL(%q) = %q, not scheme://host", s, got)
		}
		if strings.ContainsAny(hostport, "/?#@") {
			t.Fatalf("RedactURL(%q) = %q keeps more than the host", s, got)
		}
	})
}
