// Package terminal is the approvals terminal (`walletgate approvals`): it
// shows each pending preview of the walletgate servers it reaches through
// their approvals sockets and asks the person to approve, reject or skip it.
package terminal

// Rules: a preview is decided only by a line typed at its own prompt (keys
// typed before it are dropped: keyboard.go); a decision goes to the server
// that holds the preview and its refusal is shown; an approval given here
// stays on screen until the assistant uses its code, and how the write ended
// is shown. The terminal reads and writes only Config's In and Out, so a
// test drives it with bytes.

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/walletgate/walletgate/approval"
)

// Config is what Run needs.
type Config struct {
	In  io.Reader // the person's keys (Keys) or lines
	Out io.Writer // the screen
	// Keys says In is a terminal in raw mode: it is read key by key, a key
	// counts (and is echoed) only while a prompt is showing, and Ctrl-C or
	// Ctrl-D ends the session. Otherwise In is read line by line, and lines
	// typed ahead of a prompt are discarded when it opens.
	Keys bool
	// Echo is where the keys typed at a prompt are echoed (nil: Out).
	// Writes to it and to Out are serialised.
	Echo io.Writer
	// Flush, when set, discards what was typed at the terminal and not read
	// yet; it is called as each prompt opens.
	Flush func()
	// Width is the screen's width in columns now (nil: 80).
	Width func() int
	// Color adds walletgate's own colours (after wrapping).
	Color bool
	// Socket is one server's approvals socket; "" means every *.sock in
	// Dir, the approvals directory, looked for again while none has a
	// preview.
	Socket string
	Dir    string
	// Poll is how often the servers are asked for their previews (0: every
	// half second).
	Poll time.Duration
}

// NoServerError is a session that reaches no server: none answers on Socket,
// or none was found in Dir (Run then waits for one instead).
type NoServerError struct{ Socket, Dir string }

func (e *NoServerError) Error() string {
	if e.Socket != "" {
		return fmt.Sprintf("no walletgate answers on %s: is it running with WALLETGATE_CONFIRM=human?", e.Socket)
	}
	return fmt.Sprintf("no running walletgate with WALLETGATE_CONFIRM=human was found in %s: start one, and give this command the same WALLETGATE_STATE_DIR (its log names it)", e.Dir)
}

// Run shows the previews and asks about each until the person quits (q,
// the end of In, Ctrl-C) or, with Socket set, that server stops. With Socket
// set and no server answering it returns *NoServerError at once; with Dir
// it says so and waits for a server.
func Run(c Config) error {
	var mu sync.Mutex
	out := &lockedWriter{mu: &mu, w: c.Out}
	t := &terminal{out: out, color: c.Color, fixed: c.Socket, dir: c.Dir, width: c.Width, poll: c.Poll,
		clients: map[string]*approval.Client{}, skipped: map[string]bool{}, watched: map[string]bool{}}
	if t.width == nil {
		t.width = func() int { return 80 }
	}
	if t.poll <= 0 {
		t.poll = 500 * time.Millisecond
	}
	var lines <-chan string
	if c.Keys {
		echo := c.Echo
		if echo == nil {
			echo = c.Out
		}
		kb := startKeyboard(c.In, &lockedWriter{mu: &mu, w: echo}, c.Flush)
		t.prompt, lines = kb.Prompt, kb.Lines()
	} else {
		ch := make(chan string)
		go func() {
			defer close(ch)
			sc := bufio.NewScanner(c.In)
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

// lockedWriter serialises the screen's writes and the keyboard's echo.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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
	poll    time.Duration   // how often the servers are asked
}

// pendingItem is a pending preview and the server it is on.
type pendingItem struct {
	client *approval.Client
	server approval.ServerInfo
	view   approval.View
}

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
			return &NoServerError{Socket: t.fixed}
		}
		return &NoServerError{Dir: t.dir}
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
			case <-time.After(t.poll):
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
	tick := time.NewTicker(t.poll)
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

// answer waits for the person's line, checking every other poll that the
// preview is still pending; gone is its state when it is not.
func (t *terminal) answer(it pendingItem, lines <-chan string) (line string, ok bool, gone approval.State) {
	tick := time.NewTicker(2 * t.poll)
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
