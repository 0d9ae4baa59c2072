package main_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/policy"
)

// mcpbManifest is the part of mcpb/manifest.json these tests read.
type mcpbManifest struct {
	Server struct {
		MCPConfig struct {
			Env map[string]string `json:"env"`
		} `json:"mcp_config"`
	} `json:"server"`
	Tools      []struct{ Name string } `json:"tools"`
	UserConfig map[string]struct {
		Type        string `json:"type"`
		Sensitive   bool   `json:"sensitive"`
		Description string `json:"description"`
		Default     any    `json:"default"`
	} `json:"user_config"`
}

func readManifest(t *testing.T) mcpbManifest {
	t.Helper()
	b, err := os.ReadFile("../../mcpb/manifest.json")
	require.NoError(t, err)
	var m mcpbManifest
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

var userConfigRef = regexp.MustCompile(`^\$\{user_config\.([a-z_]+)\}$`)

// The bundle's manifest passes only variables walletgate knows, each from a
// question it asks; key material is asked for as a file, never a value.
func TestBundleManifestMapsUserConfigToKnownVariables(t *testing.T) {
	m := readManifest(t)
	var known []string
	for _, v := range policy.Variables {
		known = append(known, v.Name)
	}
	used := map[string]bool{}
	for name, value := range m.Server.MCPConfig.Env {
		require.Contains(t, known, name, "the bundle sets a variable walletgate would refuse as unknown")
		ref := userConfigRef.FindStringSubmatch(value)
		require.NotNil(t, ref, "%s=%q is not one ${user_config.…}", name, value)
		_, ok := m.UserConfig[ref[1]]
		require.True(t, ok, "%s refers to user_config.%s, which the manifest does not ask for", name, ref[1])
		used[ref[1]] = true
	}
	for key, q := range m.UserConfig {
		require.True(t, used[key], "user_config.%s is asked for but passed to nothing", key)
		if strings.Contains(key, "key") || strings.Contains(key, "password") {
			require.Equal(t, "file", q.Type, "user_config.%s holds key material: it must be a file, never a value", key)
		}
	}
	for _, secret := range []string{policy.EnvKeyFile, policy.EnvKeystore, policy.EnvPasswordFile} {
		require.Contains(t, m.Server.MCPConfig.Env, secret)
	}
	require.True(t, m.UserConfig["rpc"].Sensitive, "node URLs carry API keys")
}

// Started as Claude Desktop starts the bundle — every variable of the
// manifest set, the unanswered ones empty — walletgate serves the dev chain
// with a key and the tools the manifest lists.
func TestBundleEnvironmentStartsWalletgate(t *testing.T) {
	m := readManifest(t)
	info := startDevnet(t)
	answers := map[string]string{"rpc": info.RPC, "chain_id": "1337", "key_file": info.KeyFile,
		"cap_per_tx": "ETH=1,USDT=100,DAI=100", "cap_per_session": "ETH=2,USDT=200,DAI=unlimited", "cap_per_day": "ETH=2,USDT=200,DAI=200",
		"confirm": "token"}
	var env []string
	for name, value := range m.Server.MCPConfig.Env {
		env = append(env, name+"="+answers[userConfigRef.FindStringSubmatch(value)[1]])
	}
	c := startServer(t, cleanEnv(env...))
	c.initialize()
	names := toolNames(c)
	for _, tl := range m.Tools {
		require.True(t, slices.Contains(names, tl.Name), "the manifest lists %s; walletgate offers %v", tl.Name, names)
	}
}

// The bundle's three cap fields ask for every window: their defaults are
// walletgate's own, which name every capped asset in each window, and each
// says that an asset named in one field needs the other two (issue 25: the
// form used to suggest a token in the per-transaction field alone, which
// left its session and day open).
func TestBundleCapFieldsNameEveryWindow(t *testing.T) {
	m := readManifest(t)
	var lists [3][]policy.CapEntry
	for i, key := range []string{"cap_per_tx", "cap_per_session", "cap_per_day"} {
		q, ok := m.UserConfig[key]
		require.True(t, ok, "the bundle asks for %s", key)
		require.Equal(t, policy.DefaultCaps[i], q.Default, "%s's default is walletgate's", key)
		require.Contains(t, q.Description, "unlimited", "%s says how to leave a window unlimited", key)
		e, err := policy.ParseCapList(q.Default.(string))
		require.NoError(t, err)
		lists[i] = e
	}
	require.Contains(t, m.UserConfig["cap_per_tx"].Description, "needs an amount, or ASSET=unlimited, in all three")
	_, err := policy.ResolveCapWindows(lists, policy.DefaultCaps, 11155111, nil)
	require.NoError(t, err, "the defaults keep the window rule")
	require.Equal(t, "${user_config.cap_per_day}", m.Server.MCPConfig.Env[policy.EnvCapPerDay])
}
