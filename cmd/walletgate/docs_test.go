package main_test

// The commands README.md and docs/ show in their sh blocks are commands
// that exist as shown: walletgate's and walletgate-devnet's subcommands
// and flags (each level's usage names every flag the line uses), the
// variables (policy.Variables), the scripts, and the packages go builds.
// The configuration blocks are started by TestReadmeClientConfigsStartWalletgate.

import (
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

// docPages are README.md and every page under docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	return append([]string{"../../README.md"}, pages...)
}

var shBlock = regexp.MustCompile("(?ms)^```sh\n(.*?)^```$")

// shCommands are a page's sh blocks as commands: continuation lines joined,
// comments dropped, each && part on its own.
func shCommands(page string) []string {
	var cmds []string
	for _, m := range shBlock.FindAllStringSubmatch(page, -1) {
		joined := strings.ReplaceAll(m[1], "\\\n", " ")
		for _, line := range strings.Split(joined, "\n") {
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			for _, part := range strings.Split(line, "&&") {
				if part = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(part), "&")); part != "" {
					cmds = append(cmds, part)
				}
			}
		}
	}
	return cmds
}

func TestDocsCommandsExistAsShown(t *testing.T) {
	known := map[string]bool{}
	for _, v := range policy.Variables {
		known[v.Name] = true
	}
	usageOf := func(bin string, level ...string) string {
		out, err := exec.Command(bin, append(level, "--help")...).CombinedOutput()
		require.NoError(t, err, "%s %s --help: %s", filepath.Base(bin), strings.Join(level, " "), out)
		return string(out)
	}
	const mod = "github.com/walletgate/walletgate/"
	seen := 0
	for _, path := range docPages(t) {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		dir := "../.."
		for _, cmd := range shCommands(string(raw)) {
			seen++
			words := strings.Fields(cmd)
			for len(words) > 0 && regexp.MustCompile(`^[A-Z_]+=`).MatchString(words[0]) { // VAR=value before the command
				name := words[0][:strings.Index(words[0], "=")]
				require.True(t, known[name], "%s: %q sets %s, which walletgate does not know", path, cmd, name)
				words = words[1:]
			}
			if len(words) > 0 && words[0] == "sudo" {
				words = words[1:]
				for len(words) > 0 && strings.HasPrefix(words[0], "GOBIN=") { // sudo GOBIN=… go install
					words = words[1:]
				}
			}
			if len(words) == 0 {
				continue // variables only
			}
			flags := slices.DeleteFunc(slices.Clone(words[1:]), func(w string) bool { return !strings.HasPrefix(w, "--") })
			prog := words[0]
			if strings.HasPrefix(prog, "/") && (filepath.Base(prog) == "walletgate" || filepath.Base(prog) == "walletgate-devnet") {
				prog = filepath.Base(prog) // an installed binary, by its full path
			}
			switch {
			case prog == "walletgate":
				level := strings.Fields(strings.Join(words[1:], " "))
				i := 0
				for i < len(level) && !strings.HasPrefix(level[i], "-") && regexp.MustCompile(`^[a-z-]+$`).MatchString(level[i]) {
					i++
				}
				usage := usageOf(binary, level[:i]...)
				for _, f := range flags {
					require.Contains(t, usage, strings.SplitN(f, "=", 2)[0], "%s: %q: walletgate %s's usage names the flag", path, cmd, strings.Join(level[:i], " "))
				}
			case prog == "walletgate-devnet":
				usage := usageOf(devnetBin)
				for _, f := range flags {
					require.Contains(t, usage, f, "%s: %q: walletgate-devnet's usage names the flag", path, cmd)
				}
			case strings.HasPrefix(prog, "./scripts/"):
				st, err := os.Stat(filepath.Join(dir, prog))
				require.NoError(t, err, "%s: %q", path, cmd)
				require.NotZero(t, st.Mode()&0o111, "%s: %s is executable", path, prog)
			case prog == "go":
				i := slices.IndexFunc(words, func(w string) bool { return strings.HasPrefix(w, "./") || strings.HasPrefix(w, mod) })
				require.GreaterOrEqual(t, i, 0, "%s: %q names a package", path, cmd)
				pkg := words[i]
				if strings.HasPrefix(pkg, mod) { // go install MODULE/PATH@VERSION
					pkg = "./" + strings.TrimPrefix(strings.SplitN(pkg, "@", 2)[0], mod)
				}
				_, err := os.Stat(filepath.Join(dir, pkg))
				require.NoError(t, err, "%s: %q names a package of the module", path, cmd)
			case prog == "cd":
				dir = filepath.Join(dir, words[1])
				_, err := os.Stat(dir)
				require.NoError(t, err, "%s: %q", path, cmd)
			case prog == "npm":
				_, err := os.Stat(filepath.Join(dir, "package-lock.json"))
				require.NoError(t, err, "%s: %q runs where a package-lock.json pins the packages", path, cmd)
			case prog == "claude":
				// Claude Code's own CLI: its entry is the one TestReadmeClientConfigsStartWalletgate starts from .mcp.json.
				require.Equal(t, []string{"mcp", "add"}, words[1:3], "%s: %q", path, cmd)
			default:
				t.Errorf("%s: %q: a command this test does not know how to check; teach it", path, cmd)
			}
		}
	}
	require.Greater(t, seen, 10, "the pages' commands were found")
}
