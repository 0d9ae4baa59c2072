package main

// walletgate service install, uninstall, status and config: what an
// administrator runs; internal/service does the work.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/internal/service"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
)

// listFlag is a flag given as a comma-separated list, or several times.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// repeatFlag is a flag given several times, each value whole.
type repeatFlag []string

func (r *repeatFlag) String() string     { return strings.Join(*r, " ") }
func (r *repeatFlag) Set(v string) error { *r = append(*r, v); return nil }

func cmdServiceInstall(argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("walletgate service install", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var users listFlag
	var sets repeatFlag
	fs.Var(&users, "users", "the desktop users who may connect (default: the user who ran sudo)")
	fs.Var(&sets, "set", "a WALLETGATE_ variable for the service, KEY=VALUE (several times)")
	keyFile := fs.String("import-key-file", "", "import this key file instead of making a new key (the file is removed once imported and checked)")
	keystore := fs.String("import-keystore", "", "import this keystore file (with --password-file) instead of making a new key (both removed once imported and checked)")
	password := fs.String("password-file", "", "the imported keystore's password file")
	oldKeyFile := fs.String("key-file", "", "")
	oldKeystore := fs.String("keystore", "", "")
	serviceUser := fs.String("service-user", service.DefaultUser, "the service's own user, created if missing")
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	if *oldKeyFile != "" || *oldKeystore != "" {
		return usagef("walletgate service install makes the service's own key by default; to import one, say so: --import-key-file PATH, or --import-keystore PATH --password-file PATH (the install removes your copy once it has checked the import)")
	}
	if len(users) == 0 {
		if su := os.Getenv("SUDO_USER"); su != "" && su != "root" {
			users = append(users, su)
		}
	}
	env, err := parseSets(sets)
	if err != nil {
		return err
	}
	// The settings must be ones walletgate accepts, before anything is
	// created.
	check := []string{"WALLETGATE_KEY_FILE=/nonexistent"}
	for k, v := range env {
		check = append(check, k+"="+v)
	}
	if _, ok := env[policy.EnvConfirm]; !ok {
		check = append(check, policy.EnvConfirm+"="+policy.ConfirmHuman) // the service's default
	}
	if err := service.CheckEnv(env); err != nil {
		return usagef("%v", err)
	}
	cfg, err := policy.Load(check)
	if err != nil {
		return err
	}
	// The cap lists' window rule too, which walletgate checks only once
	// it knows its chain: a cap in one window alone is refused here, not
	// by the service after the install made its user.
	lists := [3][]policy.CapEntry{cfg.CapPerTx, cfg.CapPerSession, cfg.CapPerDay}
	if _, err := policy.ResolveCapWindows(lists, tools.DefaultCaps, cfg.ChainID, func(common.Address) (uint8, error) { return 18, nil }); err != nil {
		var werr *policy.CapWindowsError
		if errors.As(err, &werr) || cfg.ChainID != 0 {
			return usagef("%v", err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return service.Install(service.InstallOptions{
		Paths: service.DefaultPaths, User: *serviceUser, Users: users,
		KeyFile: *keyFile, Keystore: *keystore, Password: *password,
		Env: env, Binary: self, SystemdRuns: service.SystemdRuns(),
	}, stdout)
}

// parseSets turns KEY=VALUE settings into a map.
func parseSets(sets []string) (map[string]string, error) {
	env := map[string]string{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || !strings.HasPrefix(k, "WALLETGATE_") {
			return nil, usagef("--set %q: want WALLETGATE_NAME=VALUE", s)
		}
		env[k] = v
	}
	return env, nil
}

func cmdServiceUninstall(argv []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("walletgate service uninstall", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	purge := fs.Bool("purge", false, "also remove the key, the journal and the service user")
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	name := service.DefaultUser
	if c, err := service.LoadConfig(service.DefaultPaths.Config); err == nil && c.User != "" {
		name = c.User
	}
	return service.Uninstall(service.DefaultPaths, name, *purge, service.SystemdRuns(), nil, stdout)
}

func cmdServiceStatus(argv []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("walletgate service status", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	socket := fs.String("socket", service.DefaultSocket, "the service's socket")
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	p := service.DefaultPaths
	installed := p.Unit
	if installed == "" { // Windows: the service manager holds the service
		installed = p.Config
	}
	if _, err := os.Stat(installed); err == nil {
		fmt.Fprintf(stdout, "installed: %s\n", installed)
	} else {
		fmt.Fprintf(stdout, "not installed (no %s): sudo walletgate service install\n", installed)
	}
	conn, err := service.Dial(*socket)
	if err != nil {
		fmt.Fprintf(stdout, "not serving: %v. Start it: %s\n", err, service.StartHint)
		return &childExit{code: 3}
	}
	conn.Close()
	fmt.Fprintf(stdout, "serving on %s\n", *socket)
	if c, err := service.LoadConfig(p.Config); err == nil && c.PagePort != 0 {
		fmt.Fprintf(stdout, "approval page: %s/\n", approval.PasskeyOrigin(c.PagePort))
		printPasskeys(stdout, c)
	}
	return nil
}

// serviceStateDir is where the service keeps its state (the passkeys).
func serviceStateDir(c service.Config) string {
	if d := c.Env["WALLETGATE_STATE_DIR"]; d != "" {
		return d
	}
	return service.DefaultPaths.State()
}

// printPasskeys lists the enrolled passkeys, or says why it cannot (they
// are the service user's: root or that user reads them).
func printPasskeys(out io.Writer, c service.Config) {
	keys, err := approval.ListPasskeys(serviceStateDir(c))
	if err != nil {
		fmt.Fprintf(out, "passkeys: cannot be read here (%v); as root: sudo walletgate service status\n", err)
		return
	}
	fmt.Fprintf(out, "passkeys enrolled: %d\n", len(keys))
	for _, k := range keys {
		model := k.AAGUID
		if model == "" {
			model = "(the authenticator names no model)"
		}
		if k.Pending {
			fmt.Fprintf(out, "  %s  authenticator %s, made %s: WAITING for an enrolled passkey's approval on the page (it approves nothing yet)\n", k.ID, model, k.Created.UTC().Format(time.RFC3339))
			continue
		}
		fmt.Fprintf(out, "  %s  authenticator %s, signature counter %d\n", k.ID, model, k.SignCount)
	}
}

// cmdServicePasskeys is walletgate service passkeys [list | remove ID]
// [--config PATH].
func cmdServicePasskeys(argv []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("walletgate service passkeys", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfgPath := fs.String("config", service.DefaultPaths.Config, "the service's configuration file")
	var args []string // the subcommand and its argument, before the flags
	for len(argv) > 0 && !strings.HasPrefix(argv[0], "-") && len(args) < 2 {
		args, argv = append(args, argv[0]), argv[1:]
	}
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	c, err := service.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	switch {
	case len(args) == 0 || len(args) == 1 && args[0] == "list":
		printPasskeys(stdout, c)
		return nil
	case len(args) == 2 && args[0] == "remove":
		if c.User != "" && os.Geteuid() != 0 {
			return service.ErrNotRoot
		}
		gone, err := approval.RemovePasskey(serviceStateDir(c), args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed passkey %s: it approves nothing from now on (the running service reads the list at every approval)\n", gone.ID)
		printPasskeys(stdout, c)
		return nil
	}
	return usagef("walletgate service passkeys: list them with no argument, or remove one: sudo walletgate service passkeys remove ID (the id as listed)")
}

func cmdServiceConfig(argv []string, stdout io.Writer) error {
	path := service.DefaultPaths.Config
	if len(argv) == 0 {
		c, err := service.LoadConfig(path)
		if err != nil {
			return err
		}
		_, err = stdout.Write(c.Marshal())
		return err
	}
	if argv[0] != "set" {
		return usagef("walletgate service config: print it with no argument, or change it: sudo walletgate service config set WALLETGATE_NAME=VALUE…")
	}
	if os.Geteuid() != 0 {
		return service.ErrNotRoot
	}
	c, err := service.LoadConfig(path)
	if err != nil {
		return err
	}
	env, err := parseSets(argv[1:])
	if err != nil {
		return err
	}
	if err := service.CheckEnv(env); err != nil {
		return usagef("%v", err)
	}
	for k, v := range env {
		if v == "" {
			delete(c.Env, k)
		} else {
			c.Env[k] = v
		}
	}
	if _, err := policy.Load(c.Environ()); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := service.WriteConfig(path, c, groupOf(fi)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "changed; restart the service to apply it (%s)\n", service.RestartHint)
	return nil
}

// cmdServiceEnrol is walletgate service enrol: a fresh one-time passkey
// enrolment link, printed here only (root; the service keeps its hash).
func cmdServiceEnrol(argv []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("walletgate service enrol", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfgPath := fs.String("config", service.DefaultPaths.Config, "the service's configuration file")
	stateDir := fs.String("state-dir", "", "with --page-port: the state directory of a `service run --env` (tests), instead of the configuration")
	pagePort := fs.Int("page-port", 0, "with --state-dir: the page's port")
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	var c service.Config
	if *stateDir != "" || *pagePort != 0 {
		if *stateDir == "" || *pagePort == 0 {
			return usagef("walletgate service enrol: --state-dir and --page-port go together")
		}
		c = service.Config{PagePort: *pagePort, Env: map[string]string{"WALLETGATE_STATE_DIR": *stateDir}}
	} else {
		var err error
		if c, err = service.LoadConfig(*cfgPath); err != nil {
			return err
		}
	}
	return service.Enrol(service.DefaultPaths, c, stdout)
}
