package main

// walletgate service and walletgate connect: the same server as serve.go,
// run by the system under its own user and serving MCP on a local socket,
// one MCP session per connection (internal/service holds the socket, the
// peer check, the relay and the install); connect is the keyless relay the
// MCP client spawns instead of walletgate.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"golang.org/x/sync/semaphore"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/internal/app"
	"github.com/walletgate/walletgate/internal/service"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
)

// cmdService dispatches walletgate service SUBCOMMAND.
func cmdService(argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(argv) == 0 {
		return usagef("walletgate service needs a subcommand: install, run, status, config, enrol, passkeys or uninstall (see walletgate --help)")
	}
	sub, argv := argv[0], argv[1:]
	switch sub {
	case "run":
		return runService(func() error { return cmdServiceRun(argv, stderr) })
	case "install":
		return cmdServiceInstall(argv, stdin, stdout, stderr)
	case "uninstall":
		return cmdServiceUninstall(argv, stdout)
	case "status":
		return cmdServiceStatus(argv, stdout)
	case "config":
		return cmdServiceConfig(argv, stdout)
	case "enrol":
		return cmdServiceEnrol(argv, stdout)
	case "passkeys":
		return cmdServicePasskeys(argv, stdout)
	}
	return usagef("walletgate service: unknown subcommand %q: install, run, status, config, enrol, passkeys or uninstall (see walletgate --help)", sub)
}

