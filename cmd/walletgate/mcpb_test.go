package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/policy"
)

// mcpbManifest is the part of a bundle's manifest these tests read.
type mcpbManifest struct {
	Version         string `json:"version"`
	LongDescription string `json:"long_description"`
	Server          struct {
		EntryPoint string `json:"entry_point"`
		MCPConfig  struct {
			Env map[string]string `json:"env"`
		} `json:"mcp_config"`
	} `json:"server"`
	Tools         []mcpbTool `json:"tools"`
	Compatibility struct {
		Platforms []string `json:"platforms"`
	} `json:"compatibility"`
	UserConfig map[string]struct {
		Type        string   `json:"type"`
		Title       string   `json:"title"`
		Sensitive   bool     `json:"sensitive"`
		Required    bool     `json:"required"`
		Description string   `json:"description"`
		Default     any      `json:"default"`
		Min         *float64 `json:"min"`
		Max         *float64 `json:"max"`
	} `json:"user_config"`
}

type mcpbTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// readManifest is the manifest a bundle gets: what the test binary's
// bundle-manifest makes of mcpb/manifest.json (as scripts/bundle runs it).
func readManifest(t *testing.T, args ...string) mcpbManifest {
	t.Helper()
	return manifestOf(t, binary, args...)
}

func manifestOf(t *testing.T, bin string, args ...string) mcpbManifest {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"bundle-manifest", "--template", "../../mcpb/manifest.json"}, args...)...)
	cmd.Env = cleanEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "walletgate bundle-manifest: %s", stderr.String())
	var m mcpbManifest
	require.NoError(t, json.Unmarshal(out, &m))
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
// with a key and the tools the manifest lists (wallet_call once the form's
// allow_calls is answered).
func TestBundleEnvironmentStartsWalletgate(t *testing.T) {
	m := readManifest(t)
	info := startDevnet(t)
	answers := map[string]string{"rpc": info.RPC, "chain_id": "1337", "key_file": info.KeyFile,
		"cap_per_tx": "ETH=1,USDT=100,DAI=100", "cap_per_session": "ETH=2,USDT=200,DAI=unlimited", "cap_per_day": "ETH=2,USDT=200,DAI=200",
		"confirm": "token", "allow_calls": "any", "open_browser": "false", "allow_mainnet": "false", "confirmations": "1"}
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
	c.stop()

	// Two chains entered in the form's two fields.
	second, _ := runDevnet(t, t.TempDir(), "--chain-id", "31337")
	answers["rpc"], answers["chain_id"] = info.RPC+","+second.RPC, "dev,31337"
	env = nil
	for name, value := range m.Server.MCPConfig.Env {
		env = append(env, name+"="+answers[userConfigRef.FindStringSubmatch(value)[1]])
	}
	c = startServer(t, withStateDir(t, cleanEnv(env...)))
	c.initialize()
	addr := c.callTool("wallet_address", map[string]any{})["structuredContent"].(map[string]any)
	require.Len(t, addr["chains"], 2, "both chains of the form are served")
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

// The manifest's tools are the server's: with a key and every opt-in
// (wallet_call included), walletgate on the dev chain lists exactly these
// names, in this order, with these descriptions (issue 28: the hand-written
// manifest listed 7 of 12, without the two that sign money away).
func TestBundleManifestListsTheServersTools(t *testing.T) {
	m := readManifest(t, "--platform", "linux")
	info := startDevnet(t)
	c := startServer(t, append(capsEnv(info, t.TempDir()), "WALLETGATE_ALLOW_CALLS=any"))
	c.initialize()
	res := c.request("tools/list", map[string]any{})
	require.Nil(t, res["error"])
	var served []mcpbTool
	for _, raw := range res["result"].(map[string]any)["tools"].([]any) {
		tl := raw.(map[string]any)
		served = append(served, mcpbTool{Name: tl["name"].(string), Description: tl["description"].(string)})
	}
	require.Len(t, served, 12, "every tool, wallet_call and the swaps included")
	require.Equal(t, served, m.Tools, "the bundle lists what the server serves")
	require.Equal(t, []string{"linux"}, m.Compatibility.Platforms)
	require.Equal(t, "server/walletgate", m.Server.EntryPoint)
	win := readManifest(t, "--platform", "win32", "--confirm", "token")
	require.Equal(t, "server/walletgate.exe", win.Server.EntryPoint)
	require.Equal(t, "token", win.UserConfig["confirm"].Default, "human mode is refused on Windows")
}

// The manifest's version is the build's: a release tag without its v, and
// a development build says that it is one.
func TestBundleManifestCarriesTheBuildsVersion(t *testing.T) {
	dev := readManifest(t)
	require.Regexp(t, `^0\.0\.0-dev(\+[0-9A-Za-z.]+)?$`, dev.Version, "the test binary is a development build")
	require.Contains(t, dev.LongDescription, "This is a development build")

	tagged := filepath.Join(t.TempDir(), "walletgate")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v1.4.2", "-o", tagged, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(tagged, arg).Output()
		require.NoError(t, err)
		require.Equal(t, "walletgate v1.4.2\n", string(out), arg)
	}
	rel := manifestOf(t, tagged)
	require.Equal(t, "1.4.2", rel.Version)
	require.NotContains(t, rel.LongDescription, "development build")
}

