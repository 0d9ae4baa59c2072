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
	"unicode"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
)

// approvals is the running page and socket of one server.
type approvals struct {
	broker  *approval.Broker
	page    *http.Server
	socket  *approval.Service
	urlFile string
}

// startApprovals starts the approval page on 127.0.0.1 and the approvals
// socket in the state root, and tells the operator where they are on stderr
// (whatever the log level: the person needs them). Either one is enough; with
// neither, human mode has no way to approve and the error says why.
func startApprovals(root string, deps tools.Deps, logger *slog.Logger, stderr io.Writer) (*approvals, error) {
	a := &approvals{broker: approval.NewBroker(nil, nil)}
	var pageErr, sockErr error
	dir := approval.Dir(root)
	dirErr := approval.PrepareDir(dir)
	if dirErr == nil {
		approval.RemoveStale(dir)
	}
	if secret, err := approval.NewSecret(); err != nil {
		pageErr = err
	} else if ln, port, err := approval.ListenLocal(); err != nil {
		pageErr = err
	} else {
		page := approval.NewPage(a.broker, secret, port)
		a.page = page.Server()
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
			fmt.Fprintf(stderr, "walletgate: or approve in a terminal: WALLETGATE_STATE_DIR=%s walletgate approvals\n", root)
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

// Close stops the page and the socket and removes their files.
func (a *approvals) Close() {
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
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	if err := humanModeUnavailable(); err != nil {
		return err
	}
	var dir string
	if *socket == "" {
		cfg, err := policy.Load(os.Environ())
		if err != nil {
			return err
		}
		root, err := stateRoot(cfg)
		if err != nil {
			return err
		}
		dir = approval.Dir(root)
	}
	t := &terminal{out: stdout, color: isTerminal(stdout), fixed: *socket, dir: dir, clients: map[string]*approval.Client{}, skipped: map[string]bool{}}
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		t.tty = f
	}
	defer t.closeAll()
	if err := t.connect(); err != nil {
		if t.fixed != "" {
			return err
		}
		// A terminal may well be opened before the server: wait for one.
		fmt.Fprintf(t.out, "No walletgate with WALLETGATE_CONFIRM=human is running on %s yet; waiting for one. (Wrong place? The server's log names its WALLETGATE_STATE_DIR.)\n", t.dir)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			lines <- strings.TrimSpace(sc.Text())
		}
	}()
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
	tty     *os.File // stdin when it is a terminal: its typeahead is flushed
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
			fmt.Fprintf(t.out, "Connected to walletgate (pid %d, wallet %s, %s, chain id %d).\n", a.Server.PID, a.Server.Wallet, a.Server.Network, a.Server.ChainID)
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
			if v.State == approval.Pending && !t.skipped[p+"/"+v.ID] {
				out = append(out, pendingItem{client: c, server: *a.Server, view: v})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].view.Expires.Before(out[j].view.Expires) })
	return out
}

