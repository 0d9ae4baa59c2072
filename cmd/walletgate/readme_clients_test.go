package main_test

// README's client sections are configurations people copy (issue 28, item
// 3): each JSON or TOML example is read in the shape its client reads —
// the top-level key, the entry's fields, nothing else — and walletgate is
// started from it on the dev chain, as that client would start it: the
// command replaced by the binary under test, the node and chain by the dev
// chain's, the key file put where the example names it (~ and $HOME under a
// home of the test's own).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/naoina/toml"
	"github.com/stretchr/testify/require"
)

// clientEntry is one server's entry, in every client's shape.
type clientEntry struct {
	Type    string            `json:"type" toml:"type"`
	Command string            `json:"command" toml:"command"`
	Args    []string          `json:"args" toml:"args"`
	Env     map[string]string `json:"env" toml:"env"`
}

// readmeClients are the client sections, with the file each must name and
// the shape of its examples.
var readmeClients = []struct {
	heading, file, lang string
	parse               func(t *testing.T, raw []byte) map[string]clientEntry
}{
	{"Claude Desktop", "claude_desktop_config.json", "json", mcpServersJSON},
	{"Claude Code", ".mcp.json", "json", mcpServersJSON},
	{"Cursor", "~/.cursor/mcp.json", "json", mcpServersJSON},
	{"VS Code", ".vscode/mcp.json", "json", func(t *testing.T, raw []byte) map[string]clientEntry {
		var f struct {
			Servers map[string]clientEntry `json:"servers"`
		}
		strictJSON(t, raw, &f)
		for name, e := range f.Servers {
			require.Equal(t, "stdio", e.Type, "VS Code needs type stdio for %s", name)
		}
		return f.Servers
	}},
	{"Codex", "~/.codex/config.toml", "toml", func(t *testing.T, raw []byte) map[string]clientEntry {
		var f struct {
			MCPServers map[string]clientEntry `toml:"mcp_servers"`
		}
		require.NoError(t, toml.Unmarshal(raw, &f))
		return f.MCPServers
	}},
	{"Windsurf", "~/.codeium/windsurf/mcp_config.json", "json", mcpServersJSON},
}

func mcpServersJSON(t *testing.T, raw []byte) map[string]clientEntry {
	var f struct {
		MCPServers map[string]clientEntry `json:"mcpServers"`
	}
	strictJSON(t, raw, &f)
	for name, e := range f.MCPServers {
		require.Empty(t, e.Type, "%s: this client's entries have no type", name)
	}
	return f.MCPServers
}

func strictJSON(t *testing.T, raw []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v))
}

// readmeSection is the text under the heading "## heading" (or "###
// heading") up to the next heading.
func readmeSection(t *testing.T, readme, heading string) string {
	t.Helper()
	at := regexp.MustCompile(`\n###? ` + regexp.QuoteMeta(heading) + `\n`).FindStringIndex(readme)
	require.NotNil(t, at, "the page has a section ## %s", heading)
	rest := readme[at[1]:]
	if j := regexp.MustCompile(`\n##+ `).FindStringIndex(rest); j != nil {
		rest = rest[:j[0]]
	}
	return rest
}

var fence = regexp.MustCompile("(?ms)^```(json|toml)\n(.*?)^```$")

// clientsPage is where the client sections are; README.md shows one of
// them (Claude Desktop's), which is read and started too.
const clientsPage = "../../docs/clients.md"

func TestReadmeClientConfigsStartWalletgate(t *testing.T) {
	raw, err := os.ReadFile(clientsPage)
	require.NoError(t, err)
	readme := string(raw)
	front, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	state := t.TempDir()
	info, _ := runDevnet(t, state)
	second, _ := runDevnet(t, state, "--chain-id", "31337") // for a two-chain example
	devKey, err := os.ReadFile(info.KeyFile)
	require.NoError(t, err)
	twoChains := 0
	for _, client := range readmeClients {
		t.Run(strings.ReplaceAll(client.heading, " ", ""), func(t *testing.T) {
			section := readmeSection(t, readme, client.heading)
			require.Contains(t, section, "`"+client.file+"`", "the section names its client's config file")
			examples := fence.FindAllStringSubmatch(section, -1)
			require.NotEmpty(t, examples, "the section has a JSON or TOML example")
			for _, ex := range examples {
				require.Equal(t, client.lang, ex[1], "this client's file is %s", client.lang)
				servers := client.parse(t, []byte(ex[2]))
				entry, ok := servers["walletgate"]
				require.True(t, ok, "the example configures a server named walletgate: %v", servers)
				require.True(t, filepath.IsAbs(entry.Command), "clients run no shell: the command is an absolute path, not %q", entry.Command)
				if strings.Contains(entry.Env["WALLETGATE_CHAIN_ID"], ",") {
					twoChains++
				}
				startFromExample(t, entry, []devnetInfo{info, second}, devKey)
			}
		})
	}
	require.GreaterOrEqual(t, twoChains, 2, "docs/clients.md shows a two-chain setup in Claude Desktop's and Claude Code's sections")
	t.Run("README", func(t *testing.T) {
		client := readmeClients[0]
		require.Equal(t, "Claude Desktop", client.heading)
		section := readmeSection(t, string(front), client.heading)
		require.Contains(t, section, "`"+client.file+"`", "the section names its client's config file")
		examples := fence.FindAllStringSubmatch(section, -1)
		require.Len(t, examples, 1, "README shows one client's configuration")
		entry, ok := client.parse(t, []byte(examples[0][2]))["walletgate"]
		require.True(t, ok, "the example configures a server named walletgate")
		require.True(t, filepath.IsAbs(entry.Command), "clients run no shell: the command is an absolute path, not %q", entry.Command)
		startFromExample(t, entry, []devnetInfo{info, second}, devKey)
	})
}

