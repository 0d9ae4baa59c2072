package main

// Human approval (WALLETGATE_CONFIRM=human): the server side starts the
// approval page and the approvals socket; `walletgate approvals` runs the
// terminal (approval/terminal) that talks to the socket.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/approval/terminal"
	"github.com/walletgate/walletgate/connlimit"
	"github.com/walletgate/walletgate/internal/app"
	"github.com/walletgate/walletgate/internal/service"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
	"github.com/walletgate/walletgate/tools/confirm"
)

// approvals is the running page and socket of one server.
type approvals struct {
	pageURL string             // the approval page's address, secret included
	hub     *confirm.Approvals // the sessions' broker; broker is its Broker
	broker  *approval.Broker
	page    *http.Server
	socket  *approval.Service
	urlFile string
	opener  *approval.Opener
	way     tools.PersonWay
	// launchers is the directory of the files the opener is given, "" when
	// none are written.
	launchers string
}

// boundPage is the page's listener with its connections bounded
// (approval.MaxPageConns at once; more are closed at once) and its passing
// accept errors (out of file descriptors) retried, both logged.
func boundPage(ln net.Listener, logger *slog.Logger) net.Listener {
	return &connlimit.Listener[struct{}]{Listener: ln, PerPeer: approval.MaxPageConns, Total: approval.MaxPageConns,
		Refused: func(_ struct{}, err error) { logger.Warn("the approval page refused a connection", "err", err) },
		Retrying: func(err error, wait time.Duration) {
			logger.Warn("the approval page could not accept a connection; trying again", "err", err, "wait", wait)
		}}
}

// startApprovals starts the approval page on 127.0.0.1 and the approvals
// socket in the state root, and tells the operator where they are on stderr
// (whatever the log level: the person needs them). Either one is enough; with
// neither, human mode has no way to approve and the error says why.
func startApprovals(root string, deps tools.Deps, logger *slog.Logger, stderr io.Writer) (*approvals, error) {
	return startApprovalsWith(root, deps, logger, stderr, 0, "", nil)
}

// startApprovalsWith is startApprovals; with passkeyPort set (service mode)
// the page is the passkey page at http://localhost:passkeyPort/, with no
// secret address, whose passkeys are kept in the state root; where is what
// the model is told about where the person approves ("": the page or the
// terminal the preview names). The passkey page holds every address of
// localhost at its port (held, when a privileged parent bound them; else it
// listens itself), or it does not start, and then neither does this: a
// person-gated write is never served without its page.
func startApprovalsWith(root string, deps tools.Deps, logger *slog.Logger, stderr io.Writer, passkeyPort int, where string, held []net.Listener) (*approvals, error) {
	hub := confirm.NewApprovals(nil, where)
	a := &approvals{hub: hub, broker: hub.Broker()}
	var pageErr, sockErr error
	dir := approval.Dir(root)
	dirErr := approval.PrepareDir(dir)
	if dirErr == nil {
		approval.RemoveStale(dir)
	}
	if passkeyPort != 0 {
		lns := held
		if lns == nil {
			var err error
			if lns, err = approval.ListenLocalhost(passkeyPort); err != nil {
				return nil, err
			}
		}
		keys, err := approval.OpenPasskeys(root, passkeyPort)
		if err != nil {
			for _, ln := range lns {
				ln.Close()
			}
			return nil, err
		}
		page := approval.NewPasskeyPage(a.broker, keys, passkeyPort)
		a.page, a.pageURL = page.Server(), page.URL()
		for _, ln := range lns {
			go func() { _ = a.page.Serve(boundPage(ln, logger)) }()
		}
		if why := approval.PortOpenToAll(passkeyPort); why != "" {
			logger.Warn("the approval page's address is held only while the service runs: a program of another user could take it during a restart, and the service would then refuse to start", "why", why)
		}
		fmt.Fprintf(stderr, "walletgate: the person approves writes on %s with a passkey (%d enrolled; a fresh enrolment link: sudo walletgate service enrol; the page holds every address of localhost: %s)\n", page.URL(), keys.Enrolled(), listenerAddrs(lns))
	} else if secret, err := approval.NewSecret(); err != nil {
		pageErr = err
	} else if ln, port, err := approval.ListenLocal(); err != nil {
		pageErr = err
	} else {
		page := approval.NewPage(a.broker, secret, port)
		a.page, a.pageURL = page.Server(), page.URL()
		go func() { _ = a.page.Serve(boundPage(ln, logger)) }()
		fmt.Fprintf(stderr, "walletgate: approve writes on this page (keep its address private): %s\n", page.URL())
		if dirErr == nil {
			path := approval.URLPath(dir, os.Getpid())
			if err := approval.WriteURL(path, page.URL()); err != nil {
				logger.Warn("the approval page's address could not be saved; it is only in this log", "err", err)
			} else {
				a.urlFile = path
			}
		}
	}
	if dirErr != nil {
		sockErr = dirErr
	} else {
		path := approval.SocketPath(dir, os.Getpid())
		info := approval.ServerInfo{PID: os.Getpid(), Wallet: deps.Address.Hex(), ChainID: deps.Chain.ChainID().Uint64(),
			Network: policy.LookupNetwork(deps.Chain.ChainID().Uint64()).Name}
		if svc, err := approval.ListenSocket(path, a.broker, info); err != nil {
			sockErr = err
		} else {
			a.socket = svc
			a.way.Terminal = terminalCommand(root)
			fmt.Fprintf(stderr, "walletgate: or approve in a terminal: %s\n", a.way.Terminal)
		}
	}
	a.way.URLFile = a.urlFile
	if a.page != nil {
		var why string
		a.opener, why = approval.NewOpener(deps.Config.OpenBrowser, os.Getenv)
		if a.opener != nil && dirErr != nil {
			a.opener, why = nil, "the approvals directory cannot be used"
		}
		if a.opener != nil {
			a.launchers = dir
			a.way.Open = func(pageURL string) error {
				launcher, err := approval.WriteLauncher(dir, os.Getpid(), pageURL)
				if err != nil {
					return err
				}
				return a.opener.Open(launcher)
			}
		} else {
			a.way.NoOpen = why
			logger.Info("previews are not opened in a browser; each one says where the approval page is", "why", why)
		}
	}
	if pageErr != nil {
		logger.Warn("the approval page cannot start", "err", pageErr)
	}
	if sockErr != nil {
		logger.Warn("the approvals socket cannot start; `walletgate approvals` will not reach this server", "err", sockErr)
	}
	if a.page == nil && a.socket == nil {
		return nil, errors.Join(pageErr, sockErr)
	}
	return a, nil
}

