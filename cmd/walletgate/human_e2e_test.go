package main_test

import (
	"bufio"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// pageLine is the line that tells the operator where the approval page is.
var pageLine = regexp.MustCompile(`(?m)^walletgate: approve writes on this page \(keep its address private\): (http://127\.0\.0\.1:\d+/a/[0-9a-f]{64}/)$`)

// pageOf waits for the approval page's address on c's stderr and returns it.
func pageOf(t *testing.T, c *stdioClient) string {
	t.Helper()
	var page string
	waitFor(t, "the approval page's address on stderr", func() bool {
		m := pageLine.FindStringSubmatch(c.stderr.String())
		if m != nil {
			page = m[1]
		}
		return m != nil
	})
	return page
}

// humanModeServer starts walletgate in human mode on the devnet with its own
// state directory, and returns it with that directory and the approval
// page's URL, checking that the address printed on stderr is the one saved
// (0600, named after the server's pid) in the state directory. It waits for
// the line: the server prints it before it writes the file, but the line
// reaches this process through a pipe, so the file can be there first.
func humanModeServer(t *testing.T, info devnetInfo, extra ...string) (*stdioClient, string, string) {
	t.Helper()
	state := t.TempDir()
	c := startServer(t, append(capsEnv(info, state), append([]string{"WALLETGATE_CONFIRM=human"}, extra...)...))
	c.initialize()
	printed := pageOf(t, c)
	path := filepath.Join(state, "approvals", strconv.Itoa(c.cmd.Process.Pid)+".url")
	if viaConnect {
		// The server is the service behind the relay, with a pid of its own.
		urls, _ := filepath.Glob(filepath.Join(state, "approvals", "*.url"))
		require.Len(t, urls, 1, "one server, one saved address")
		path = urls[0]
	}
	fi, err := os.Stat(path)
	require.NoError(t, err, "the page's address is saved in the state directory, named after the server's pid")
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "only the operator may read the page's address")
	saved, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, printed+"\n", string(saved), "the saved address is the printed one")
	return c, state, printed
}

// previewID previews args with wallet_send and returns the approval id,
// checking that nothing the model gets — text or structured content — can
// confirm it.
func previewID(t *testing.T, c *stdioClient, args map[string]any) string {
	t.Helper()
	res := c.callTool("wallet_send", args)
	require.Nil(t, res["isError"], text(res))
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "wgc_", "no confirmation token reaches the model in human mode")
	sc := res["structuredContent"].(map[string]any)
	require.Equal(t, "confirmation_required", sc["status"])
	require.NotContains(t, sc, "confirm_token")
	ap, ok := sc["approval"].(map[string]any)
	require.True(t, ok, "the preview names the approval it awaits: %v", sc)
	id, _ := ap["id"].(string)
	require.Regexp(t, `^[ABCDEFGHJKMNPQRSTUVWXYZ2-9]{4}$`, id)
	require.Contains(t, text(res), "APPROVAL BY THE PERSON REQUIRED (preview "+id+")")
	return id
}

