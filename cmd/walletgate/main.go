// Command walletgate is an MCP server that lets an AI assistant read and move
// funds on an EVM chain inside limits its operator sets.
//
// This file only parses the command line and dispatches; internal/app builds
// the server (and runs the dev chain, walletgate-devnet, as a child process
// for --dev and demo); serve.go serves it on stdio, service.go on the
// service's socket.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/walletgate/walletgate/internal/app"
	"github.com/walletgate/walletgate/policy"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitUsage is the exit code for a bad command line or configuration.
const exitUsage = 2

func run(argv []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	all := argv
	if len(argv) > 0 && !strings.HasPrefix(argv[0], "-") {
		cmd, argv = argv[0], argv[1:]
	}
	if needsShared(cmd) {
		return exitCode(becomeShared(all), stdout, stderr) // returns only when it could not
	}
	var err error
	switch cmd {
	case "serve":
		err = cmdServe(argv, stderr)
	case "devnet":
		err = cmdDevnet(argv, stdout, stderr)
	case "demo":
		err = cmdDemo(argv, stdout, stderr)
	case "audit":
		err = cmdAudit(argv, stdout, stderr)
	case "policy":
		err = cmdPolicy(argv, stdout, stderr)
	case "service":
		err = cmdService(argv, os.Stdin, stdout, stderr)
	case "connect":
		err = cmdConnect(argv, os.Stdin, stdout, stderr)
	case "approvals":
		err = cmdApprovals(argv, os.Stdin, stdout, stderr)
	case "bundle-manifest":
		err = cmdBundleManifest(argv, stdout)
	case "version":
		fmt.Fprintln(stdout, "walletgate", versionString())
		return 0
	case "help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "walletgate: unknown command %q\n", cmd)
		usage(stderr)
		return exitUsage
	}
	return exitCode(err, stdout, stderr)
}

// exitCode reports a command's error on stderr (or the usage text on stdout
// for -h) and returns the process's exit code.
func exitCode(err error, stdout, stderr io.Writer) int {
	if errors.Is(err, errHelp) {
		usage(stdout)
		return 0
	}
	var ce *childExit
	if errors.As(err, &ce) {
		if ce.code < 0 {
			return 1
		}
		return ce.code // the child said why on stderr
	}
	if err != nil {
		fmt.Fprintf(stderr, "walletgate: %v\n", err)
		var ue *usageError
		var aue *app.UsageError
		if errors.As(err, &ue) || errors.As(err, &aue) || isConfigError(err) {
			return exitUsage
		}
		return 1
	}
	return 0
}

// errHelp asks for the usage text.
var errHelp = errors.New("help requested")

// usageError is a bad command line or configuration; it exits with 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func isConfigError(err error) bool {
	var ce *policy.ConfigError
	return errors.As(err, &ce)
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func usage(w io.Writer) {
	fmt.Fprint(w, `walletgate — an MCP server that lets an AI assistant read and move funds on an
EVM chain, only inside the limits its operator sets. MCP speaks JSON-RPC on
stdout; logs go to stderr.

Usage:
  walletgate                 serve MCP over stdio on the node in WALLETGATE_RPC
  walletgate --dev           serve MCP over stdio on an embedded dev chain (chain id 1337)
  walletgate demo            run the server on the dev chain and show what each tool returns
  walletgate devnet --http 127.0.0.1:PORT [--key-file PATH]
                             run walletgate-devnet (found beside this binary or on PATH):
                             serve the dev chain as a JSON-RPC node on loopback and print
                             its URL, dev account, token addresses and dev key file as JSON
  walletgate policy [--dev]  explain what an assistant connected with this environment may do now
  walletgate audit verify [FILE]
                             prove the journal's whole history, sealed segments included
                             (default: every journal in the state directory); names the
                             first broken file and line; exits non-zero whenever walletgate
                             would refuse writes with it
  walletgate audit show [--json] [--base-units] [FILE]
                             what was previewed, confirmed, refused, signed, sent, included,
                             dropped and released, in the asset's units; calls never answered
                             and sessions without an end
  walletgate audit repair [FILE]
                             cut an incomplete final line (a write cut short) and journal
                             the repair; never a complete line; the day window is kept
  walletgate approvals [--socket PATH]
                             approve or reject, in this terminal, the previews of every
                             walletgate running with WALLETGATE_CONFIRM=human on the same
                             WALLETGATE_STATE_DIR; approving shows the one-time code
  walletgate bundle-manifest [--template FILE] [--platform P] [--confirm MODE]
                             print the MCP Bundle's manifest: the template (default
                             mcpb/manifest.json) with this build's version and tool list
  sudo walletgate service install --key-file PATH | --keystore PATH --password-file PATH
                             [--users NAME] [--set WALLETGATE_X=V]…
                             run walletgate as a system service under its own user: import the
                             key, write the configuration where only root changes it, write and
                             start the service (systemd where it runs; launchd on macOS; the
                             service manager on Windows); prints the client config and the
                             one-time passkey enrolment link
  sudo walletgate service enrol
                             print a fresh one-time link to enrol a passkey (the approval page,
                             http://localhost:746/, approves only with an enrolled passkey)
  walletgate service run     the service in the foreground (as its user; started as root it
                             becomes that user)
  walletgate service status | config [set WALLETGATE_X=V…] | passkeys [remove ID] | uninstall [--purge]
  walletgate connect [--socket PATH]
                             what an MCP client spawns to reach the service: a relay between
                             stdio and the service's socket; it holds no key
  walletgate version         print the version
  walletgate help            this text

Keys are read from files only (never from flags or variable values); files
holding secrets must not be readable by group or others (chmod 600).

Environment variables:
`)
	for _, v := range policy.Variables {
		fmt.Fprintf(w, "  %s\n      %s (default: %s)\n", v.Name, v.Meaning, v.Default)
	}
}