// startFromExample starts walletgate as a client would from entry and
// checks it serves the wallet of the key the example names, with writes.
// An example of several chains is started on both dev chains: its chains,
// in their order, become 1337 and 31337, in WALLETGATE_RPC, in
// WALLETGATE_CHAIN_ID and in the cap items' prefixes.
func startFromExample(t *testing.T, entry clientEntry, chains []devnetInfo, devKey []byte) {
	t.Helper()
	info := chains[0]
	ids := strings.Split(entry.Env["WALLETGATE_CHAIN_ID"], ",")
	require.LessOrEqual(t, len(ids), len(chains), "an example of at most two chains")
	rename := func(value string) string {
		for i, id := range ids[1:] {
			value = strings.ReplaceAll(value, id+":", fmt.Sprint(chains[i+1].ChainID)+":")
		}
		return value
	}
	home := t.TempDir()
	env := []string{"HOME=" + home}
	for _, kv := range cleanEnv() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "WALLETGATE_OPEN_BROWSER=") {
			env = append(env, kv)
		}
	}
	env = append(env, "WALLETGATE_OPEN_BROWSER=off") // never a real browser
	keyed := false
	for name, value := range entry.Env {
		switch name {
		case "WALLETGATE_RPC":
			var rpcs []string
			for _, c := range chains[:len(ids)] {
				rpcs = append(rpcs, c.RPC)
			}
			require.Len(t, strings.Split(value, ","), len(ids), "one node entry per chain: %s", value)
			value = strings.Join(rpcs, ",")
		case "WALLETGATE_CHAIN_ID":
			var dev []string
			for _, c := range chains[:len(ids)] {
				dev = append(dev, fmt.Sprint(c.ChainID))
			}
			value = strings.Join(dev, ",")
		case "WALLETGATE_CAP_PER_TX", "WALLETGATE_CAP_PER_SESSION", "WALLETGATE_CAP_PER_DAY", "WALLETGATE_HUMAN_ABOVE":
			value = rename(value)
		case "WALLETGATE_OPEN_BROWSER":
			continue
		case "WALLETGATE_KEY_FILE":
			// VS Code substitutes ${userHome} before it starts the server;
			// ~ and $HOME are walletgate's to expand.
			value = strings.Replace(value, "${userHome}", home, 1)
			rel, inHome := "", false
			for _, prefix := range []string{"~/", "$HOME/", home + "/"} {
				if r, ok := strings.CutPrefix(value, prefix); ok {
					rel, inHome = r, true
				}
			}
			if inHome {
				path := filepath.Join(home, rel)
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
				require.NoError(t, os.WriteFile(path, devKey, 0o600))
			} else {
				require.True(t, filepath.IsAbs(value), "the key file is an absolute path or starts with ~/ or $HOME/: %q", value)
				value = info.KeyFile
			}
			keyed = true
		}
		env = append(env, name+"="+value)
	}
	require.True(t, keyed, "the example names a key file")
	c := startServer(t, env, entry.Args...)
	c.initialize()
	names := toolNames(c)
	require.Contains(t, names, "wallet_send", "a keyed walletgate offers writes; stderr:\n%s", c.stderr.String())
	res := c.callTool("wallet_address", map[string]any{})
	require.Nil(t, res["isError"], text(res))
	sc := res["structuredContent"].(map[string]any)
	require.Equal(t, info.DevAccount, sc["address"], "the example's key file is the one walletgate signs with")
	require.Equal(t, float64(1337), sc["chain_id"])
	if len(ids) > 1 {
		require.Len(t, sc["chains"], len(ids), "every chain of the example is served")
	} else {
		require.Nil(t, sc["chains"], "one chain: no chains listed")
	}
	c.stop()
}