// The form asks for every setting a desktop user needs — each cap window,
// the recipient allow-list, the human-mode threshold, the confirmation mode,
// the browser, the mainnet opt-in — with the validation the bundle format
// has (types, required, min and max).
func TestBundleFormCoversADesktopUsersSettings(t *testing.T) {
	m := readManifest(t)
	asks := map[string]string{}
	for name, value := range m.Server.MCPConfig.Env {
		asks[name] = userConfigRef.FindStringSubmatch(value)[1]
	}
	for _, name := range []string{policy.EnvRPC, policy.EnvChainID, policy.EnvKeyFile, policy.EnvCapPerTx, policy.EnvCapPerSession, policy.EnvCapPerDay,
		policy.EnvAllowTo, policy.EnvAllowCalls, policy.EnvHumanAbove, policy.EnvConfirm, policy.EnvOpenBrowser, policy.EnvAllowMainnet} {
		require.Contains(t, asks, name, "the form asks for %s", name)
	}
	types := []string{"string", "number", "boolean", "directory", "file"} // mcpb manifest v0.3
	for key, q := range m.UserConfig {
		require.Contains(t, types, q.Type, "user_config.%s", key)
		require.NotEmpty(t, q.Title, "user_config.%s", key)
		require.NotEmpty(t, q.Description, "user_config.%s", key)
	}
	require.True(t, m.UserConfig["rpc"].Required)
	require.True(t, m.UserConfig["chain_id"].Required)
	require.Equal(t, "string", m.UserConfig[asks[policy.EnvChainID]].Type, "one chain id, or several comma-separated")
	require.Contains(t, m.UserConfig[asks[policy.EnvChainID]].Description, "Several chains: comma-separated")
	confirmations := m.UserConfig[asks[policy.EnvConfirmations]]
	require.Equal(t, [2]float64{1, float64(policy.MaxConfirmations)}, [2]float64{*confirmations.Min, *confirmations.Max})
	require.Equal(t, "boolean", m.UserConfig[asks[policy.EnvAllowMainnet]].Type)
	require.Equal(t, false, m.UserConfig[asks[policy.EnvAllowMainnet]].Default)
	require.Equal(t, "boolean", m.UserConfig[asks[policy.EnvOpenBrowser]].Type)
	require.Contains(t, m.UserConfig[asks[policy.EnvHumanAbove]].Description, "human")
	for _, mode := range []string{policy.ConfirmHuman, policy.ConfirmToken, policy.ConfirmElicit} {
		require.Contains(t, m.UserConfig[asks[policy.EnvConfirm]].Description, mode)
	}
	require.NotContains(t, m.UserConfig[asks[policy.EnvConfirm]].Description, "walletgate approvals", "not on a desktop user's PATH")
	// The booleans reach walletgate as the words it reads.
	for _, b := range []string{"true", "false"} {
		_, err := policy.Load([]string{policy.EnvOpenBrowser + "=" + b, policy.EnvAllowMainnet + "=" + b, policy.EnvConfirm + "=human"})
		require.NoError(t, err)
	}
}

// A bundle holds walletgate alone: started without a node, it does not
// suggest --dev (which needs walletgate-devnet); and in human mode the
// terminal command it prints is its own absolute path, not a walletgate on
// a PATH that has none.
func TestBundleHintsAreForABundleUser(t *testing.T) {
	dir := t.TempDir()
	alone := filepath.Join(dir, "server", "walletgate")
	require.NoError(t, os.MkdirAll(filepath.Dir(alone), 0o755))
	raw, err := os.ReadFile(binary)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(alone, raw, 0o755))
	env := cleanEnv("PATH=/usr/bin:/bin", "WALLETGATE_RPC=", "WALLETGATE_CHAIN_ID=")

	run := func(bin string) string {
		cmd := exec.Command(bin)
		cmd.Env = withStateDir(t, env)
		out, err := cmd.CombinedOutput()
		require.Error(t, err)
		return string(out)
	}
	bundled := run(alone)
	require.Contains(t, bundled, "WALLETGATE_RPC is not set")
	require.NotContains(t, bundled, "--dev", "a bundle cannot run the dev chain")
	require.Contains(t, bundled, "Node URL")
	require.Contains(t, run(binary), "walletgate --dev", "beside walletgate-devnet, --dev is the way to try it")

	info := startDevnet(t)
	state := t.TempDir()
	c := startBinaryIn(t, alone, "", append(capsEnv(info, state), "WALLETGATE_CONFIRM=human"))
	c.initialize()
	line := regexp.MustCompile(`(?m)^walletgate: or approve in a terminal: (.*)$`)
	waitFor(t, "the terminal line on stderr", func() bool { return line.MatchString(c.stderr.String()) })
	require.Equal(t, "WALLETGATE_STATE_DIR="+state+" "+alone+" approvals", line.FindStringSubmatch(c.stderr.String())[1])
}