// formToken reads the form token from preview id's page, as the page's own
// forms carry it.
func formToken(t *testing.T, pageURL, id string) string {
	t.Helper()
	resp, err := http.Get(pageURL + "p/" + id)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`).FindStringSubmatch(string(page))
	require.NotNil(t, m, "the page carries a form token")
	return m[1]
}

// postForm posts body as a form to target with the Origin origin ("" sends
// none) and the Host host ("" keeps the URL's), without following a
// redirect, and returns the status.
func postForm(t *testing.T, target, body, origin, host string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if host != "" {
		req.Host = host
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 5 * time.Second}
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func withConfirm(args map[string]any, confirm string) map[string]any {
	out := map[string]any{"confirm": confirm}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// refusedWith requires a tool result refused with code.
func refusedWith(t *testing.T, res map[string]any, code string) string {
	t.Helper()
	txt := text(res)
	require.Equal(t, true, res["isError"], txt)
	require.True(t, strings.HasPrefix(txt, code+": "), "want %s, got %s", code, txt)
	return txt
}

func TestHumanModeModelOnlyClientCannotWrite(t *testing.T) {
	info := startDevnet(t)
	view := newChainView(t, info)
	c, _, pageURL := humanModeServer(t, info)
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e61")
	args := map[string]any{"to": to.Hex(), "amount": "5", "asset": "USDT"}
	nonce, balance := view.nonce(), view.usdtOf(to)

	res := c.callTool("wallet_send", args)
	sc := res["structuredContent"].(map[string]any)
	id := sc["approval"].(map[string]any)["id"].(string)
	require.NotContains(t, sc, "confirm_token")

	// Everything the preview handed the model, and guesses.
	guesses := []string{id, sc["expires_at"].(string), "123-456", "000000", "999 999", "wgc_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", strings.Repeat("1", 64)}
	for _, g := range guesses {
		res := c.callTool("wallet_send", withConfirm(args, g))
		require.Equal(t, true, res["isError"], "guess %q: %s", g, text(res))
		require.Regexp(t, `^(APPROVAL_PENDING|CODE_UNKNOWN): `, text(res))
	}

	// The approval endpoints without the secret, with a rebinding Host, or
	// from another origin.
	u, err := url.Parse(pageURL)
	require.NoError(t, err)
	origin := "http://" + u.Host
	// The worst case: the attacker even has the page's form token.
	csrf := "csrf=" + formToken(t, pageURL, id)
	post := func(target, origin, host string) int { return postForm(t, target, csrf, origin, host) }
	base := "http://" + u.Host
	for _, target := range []string{base + "/p/" + id + "/approve", base + "/a/p/" + id + "/approve", base + "/a/" + strings.Repeat("0", 64) + "/p/" + id + "/approve",
		base + "/a/" + strings.TrimSuffix(strings.TrimPrefix(u.Path, "/a/"), "/")[:63] + "/p/" + id + "/approve"} {
		require.Equal(t, http.StatusNotFound, post(target, origin, ""), target)
	}
	approve := pageURL + "p/" + id + "/approve"
	require.Equal(t, http.StatusForbidden, post(approve, "http://evil.example", ""), "a foreign origin")
	require.Equal(t, http.StatusForbidden, post(approve, "", ""), "no origin")
	require.Equal(t, http.StatusMisdirectedRequest, post(approve, "http://evil.example:"+u.Port(), "evil.example:"+u.Port()), "DNS rebinding: another host name")
	require.Equal(t, http.StatusForbidden, postForm(t, approve, "csrf=x", origin, ""), "the right origin, but no form token from the page")
	require.Equal(t, http.StatusForbidden, postForm(t, approve, "", origin, ""), "the right origin, no form token at all")

	res = c.callTool("wallet_send", withConfirm(args, "123-456"))
	refusedWith(t, res, "APPROVAL_PENDING")
	require.Equal(t, nonce, view.nonce(), "nothing was signed or sent")
	require.Equal(t, balance, view.usdtOf(to))
}

// terminalSession runs `walletgate approvals` on a pty, as a person would.
type terminalSession struct {
	t   *testing.T
	pty *os.File
	cmd *exec.Cmd
	mu  sync.Mutex
	out strings.Builder
	fed chan struct{}
}

// startTerminalSized runs `walletgate approvals` on the state directory in
// a pty cols wide and rows high.
func startTerminalSized(t *testing.T, state string, cols, rows uint16) *terminalSession {
	t.Helper()
	cmd := exec.Command(binary, "approvals")
	cmd.Env = cleanEnv("WALLETGATE_STATE_DIR=" + state)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: cols, Rows: rows})
	require.NoError(t, err)
	s := &terminalSession{t: t, pty: f, cmd: cmd, fed: make(chan struct{}, 1)}
	go func() {
		r := bufio.NewReader(f)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				s.mu.Lock()
				s.out.Write(buf[:n])
				s.mu.Unlock()
				select {
				case s.fed <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(100 * time.Millisecond):
			cmd.Process.Kill()
			<-done
		}
		f.Close()
	})
	return s
}

func (s *terminalSession) screen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// expect waits until the output after from matches re and returns the match
// and where it ended.
func (s *terminalSession) expect(from int, re *regexp.Regexp) ([]string, int) {
	s.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		out := s.screen()
		if loc := re.FindStringSubmatchIndex(out[from:]); loc != nil {
			var groups []string
			for i := 0; i+1 < len(loc); i += 2 {
				groups = append(groups, out[from+loc[i]:from+loc[i+1]])
			}
			return groups, from + loc[1]
		}
		select {
		case <-s.fed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			s.t.Fatalf("the terminal never showed %s; it shows:\n%s", re, out[from:])
		}
	}
}

func (s *terminalSession) typeLine(line string) {
	s.t.Helper()
	_, err := io.WriteString(s.pty, line+"\r")
	require.NoError(s.t, err)
}

// quit types q and requires a clean exit.
func (s *terminalSession) quit() {
	s.t.Helper()
	s.typeLine("q")
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(s.t, err)
	case <-time.After(10 * time.Second):
		s.t.Fatal("walletgate approvals did not quit")
	}
}

// ansi strips colours for matching.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestTerminalApprovalsOnARealTerminal runs `walletgate approvals` on a pty,
// the one proof of the real terminal path (raw mode, the window's size, a
// server's socket found in the state directory); what the terminal does
// with keys and previews is tested without a pty in approval/terminal. In
// a window 52 columns wide nothing is wider, every fact the model was shown
// comes first and the decisive ones, in the page's order, right above the
// prompt; the code it shows confirms the write on chain; a rejection is
// final; both are in the journal; and keys typed ahead are dropped unseen.
func TestTerminalApprovalsOnARealTerminal(t *testing.T) {
	info := startDevnet(t)
	view := newChainView(t, info)
	c, state, _ := humanModeServer(t, info)
	term := startTerminalSized(t, state, 52, 40)
	_, pos := term.expect(0, regexp.MustCompile(`Connected to walletgate \(pid \d+, wallet\s+`+info.DevAccount))
	_, pos = term.expect(pos, regexp.MustCompile(`Waiting for previews`))

	to := common.HexToAddress("0x252F548BFEA5C0A7b9E1d56F4E2a3e0b7c1d9A43")
	args := map[string]any{"to": to.Hex(), "amount": "7.25", "asset": "USDT"}
	before := view.usdtOf(to)
	id := previewID(t, c, args)
	start := pos
	_, pos = term.expect(pos, regexp.MustCompile(`Approve preview `+id+`\?`))
	screen := ansi.ReplaceAllString(term.screen()[start:pos], "")
	for _, line := range strings.Split(strings.ReplaceAll(screen, "\r\n", "\n"), "\n") {
		require.LessOrEqual(t, len([]rune(line)), 52, "a line wider than the terminal: %q", line)
	}
	shown := strings.Join(strings.Fields(screen), " ") // wrapped at spaces: the words, in order
	require.Contains(t, shown, "Action: send 7.25 USDT (7250000 base units, 6 decimals)")
	decisive := shown[strings.Index(shown, "LOCAL DEV CHAIN"):]
	facts := []string{"LOCAL DEV CHAIN", "walletgate dev chain, chain id 1337", "Send 7.25 USDT", "Recipient:",
		strings.Join(groupsOf(to.Hex()), " "), "an account without code", "Send: 7.25 USDT", "Network fee: at most ",
		"Caps left after this:", "USDT per transaction: 92.75 of 100 left", "Simulation: Succeeds against block", "From this wallet: " + info.DevAccount}
	at := 0
	for _, f := range facts {
		i := strings.Index(decisive[at:], f)
		require.GreaterOrEqual(t, i, 0, "the summary above the prompt shows %q after the facts before it:\n%s", f, decisive)
		at += i
	}
	require.NotContains(t, shown, "APPROVAL BY THE PERSON REQUIRED", "what is addressed to the model is not shown to the person")
	require.NotContains(t, shown, "(in 5m0s)", "no frozen time left")
	require.Equal(t, before, view.usdtOf(to), "nothing moves before the person decides")

	term.typeLine("a")
	m, pos := term.expect(pos, regexp.MustCompile(`APPROVED\.(?:\x1b\[0m)? Give the assistant this one-time\s+code:\s+(?:\x1b\[[0-9;]*m)? ?(\d{3}-\d{3})`))
	code := m[1]
	_, pos = term.expect(pos, regexp.MustCompile(`Waiting for the assistant to use the code`))
	res := c.callTool("wallet_send", withConfirm(args, code))
	require.NotEqual(t, true, res["isError"], text(res))
	require.Equal(t, "confirmed", res["structuredContent"].(map[string]any)["status"], text(res))
	require.Equal(t, new(big.Int).Add(before, big.NewInt(7_250_000)), view.usdtOf(to), "the approved amount arrived on chain")
	refusedWith(t, c.callTool("wallet_send", withConfirm(args, code)), "CODE_USED")
	hash := res["structuredContent"].(map[string]any)["tx_hash"].(string)
	_, pos = term.expect(pos, regexp.MustCompile(`SENT AND VERIFIED:(?:\x1b\[0m)? preview\s+`+id))
	_, pos = term.expect(pos, regexp.MustCompile(`Transaction:\s+`+hash[:20]))

	// Reject: the preview is dead, whatever code the model offers.
	nonce := view.nonce()
	id2 := previewID(t, c, args)
	_, pos = term.expect(pos, regexp.MustCompile(`Approve preview `+id2+`\?`))
	term.typeLine("r")
	_, pos = term.expect(pos, regexp.MustCompile(`REJECTED\.(?:\x1b\[0m)? Preview `+id2+` will never\s+be signed`))
	refusedWith(t, c.callTool("wallet_send", withConfirm(args, "123-456")), "APPROVAL_REJECTED")
	require.Equal(t, nonce, view.nonce(), "a rejected preview sends nothing")

	// The journal keeps the person's decisions beside what the model did.
	audit := exec.Command(binary, "audit", "show")
	audit.Env = cleanEnv("WALLETGATE_STATE_DIR=" + state)
	shownAudit, err := audit.CombinedOutput()
	require.NoError(t, err, string(shownAudit))
	require.Contains(t, string(shownAudit), "the person APPROVED preview "+id+" (wallet_send)")
	require.Contains(t, string(shownAudit), "the person REJECTED preview "+id2+" (wallet_send)")

	// Raw mode: keys typed ahead are dropped unseen. An "a" meant for one
	// preview, typed three times in one go, approves that one only; the
	// terminal reads them in order, before the Enter typed after them.
	_, pos = term.expect(pos, regexp.MustCompile(`Waiting for previews`))
	first := previewID(t, c, args)
	second := previewID(t, c, map[string]any{"to": to.Hex(), "amount": "0.5", "asset": "USDT"})
	_, pos = term.expect(pos, regexp.MustCompile(`Approve preview `+first+`\?`))
	from := pos
	_, err = io.WriteString(term.pty, "a\ra\ra\r") // one for the code's prompt, one for the next preview
	require.NoError(t, err)
	_, pos = term.expect(pos, regexp.MustCompile(`Waiting for the assistant to use the code`))
	term.typeLine("")
	_, pos = term.expect(pos, regexp.MustCompile(`Approve preview `+second+`\?`))
	require.NotRegexp(t, `(?m)^a(\r|=|$)`, ansi.ReplaceAllString(term.screen()[from:pos], ""), "keys typed ahead are dropped unseen, not echoed")
	refusedWith(t, c.callTool("wallet_send", withConfirm(map[string]any{"to": to.Hex(), "amount": "0.5", "asset": "USDT"}, "123-456")), "APPROVAL_PENDING")
	term.typeLine("r")
	_, pos = term.expect(pos, regexp.MustCompile(`REJECTED\.(?:\x1b\[0m)? Preview `+second))
	_, _ = term.expect(pos, regexp.MustCompile(`Waiting for previews`))
	term.quit()
}

// groupsOf is an address in groups of four, as the page and the terminal
// show it.
func groupsOf(a string) []string {
	out := []string{a[:6]}
	for i := 6; i < len(a); i += 4 {
		out = append(out, a[i:i+4])
	}
	return out
}
