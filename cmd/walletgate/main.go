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
	"slices"
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
	// The conventions of every level: -h, --help and help print that
	// level's usage on stdout and exit 0; --version prints the version;
	// an unknown subcommand prints the level's usage on stderr and exits 2.
	path, rest := commandPath(argv)
	if len(path) > 0 && path[0] == "help" { // walletgate help [COMMAND…]
		path, _ = commandPath(rest)
		usageOf(stdout, path)
		return 0
	}
	if wantsHelp(rest) {
		usageOf(stdout, path)
		return 0
	}
	if len(path) == 0 && len(rest) > 0 && (rest[0] == "--version" || rest[0] == "-version") {
		printVersion(stdout)
		return 0
	}
	if level := strings.Join(path, " "); len(subcommands[level]) > 0 && level != "" {
		if len(rest) == 0 {
			fmt.Fprintf(stderr, "walletgate %s: a subcommand is needed\n", level)
		} else {
			fmt.Fprintf(stderr, "walletgate %s: unknown subcommand %q\n", level, rest[0])
		}
		usageOf(stderr, path)
		return exitUsage
	}
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
		printVersion(stdout)
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
	var cle *cmdLineError
	if errors.As(err, &cle) {
		fmt.Fprintf(stderr, "walletgate: %v\n", err)
		usageOf(stderr, cle.path)
		return exitUsage
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

// subcommands are the command line's levels: each level's subcommands. A
// level listed here with subcommands needs one of them.
var subcommands = map[string][]string{
	"":        {"serve", "devnet", "demo", "audit", "policy", "service", "connect", "approvals", "bundle-manifest", "version", "help"},
	"audit":   {"verify", "show", "repair"},
	"service": {"install", "run", "status", "config", "enrol", "passkeys", "uninstall"},
}

// commandPath splits argv into the subcommands it names, level by level,
// and the rest (flags and arguments).
func commandPath(argv []string) (path, rest []string) {
	for len(argv) > 0 && slices.Contains(subcommands[strings.Join(path, " ")], argv[0]) {
		path, argv = append(path, argv[0]), argv[1:]
	}
	return path, argv
}

// wantsHelp reports whether the arguments after a level's subcommands ask
// for its usage: help as the first, or -h, -help or --help before any "--".
func wantsHelp(rest []string) bool {
	if len(rest) > 0 && rest[0] == "help" {
		return true
	}
	for _, a := range rest {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// printVersion prints the version the MCP Bundle's manifest carries
// (bundle-manifest), and the build's own when the two differ.
func printVersion(w io.Writer) {
	v := versionString()
	if b := bundleVersion(v); b != v && "v"+b != v {
		fmt.Fprintf(w, "walletgate %s (build %s)\n", b, v)
		return
	}
	fmt.Fprintln(w, "walletgate", v)
}

// errHelp asks for the usage text.
var errHelp = errors.New("help requested")

// usageError is a bad command line or configuration; it exits with 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// cmdLineError is a command line walletgate cannot parse: a flag no
// command has, a stray argument. It exits with 2, the usage of its level
// (path: the subcommands, as in a flag set's name) on stderr.
type cmdLineError struct {
	path []string
	msg  string
}

func (e *cmdLineError) Error() string { return e.msg }

// cmdLinef is a cmdLineError of the command named level ("walletgate
// service install", as a flag set is named).
func cmdLinef(level, format string, a ...any) error {
	return &cmdLineError{path: strings.Fields(strings.TrimPrefix(level, "walletgate")), msg: fmt.Sprintf(format, a...)}
}

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

func usage(w io.Writer) { usageOf(w, nil) }

// usageIntro, usageCommands and usageFooter are the usage text: what
// walletgate is, one entry per command (its first line starts with the
// command, the next are indented further), and what holds for all.
const usageIntro = `walletgate — an MCP server that lets an AI assistant read and move funds on an
EVM chain, only inside the limits its operator sets. MCP speaks JSON-RPC on
stdout; logs go to stderr.

`

const usageCommands = `  walletgate                 serve MCP over stdio on the node in WALLETGATE_RPC
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
  sudo walletgate service install [--import-key-file PATH | --import-keystore PATH --password-file PATH]
                             [--users NAME] [--set WALLETGATE_X=V]…
                             run walletgate as a system service under its own user (from a
                             walletgate only root can change): make its key (prints the address
                             to fund) or import one (and remove your copy once checked), write
                             the configuration where only root changes it, write and
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

`

const usageFooter = `Keys are read from files only (never from flags or variable values); files
holding secrets must not be readable by group or others (chmod 600).

Environment variables:
`

// usageOf writes the usage of one level of the command line: path is the
// subcommands named (nil: walletgate itself, the whole text with every
// variable); a level prints its own entries, and one with none of its own
// its parent's.
func usageOf(w io.Writer, path []string) {
	for ; len(path) > 0; path = path[:len(path)-1] {
		if entries := usageEntries(strings.Join(path, " ")); len(entries) > 0 {
			fmt.Fprintf(w, "Usage of walletgate %s:\n%s\nSee walletgate --help for every command and variable.\n", strings.Join(path, " "), strings.Join(entries, ""))
			return
		}
	}
	fmt.Fprint(w, usageIntro+"Usage:\n"+usageCommands+usageFooter)
	for _, v := range policy.Variables {
		fmt.Fprintf(w, "  %s\n      %s (default: %s)\n", v.Name, v.Meaning, v.Default)
	}
}

// usageEntries are the entries of usageCommands for the command "walletgate
// <level>" and its subcommands.
func usageEntries(level string) []string {
	var entries []string
	in := false
	for _, line := range strings.SplitAfter(usageCommands, "\n") {
		cmd := strings.TrimPrefix(strings.TrimLeft(line, " "), "sudo ")
		switch {
		case strings.HasPrefix(line, "  walletgate") || strings.HasPrefix(line, "  sudo walletgate"):
			in = cmd == "walletgate "+level+"\n" || strings.HasPrefix(cmd, "walletgate "+level+" ")
			if in {
				entries = append(entries, line)
			}
		case in && strings.TrimSpace(line) != "":
			entries[len(entries)-1] += line
		}
	}
	return entries
}
