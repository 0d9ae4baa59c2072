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
		Type      string `json:"type"`
		Sensitive bool   `json:"sensitive"`
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
		"cap_per_tx": "ETH=1,USDT=100,DAI=100", "confirm": "token"}
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
