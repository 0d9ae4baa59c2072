package main

// Human approval (WALLETGATE_CONFIRM=human): the server side starts the
// approval page and the approvals socket; `walletgate approvals` is the
// terminal UI that talks to the socket.

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/internal/app"
	"github.com/walletgate/walletgate/internal/service"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
)

// approvals is the running page and socket of one server.
type approvals struct {
	pageURL string // the approval page's address, secret included
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

// startApprovals starts the approval page on 127.0.0.1 and the approvals
// socket in the state root, and tells the operator where they are on stderr
// (whatever the log level: the person needs them). Either one is enough; with
// neither, human mode has no way to approve and the error says why.
func startApprovals(root string, deps tools.Deps, logger *slog.Logger, stderr io.Writer) (*approvals, error) {
	return startApprovalsWith(root, deps, logger, stderr, 0)
}

// startApprovalsWith is startApprovals; with passkeyPort set (service mode)
// the page is the passkey page at http://localhost:passkeyPort/, with no
// secret address, whose passkeys are kept in the state root.
func startApprovalsWith(root string, deps tools.Deps, logger *slog.Logger, stderr io.Writer, passkeyPort int) (*approvals, error) {
	a := &approvals{broker: approval.NewBroker(nil, nil)}
	var pageErr, sockErr error
	dir := approval.Dir(root)
	dirErr := approval.PrepareDir(dir)
	if dirErr == nil {
		approval.RemoveStale(dir)
	}
	if passkeyPort != 0 {
		if keys, err := approval.OpenPasskeys(root, passkeyPort); err != nil {
			pageErr = err
		} else if ln, err := approval.ListenLocalPort(passkeyPort); err != nil {
			pageErr = err
		} else {
			page := approval.NewPasskeyPage(a.broker, keys, passkeyPort)
			a.page, a.pageURL = page.Server(), page.URL()
			go func() { _ = a.page.Serve(ln) }()
			fmt.Fprintf(stderr, "walletgate: the person approves writes on %s with a passkey (%d enrolled; a fresh enrolment link: sudo walletgate service enrol)\n", page.URL(), keys.Enrolled())
		}
	} else if secret, err := approval.NewSecret(); err != nil {
		pageErr = err
	} else if ln, port, err := approval.ListenLocal(); err != nil {
		pageErr = err
	} else {
		page := approval.NewPage(a.broker, secret, port)
		a.page, a.pageURL = page.Server(), page.URL()
		go func() { _ = a.page.Serve(ln) }()
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
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	if err := humanModeUnavailable(); err != nil {
		return err
	}
	var dir string
	environ := os.Environ()
	if *svc {
		sc, err := service.LoadConfig(service.DefaultPaths.Config)
		if err != nil {
			return err
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
	t := &terminal{out: stdout, color: isTerminal(stdout), fixed: *socket, dir: dir, clients: map[string]*approval.Client{}, skipped: map[string]bool{}, watched: map[string]bool{}}
	t.width = func() int { return 80 }
	if f, ok := stdout.(*os.File); ok && t.color {
		t.width = func() int {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w >= 20 {
				return w
			}
			return 80
		}
	}
	var lines <-chan string
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		kb, restore, err := startKeyboard(f)
		if err != nil {
			return fmt.Errorf("the terminal could not be put in raw mode: %w", err)
		}
		defer restore()
		t.prompt, lines = kb.Prompt, kb.Lines()
		if out, ok := stdout.(*os.File); ok && term.IsTerminal(int(out.Fd())) {
			t.out = crlf{out}
		}
	} else {
		ch := make(chan string)
		go func() {
			defer close(ch)
			sc := bufio.NewScanner(stdin)
			for sc.Scan() {
				ch <- strings.TrimSpace(sc.Text())
			}
		}()
		lines = ch
	}
	defer t.closeAll()
	if err := t.connect(); err != nil {
		if t.fixed != "" {
			return err
		}
		// A terminal may well be opened before the server: wait for one.
		t.say(fmt.Sprintf("No walletgate with WALLETGATE_CONFIRM=human is running on %s yet; waiting for one. (Wrong place? The server's log names its WALLETGATE_STATE_DIR.)", t.dir), "  ")
	}
	return t.run(lines)
}

// terminal is the state of `walletgate approvals`.
type terminal struct {
	out     io.Writer
	color   bool
	fixed   string // --socket, or ""
	dir     string
	clients map[string]*approval.Client
	skipped map[string]bool // socket + id
	waiting bool
	// prompt, when stdin is a terminal, opens a prompt on it: keys typed
	// before no longer count (see keyboard).
	prompt  func()
	width   func() int      // the terminal's width in columns, now
	watched map[string]bool // socket + id of approvals given here, until their outcome is shown
}

// pendingItem is a pending preview and the server it is on.
type pendingItem struct {
	client *approval.Client
	server approval.ServerInfo
	view   approval.View
}

const pollEvery = 500 * time.Millisecond

func (t *terminal) connect() error {
	paths := []string{t.fixed}
	if t.fixed == "" {
		paths, _ = filepath.Glob(filepath.Join(t.dir, "*.sock"))
	}
	for _, p := range paths {
		if _, ok := t.clients[p]; ok {
			continue
		}
		c, err := approval.Dial(p)
		if err != nil {
			continue // a server that ended without removing its socket
		}
		t.clients[p] = c
		if a, err := c.Do("list", ""); err == nil && a.Server != nil {
			t.say(fmt.Sprintf("Connected to walletgate (pid %d, wallet %s, %s, chain id %d).", a.Server.PID, a.Server.Wallet, sanitize(a.Server.Network), a.Server.ChainID), "  ")
		}
	}
	if len(t.clients) == 0 {
		if t.fixed != "" {
			return usagef("no walletgate answers on %s: is it running with WALLETGATE_CONFIRM=human?", t.fixed)
		}
		return usagef("no running walletgate with WALLETGATE_CONFIRM=human was found in %s: start one, and give this command the same WALLETGATE_STATE_DIR (its log names it)", t.dir)
	}
	return nil
}

// drop forgets the server on socket path.
func (t *terminal) drop(path string) {
	if c, ok := t.clients[path]; ok {
		c.Close()
		delete(t.clients, path)
	}
}

func (t *terminal) closeAll() {
	for _, c := range t.clients {
		c.Close()
	}
}

// pending lists the pending previews of every connected server, oldest
// first; a server that stopped answering is dropped.
func (t *terminal) pending() []pendingItem {
	var out []pendingItem
	paths := make([]string, 0, len(t.clients))
	for p := range t.clients {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		c := t.clients[p]
		a, err := c.Do("list", "")
		if err != nil || a.Server == nil {
			t.drop(p)
			fmt.Fprintf(t.out, "A walletgate stopped answering (%s).\n", filepath.Base(p))
			continue
		}
		for _, v := range a.Approvals {
			if t.watched[p+"/"+v.ID] && v.State != approval.Approved && (v.State != approval.Used || v.Outcome != nil) {
				delete(t.watched, p+"/"+v.ID)
				t.ended(v)
			}
			if v.State == approval.Pending && !t.skipped[p+"/"+v.ID] {
				out = append(out, pendingItem{client: c, server: *a.Server, view: v})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].view.Expires.Before(out[j].view.Expires) })
	return out
}

func (t *terminal) run(lines <-chan string) error {
	t.say("walletgate approvals: review what the assistant asks to do. Nothing is signed until you approve and give it the code. Type q and Enter to quit.", "")
	for {
		items := t.pending()
		if len(items) == 0 {
			if len(t.clients) == 0 && t.fixed != "" {
				return fmt.Errorf("the walletgate on %s stopped", t.fixed)
			}
			if !t.waiting {
				t.waiting = true
				if t.prompt != nil {
					t.prompt() // for the q; a key typed before no longer counts
				}
				fmt.Fprintln(t.out, "Waiting for previews… (q and Enter quits)")
			}
			select {
			case l, ok := <-lines:
				if !ok || l == "q" {
					return nil
				}
				if t.prompt != nil {
					t.prompt() // a prompt takes one line: open the next for the q
				}
			case <-time.After(pollEvery):
			}
			if t.fixed == "" {
				_ = t.connect()
			}
			continue
		}
		t.waiting = false
		it := items[0]
		t.show(it)
		quit, err := t.ask(it, lines)
		if err != nil || quit {
			return err
		}
	}
}

// fresh discards every line typed before now: typed-ahead keys (a second
// "a" meant for the preview before) must never decide the preview on screen.
func (t *terminal) fresh(lines <-chan string) {
	if t.prompt != nil {
		t.prompt()
		return
	}
	for {
		select {
		case _, ok := <-lines:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// ask prompts for one preview until it is decided, skipped or gone.
func (t *terminal) ask(it pendingItem, lines <-chan string) (bool, error) {
	id := it.view.ID
	for {
		t.fresh(lines)
		t.ask1(fmt.Sprintf("Approve preview %s? [a]pprove / [r]eject / [s]kip / [q]uit, then Enter:", id))
		l, ok, gone := t.answer(it, lines)
		if gone != "" {
			fmt.Fprintln(t.out)
			t.say(fmt.Sprintf("Preview %s is %s now (decided on the page or in another terminal, or it expired); moving on.", id, gone), "  ")
			fmt.Fprintln(t.out)
			return false, nil
		}
		if !ok {
			fmt.Fprintln(t.out)
			return true, nil
		}
		switch strings.ToLower(l) {
		case "a", "approve":
			a, err := t.decide(it, "approve")
			if err != nil || !a.OK {
				return false, err
			}
			until := ""
			if a.Expires != nil {
				until = " until " + a.Expires.UTC().Format("15:04:05") + " UTC"
			}
			fmt.Fprintf(t.out, "\n%s Give the assistant this one-time code:\n\n    %s\n\n", t.paint("1;32", "APPROVED."), t.paint("1;7", " "+a.Code+" "))
			t.say(fmt.Sprintf("It confirms preview %s only, once%s. Nothing has been signed yet.", id, until), "")
			return t.awaitUse(it, lines)
		case "r", "reject":
			if a, err := t.decide(it, "reject"); err != nil || !a.OK {
				return false, err
			}
			t.say(t.paint("1;31", "REJECTED.")+" Preview "+id+" will never be signed.", "  ")
			fmt.Fprintln(t.out)
			return false, nil
		case "s", "skip":
			t.skipped[it.client.Path+"/"+id] = true
			t.say("Skipped "+id+" (it stays pending until it expires; the web page can still decide it).", "  ")
			fmt.Fprintln(t.out)
			return false, nil
		case "q", "quit":
			return true, nil
		default:
			fmt.Fprintln(t.out, "Type a, r, s or q, then Enter.")
		}
	}
}

// awaitUse keeps an approval's code on screen until the assistant uses it,
// then shows how the write ended; Enter goes on without waiting (the outcome
// is shown when it comes), w withdraws the approval.
func (t *terminal) awaitUse(it pendingItem, lines <-chan string) (bool, error) {
	id, key := it.view.ID, it.client.Path+"/"+it.view.ID
	t.watched[key] = true
	t.fresh(lines)
	t.say("Waiting for the assistant to use the code. Enter goes on to other previews without waiting; w and Enter withdraws the approval.", "")
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	told := false
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				fmt.Fprintln(t.out)
				return true, nil
			}
			switch strings.ToLower(l) {
			case "":
				fmt.Fprintln(t.out)
				return false, nil
			case "w", "withdraw":
				a, err := t.decide(it, "reject")
				if err != nil || !a.OK {
					t.fresh(lines)
					continue
				}
				delete(t.watched, key)
				t.say(t.paint("1;31", "WITHDRAWN.")+" The code of preview "+id+" is worthless now; nothing will be signed for it.", "")
				fmt.Fprintln(t.out)
				return false, nil
			default:
				t.fresh(lines)
				fmt.Fprintln(t.out, "Type w and Enter to withdraw, or Enter to go on.")
			}
		case <-tick.C:
			a, err := it.client.Do("list", "")
			if err != nil {
				delete(t.watched, key)
				fmt.Fprintln(t.out)
				t.say(fmt.Sprintf("That walletgate (pid %d) stopped answering; preview %s is gone with it.", it.server.PID, id), "  ")
				fmt.Fprintln(t.out)
				return false, nil
			}
			for _, v := range a.Approvals {
				if v.ID != id {
					continue
				}
				switch {
				case v.State == approval.Used && v.Outcome == nil:
					if !told {
						fmt.Fprintln(t.out, "\nThe assistant used the code; waiting for the outcome…")
						told = true
					}
				case v.State != approval.Approved:
					delete(t.watched, key)
					fmt.Fprintln(t.out)
					t.ended(v)
					return false, nil
				}
			}
		}
	}
}

// answer waits for the person's line, checking every second that the
// preview is still pending; gone is its state when it is not.
func (t *terminal) answer(it pendingItem, lines <-chan string) (line string, ok bool, gone approval.State) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case line, ok = <-lines:
			return line, ok, ""
		case <-tick.C:
			a, err := it.client.Do("list", "")
			if err != nil {
				return "", true, "gone (its walletgate stopped)"
			}
			for _, v := range a.Approvals {
				if v.ID == it.view.ID && v.State != approval.Pending {
					return "", true, v.State
				}
			}
		}
	}
}

// decide sends the person's decision; a refusal (expired, decided on the
// page meanwhile) is shown and returned with OK false.
func (t *terminal) decide(it pendingItem, op string) (approval.Answer, error) {
	a, err := it.client.Do(op, it.view.ID)
	if err != nil {
		// That walletgate stopped: its previews are gone, the others stay.
		t.drop(it.client.Path)
		t.say(fmt.Sprintf("That walletgate (pid %d) stopped answering; preview %s is gone with it. Nothing was decided.", it.server.PID, it.view.ID), "  ")
		fmt.Fprintln(t.out)
		return approval.Answer{}, nil
	}
	if !a.OK {
		t.say(t.paint("1;31", sanitize(a.ErrorCode)+":")+" Nothing was decided: "+sanitize(a.Error), "  ")
	}
	return a, nil
}