// listenerAddrs lists where lns listen: "127.0.0.1:746, [::1]:746".
func listenerAddrs(lns []net.Listener) string {
	var s []string
	for _, ln := range lns {
		s = append(s, ln.Addr().String())
	}
	return strings.Join(s, ", ")
}

// terminalCommand is the exact command line that approves this server's
// previews in a terminal: this very executable by its absolute path (a
// bundle's walletgate is on no PATH), with the state directory it uses.
func terminalCommand(root string) string {
	exe, err := os.Executable()
	if err != nil {
		exe = "walletgate"
	}
	return "WALLETGATE_STATE_DIR=" + shellQuote(root) + " " + shellQuote(exe) + " approvals"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Close stops the page and the socket and removes their files, after the
// browser openers still running have ended.
func (a *approvals) Close() {
	_ = a.opener.Close()
	if a.launchers != "" {
		approval.RemoveLaunchers(a.launchers, os.Getpid())
	}
	if a.page != nil {
		_ = a.page.Close()
	}
	if a.socket != nil {
		_ = a.socket.Close()
	}
	if a.urlFile != "" {
		_ = os.Remove(a.urlFile)
	}
}

// cmdApprovals is `walletgate approvals`: it shows each pending preview of
// every walletgate running on this state directory and asks the person to
// approve or reject it.
func cmdApprovals(argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("walletgate approvals", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	socket := fs.String("socket", "", "the approvals socket of one server (default: every one in the state directory)")
	svc := fs.Bool("service", false, "approve the previews of the walletgate service (run as its user: sudo -u walletgate walletgate approvals --service)")
	cfgPath := fs.String("config", service.DefaultPaths.Config, "with --service: the service's configuration file")
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	if err := humanModeUnavailable(); err != nil {
		return err
	}
	var dir string
	environ := os.Environ()
	if *svc {
		sc, err := service.LoadConfig(*cfgPath)
		if err != nil {
			return err
		}
		// A desktop user's terminal is theirs to type into and read back:
		// no approval there (terminal_linux.go).
		desktop := map[uint32]string{}
		for _, u := range sc.Users {
			desktop[u.UID] = u.Name
		}
		if err := terminalOfDesktopUser(desktop); err != nil {
			return fmt.Errorf("TERMINAL_NOT_TRUSTED: %w. Nothing was shown, approved or rejected", err)
		}
		environ = sc.Environ()
	}
	if *socket == "" {
		cfg, err := policy.Load(environ)
		if err != nil {
			return err
		}
		root, err := app.StateRoot(cfg)
		if err != nil {
			return err
		}
		dir = approval.Dir(root)
	}
	c, restore, err := terminal.Console(stdin, stdout)
	defer restore()
	if err != nil {
		return err
	}
	c.Socket, c.Dir = *socket, dir
	err = terminal.Run(c)
	if ns := (*terminal.NoServerError)(nil); errors.As(err, &ns) {
		return usagef("%v", err)
	}
	return err
}