// cmdConnect is walletgate connect: the relay between the MCP client's
// stdio and the service's socket. It reads no configuration file and no
// WALLETGATE_ variable, and holds no key.
func cmdConnect(argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("walletgate connect", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	socket := fs.String("socket", service.DefaultSocket, "the service's socket")
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	down := func(err error) string {
		return fmt.Sprintf("walletgate service is not reachable (%v). Ask the person who runs this computer to start it: %s; `walletgate service status` says what is wrong.", err, service.StartHint)
	}
	return service.Relay(stdin, stdout, func() (net.Conn, error) { return service.Dial(*socket) }, down)
}

// cmdServiceRun is walletgate service run: the service in the foreground.
// Started as root it becomes its user first (see becomeServiceUser).
func cmdServiceRun(argv []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("walletgate service run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfgPath := fs.String("config", service.DefaultConfig, "the service's configuration file")
	fromEnv := fs.Bool("env", false, "take the WALLETGATE_ variables from this environment instead of the configuration file, and let only this user connect (tests, benchmarks)")
	socket := fs.String("socket", "", "serve on this socket instead of the configured one")
	dev := fs.Bool("dev", false, "serve on an embedded dev chain")
	once := fs.Bool("once", false, "stop when the first connection ends")
	pagePort := fs.Int("page-port", 0, "with --env: serve the passkey approval page at http://localhost:PORT/ (tests)")
	inherited := fs.Int("page-listeners", 0, "the number of the page's listeners handed down from file descriptor 3 on (set by `service run` as root for its child)")
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	var sc service.Config
	var env []string
	if *fromEnv {
		if *socket == "" {
			return usagef("walletgate service run --env needs --socket PATH")
		}
		sc = service.Config{Socket: *socket, Users: []service.Peer{{Name: "self", UID: uint32(os.Getuid())}}, PagePort: *pagePort}
		env = os.Environ()
	} else {
		var err error
		if sc, err = service.LoadConfig(*cfgPath); err != nil {
			return err
		}
		if os.Getuid() == 0 && sc.User != "" {
			return becomeServiceUser(sc) // returns only when it could not
		}
		if *socket != "" {
			sc.Socket = *socket
		}
		env = sc.Environ()
		if _, ok := sc.Env[policy.EnvConfirm]; !ok {
			env = append(env, policy.EnvConfirm+"="+policy.ConfirmHuman) // the service's default
		}
	}
	cfg, err := policy.Load(env)
	if err != nil {
		return err
	}
	logger := newLogger(stderr, cfg.LogLevel)
	var held []net.Listener
	if *inherited > 0 {
		if held, err = approval.InheritedListeners(*inherited, sc.PagePort); err != nil {
			return err
		}
	}
	return serveService(cfg, sc, *dev, *once, !*fromEnv, held, logger, stderr)
}

// serveService wires the server once (chain, key, caps, journal, approvals)
// and serves each connection as its own MCP session, with its own
// per-session caps and confirmation tokens. held are the approval page's
// listeners when a privileged parent bound them (nil: the page listens
// itself).
func serveService(cfg policy.Config, sc service.Config, dev, once, serviceMode bool, held []net.Listener, logger *slog.Logger, stderr io.Writer) error {
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n *app.Node
	if !dev {
		n = app.OpenNode(base, cfg)
		defer n.Close()
	}
	ctx, stop := signal.NotifyContext(base, os.Interrupt, syscall.SIGTERM)
	defer stop()

	a, err := app.New(ctx, app.Options{Config: cfg, Dev: dev, Node: n, Logger: logger, Version: versionString(), Shared: shared(), Service: serviceMode,
		ApprovalsRequired: serviceMode || sc.PagePort != 0,
		Approvals: func(root string, deps tools.Deps) (*app.Approvals, error) {
			pk := sc.PagePort // 0: no passkey page, the page keeps a secret address
			secretPage := !serviceMode && pk == 0
			where := ""
			if !secretPage {
				where = "on the approval page"
			}
			p, err := startApprovalsWith(root, deps, logger, stderr, pk, where, held)
			if err != nil {
				return nil, err
			}
			page := &app.Approvals{Hub: p.hub, Close: p.Close}
			if secretPage {
				page.Page = p.pageURL
			}
			// In service mode the page's address is not handed to
			// clients (URL-mode elicitation): a client is the
			// assistant's own process.
			return page, nil
		}})
	if err != nil {
		return err
	}
	defer a.Close()
	deps := a.Deps()
	// The journal's transactions left open are followed up once, by a
	// server that serves no connection.
	first := a.Server()
	recovered := make(chan struct{})
	go func() {
		defer close(recovered)
		lines, err := first.Reconcile(ctx)
		for _, l := range lines {
			logger.Warn("recovered: " + l)
		}
		if err != nil && ctx.Err() == nil {
			logger.Error("recovery of journaled transactions failed; they stay pending", "err", err)
		}
	}()
	ln, err := service.Listen(sc, func(uid uint32, err error) {
		logger.Warn("refused a connection", "uid", uid, "err", err)
	}, func(err error, wait time.Duration) {
		logger.Warn("accepting a connection failed; trying again", "err", err, "wait", wait)
	})
	if err != nil {
		return err
	}
	network := policy.LookupNetwork(deps.Chain.ChainID().Uint64())
	logger.Info("serving MCP on the service socket", "socket", sc.Socket, "wallet", deps.Address.Hex(), "network", network.Name, "kind", string(network.Kind), "confirm", cfg.Confirm)
	var wg sync.WaitGroup
	serveErr := service.Serve(ctx, ln, func(conn net.Conn) bool {
		d := deps
		d.Session = app.NewSession()
		chains := a.AllDeps()
		for i := range chains {
			chains[i].Session = d.Session
		}
		srv := tools.NewChains(chains) // joins the broker: a rejection spends its tokens
		ms := srv.MCP(d.Version)
		logger.Info("session started", "session", d.Session)
		wg.Go(func() {
			defer conn.Close()
			serveConn(ctx, ms, conn, stderr, logger)
			if !srv.Drain(drainTimeout) {
				logger.Warn("a session ended with a confirm still under way; the next start follows it up", "session", d.Session)
			}
			srv.Close()
			logger.Info("session ended", "session", d.Session)
		})
		if once {
			ln.Close()
		}
		return !once
	})
	if serveErr != nil {
		logger.Error("the service stops", "err", serveErr)
		stop() // the sessions end with it
	}
	wg.Wait()
	stop()
	<-recovered
	first.Drain(drainTimeout)
	return serveErr
}

// lineBudget is what the service's connections share for long lines (see
// serviceLineBudget).
var lineBudget = semaphore.NewWeighted(serviceLineBudget)

// serveConn serves one connection as one MCP session, as stdio is served;
// its lines beyond ownLineBytes draw on lineBudget.
func serveConn(ctx context.Context, ms *server.MCPServer, conn net.Conn, stderr io.Writer, logger *slog.Logger) {
	lines := newBudgetLineLimiter(conn, maxMessageBytes, ownLineBytes, lineBudget)
	if err := serveBounded(ctx, ms, lines, conn, stderr); err != nil && !errors.Is(err, net.ErrClosed) {
		logger.Debug("a session's connection ended", "err", err)
	}
}
