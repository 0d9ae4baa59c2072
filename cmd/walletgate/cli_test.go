package main_test

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runCLI runs walletgate with args and no WALLETGATE_ variable, and returns
// its stdout, stderr and exit status.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = withStateDir(t, cleanEnv())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// At every level of the command line, -h, --help and help print that
// level's usage on stdout and exit 0, having done nothing else.
func TestEveryLevelAnswersHelp(t *testing.T) {
	levels := map[string]string{
		"":                     "walletgate service install", // the whole text
		"service":              "walletgate service enrol",
		"service install":      "walletgate service install [--import-key-file PATH",
		"service passkeys":     "passkeys [remove ID]",
		"service run":          "walletgate service run",
		"service status":       "walletgate service status",
		"service config":       "walletgate service status | config",
		"service enrol":        "walletgate service enrol",
		"service uninstall":    "walletgate service status | config",
		"audit":                "walletgate audit repair",
		"audit verify":         "walletgate audit verify [FILE]",
		"audit show":           "walletgate audit show [--json]",
		"audit repair":         "walletgate audit repair [FILE]",
		"policy":               "walletgate policy [--dev]",
		"connect":              "walletgate connect [--socket PATH]",
		"approvals":            "walletgate approvals [--socket PATH]",
		"demo":                 "walletgate demo",
		"devnet":               "walletgate devnet --http",
		"bundle-manifest":      "walletgate bundle-manifest [--template FILE]",
		"version":              "walletgate version",
		"service install help": "walletgate service install [--import-key-file PATH",
	}
	for level, says := range levels {
		for _, ask := range []string{"-h", "--help", "help"} {
			args := append(strings.Fields(level), ask)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				stdout, stderr, code := runCLI(t, args...)
				require.Equal(t, 0, code, "stderr:\n%s", stderr)
				require.Empty(t, stderr)
				require.Contains(t, stdout, says)
				if level != "" && !strings.HasPrefix(level, "service u") && level != "service config" {
					require.NotContains(t, stdout, "WALLETGATE_RPC\n", "a level's usage, not the whole text")
				}
			})
		}
	}
	// walletgate help COMMAND is that command's usage.
	stdout, _, code := runCLI(t, "help", "service", "install")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(stdout, "Usage of walletgate service install:"), stdout)
}

// A wrong flag or subcommand prints its level's usage on stderr and exits
// 2, with nothing on stdout.
func TestAWrongCommandLinePrintsItsLevelsUsage(t *testing.T) {
	for args, says := range map[string]string{
		"--no-such-flag":                 "walletgate service install",
		"no-such-command":                "walletgate service install",
		"service":                        "Usage of walletgate service:",
		"service no-such-subcommand":     "Usage of walletgate service:",
		"service install --no-such-flag": "Usage of walletgate service install:",
		"audit":                          "Usage of walletgate audit:",
		"audit nope":                     "Usage of walletgate audit:",
		"audit show --no-such-flag":      "Usage of walletgate audit show:",
		"connect --no-such-flag":         "Usage of walletgate connect:",
		"policy stray":                   "Usage of walletgate policy:",
	} {
		t.Run(args, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, strings.Fields(args)...)
			require.Equal(t, 2, code, "stderr:\n%s", stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, says)
		})
	}
}

// walletgate --version prints the version the bundle's manifest carries.
func TestVersionIsTheBundlesVersion(t *testing.T) {
	m := readManifest(t)
	for _, arg := range []string{"--version", "version"} {
		stdout, stderr, code := runCLI(t, arg)
		require.Equal(t, 0, code, stderr)
		require.True(t, strings.HasPrefix(stdout, "walletgate "+m.Version+" "), "%s: %q, the manifest says %s", arg, stdout, m.Version)
	}
}