func (t *terminal) run(lines <-chan string) error {
	fmt.Fprintln(t.out, "walletgate approvals: review what the assistant asks to do. Nothing is signed until you approve and give it the code. Type q and Enter to quit.")
	for {
		items := t.pending()
		if len(items) == 0 {
			if len(t.clients) == 0 && t.fixed != "" {
				return fmt.Errorf("the walletgate on %s stopped", t.fixed)
			}
			if !t.waiting {
				fmt.Fprintln(t.out, "Waiting for previews…")
				t.waiting = true
			}
			select {
			case l, ok := <-lines:
				if !ok || l == "q" {
					return nil
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
	if t.tty != nil {
		flushTypeahead(t.tty)
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
		fmt.Fprintf(t.out, "Approve preview %s? [a]pprove / [r]eject / [s]kip / [q]uit: ", id)
		l, ok, gone := t.answer(it, lines)
		if gone != "" {
			fmt.Fprintf(t.out, "\nPreview %s is %s now (decided on the page or in another terminal, or it expired); moving on.\n\n", id, gone)
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
			fmt.Fprintf(t.out, "\n%s Give the assistant this one-time code:\n\n    %s\n\nIt confirms preview %s only, once%s. Nothing has been signed yet.\n",
				t.paint("1;32", "APPROVED."), t.paint("1;7", " "+a.Code+" "), id, until)
			// Keep the code on screen until the person has it.
			t.fresh(lines)
			fmt.Fprint(t.out, "Press Enter when you have given the code to the assistant. ")
			if _, ok := <-lines; !ok {
				fmt.Fprintln(t.out)
				return true, nil
			}
			fmt.Fprintln(t.out)
			return false, nil
		case "r", "reject":
			if a, err := t.decide(it, "reject"); err != nil || !a.OK {
				return false, err
			}
			fmt.Fprintf(t.out, "%s Preview %s will never be signed.\n\n", t.paint("1;31", "REJECTED."), id)
			return false, nil
		case "s", "skip":
			t.skipped[it.client.Path+"/"+id] = true
			fmt.Fprintf(t.out, "Skipped %s (it stays pending until it expires; the web page can still decide it).\n\n", id)
			return false, nil
		case "q", "quit":
			return true, nil
		default:
			fmt.Fprintln(t.out, "Type a, r, s or q, then Enter.")
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
		fmt.Fprintf(t.out, "That walletgate (pid %d) stopped answering; preview %s is gone with it. Nothing was decided.\n\n", it.server.PID, it.view.ID)
		return approval.Answer{}, nil
	}
	if !a.OK {
		fmt.Fprintf(t.out, "%s Nothing was decided: %s\n", t.paint("1;31", sanitize(a.ErrorCode)+":"), sanitize(a.Error))
	}
	return a, nil
}

// show prints a preview: the network marker and the amounts first and
// loudest, then everything the text preview says.
func (t *terminal) show(it pendingItem) {
	v, d := it.view, it.view.Display
	rule := strings.Repeat("=", 72)
	fmt.Fprintln(t.out, rule)
	marker := strings.ToUpper(sanitize(d.Marker))
	style := "1;7"
	if d.Mainnet {
		style = "1;41;97"
	}
	// The whole text first; the facts that decide it last, right above the
	// prompt, so that they are on screen however short the terminal.
	fmt.Fprintln(t.out, "----- the full preview -----")
	fmt.Fprintln(t.out, sanitize(d.Text))
	fmt.Fprintln(t.out, "----- in short -----")
	fmt.Fprintf(t.out, "%s  %s\n", t.paint(style, " "+marker+" "), sanitize(d.Network))
	fmt.Fprintf(t.out, "Preview %s · %s · wallet %s (pid %d) · expires %s (in %s)\n", v.ID, sanitize(v.Tool), it.server.Wallet, it.server.PID,
		v.Expires.UTC().Format("15:04:05")+" UTC", time.Until(v.Expires).Round(time.Second))
	fmt.Fprintln(t.out, t.paint("1", sanitize(d.Title)))
	for _, a := range d.Amounts {
		fmt.Fprintf(t.out, "  %s %s\n", t.paint("1", ">>"), t.paint("1", sanitize(a)))
	}
	for _, u := range d.Unverified {
		fmt.Fprintf(t.out, "  %s %s: not in walletgate's known-token table; its name and symbol are whatever the contract says.\n", t.paint("1;33", "UNVERIFIED TOKEN:"), sanitize(u))
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(t.out, "  %s %s\n", t.paint("1;33", "WARNING:"), sanitize(w))
	}
	fmt.Fprintln(t.out, rule)
}

func (t *terminal) paint(style, s string) string {
	if !t.color {
		return s
	}
	return "\x1b[" + style + "m" + s + "\x1b[0m"
}

// sanitize keeps text inert on a terminal: every control or format
// character but a newline (escape sequences, bidi overrides) becomes U+FFFD.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return unicode.ReplacementChar
		}
		return r
	}, s)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
