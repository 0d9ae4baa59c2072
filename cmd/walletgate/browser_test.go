package main_test

// Browser tests of human approval (WALLETGATE_CONFIRM=human): the real binary
// on `walletgate devnet`, its approval page driven in real headless Chromium.
// They check what only a browser shows: that the page's own forms work and
// the code they yield confirms exactly the approved call, once, with that
// call's on-chain effect; that a rejected or expired preview moves nothing;
// and that another site's form or frame gets nowhere. Each subtest has its
// own dev chain and server, so balances and nonces are its own; they share
// one Chromium, closed when the test ends.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// chromiumPath is Debian's Chromium; CI installs it with apt and sets
// WALLETGATE_REQUIRE_CHROMIUM so that a missing browser fails the run.
const chromiumPath = "/usr/bin/chromium"

// browserStep bounds every browser action: a page that never comes fails the
// test in seconds, not at the package timeout.
const browserStep = 30 * time.Second

// startBrowser starts headless Chromium for t and returns the context whose
// children are its tabs. Chromium is closed when t ends.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	return startBrowserWith(t, nil)
}

// startBrowserWith is startBrowser with these allocator options (nil: the
// usual ones, with a fresh profile for each attempt).
func startBrowserWith(t *testing.T, opts []chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("WALLETGATE_REQUIRE_CHROMIUM") != "" {
			t.Fatalf("WALLETGATE_REQUIRE_CHROMIUM is set, but Chromium is missing: %v (install it: apt-get install chromium)", err)
		}
		t.Skipf("Chromium is missing (%v); set WALLETGATE_REQUIRE_CHROMIUM to make this a failure", err)
	}
	// Chromium 148 sometimes crashes while it starts on a loaded machine
	// (about 1 start in 100 here): a few attempts, each with a fresh
	// profile, keep that from failing the run.
	const attempts = 3
	for i := 1; ; i++ {
		o := opts
		if o == nil {
			o = browserOptions(t.TempDir())
		}
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), o...)
		browser, cancelBrowser := chromedp.NewContext(alloc)
		// No timeout here: the first run binds Chromium's life to this context.
		err := chromedp.Do(browser)
		if err == nil {
			t.Cleanup(func() {
				cancelBrowser()
				cancelAlloc() // waits for Chromium to exit, before t.TempDir is removed
			})
			return browser
		}
		cancelBrowser()
		cancelAlloc()
		if i == attempts {
			t.Fatalf("Chromium did not start in %d attempts: %v", attempts, err)
		}
		t.Logf("Chromium did not start (attempt %d of %d): %v", i, attempts, err)
	}
}

// browserOptions are the flags Chromium needs here: headless, as root (no
// sandbox), and quiet on a closed network (without the background-networking
// flags its own connections fail noisily).
func browserOptions(profile string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
	)
}

// browserTab is one Chromium tab of a test. Every action on it has a timeout of
// browserStep.
type browserTab struct {
	t   *testing.T
	ctx context.Context
}

// newTab opens a tab of browser for t; it is closed when t ends.
func newTab(t *testing.T, browser context.Context) *browserTab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx), "open a tab")
	return &browserTab{t: t, ctx: ctx}
}

// runIn runs one action in tb and returns its value.
func runIn[T any](tb *browserTab, a chromedp.Action[T]) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserStep)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	require.NoError(tb.t, err)
	return v
}

// open starts loading url without waiting for its document: for a page
// that sends the browser on at once (the launcher's meta refresh), whose
// first document is gone before its load could be waited for (chromedp:
// "Inspected target navigated or closed"). The caller waits for what the
// page it ends on shows.
func (tb *browserTab) open(url string) {
	tb.t.Helper()
	runIn(tb, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		res, err := cdp.Call(ctx, target, page.Navigate, page.NavigateParams{URL: url})
		if err == nil && res.ErrorText != "" {
			err = errors.New(res.ErrorText)
		}
		return err
	}))
}

// navigate loads url and returns the response of the document.
func (tb *browserTab) navigate(url string) *network.Response {
	tb.t.Helper()
	return runIn(tb, chromedp.NavigateResponse(url))
}

// click clicks the element with id and returns the response of the document
// the click loads (after redirects).
func (tb *browserTab) click(id string) *network.Response {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserStep)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.ID(id)))
	require.NoError(tb.t, err, "click #%s", id)
	return resp
}

// body is the visible text of the loaded document.
func (tb *browserTab) body() string {
	tb.t.Helper()
	return runIn(tb, chromedp.Text(chromedp.CSS("body")))
}

// requireStatus checks the status of a response the tab loaded, and shows
// what the page says when it is not the one wanted.
func (tb *browserTab) requireStatus(resp *network.Response, want int, what string) {
	tb.t.Helper()
	require.EqualValues(tb.t, want, resp.Status, "%s: %s answered %d: %s", what, resp.URL, resp.Status, tb.body())
}

// text is the text of the element with id, as in the HTML (the page's style
// shows some of it in capitals).
func (tb *browserTab) text(id string) string {
	tb.t.Helper()
	return strings.TrimSpace(runIn(tb, chromedp.TextContent(chromedp.ID(id))))
}

// has reports whether the loaded document has an element with id; it does
// not wait for one.
func (tb *browserTab) has(id string) bool {
	tb.t.Helper()
	return runIn(tb, chromedp.Evaluate[bool](fmt.Sprintf("document.getElementById(%q) !== null", id)))
}

// stayPut cancels the loaded page's own reload (its meta refresh, which
// counts a live preview down): the tab keeps the page as it was loaded, as a
// page left open would be when its reload is slow or blocked.
func (tb *browserTab) stayPut() {
	tb.t.Helper()
	runIn(tb, chromedp.Evaluate[any](`window.stop()`))
}

// csrf reads the CSRF token of the approve form on the loaded page.
func (tb *browserTab) csrf() string {
	tb.t.Helper()
	v := runIn(tb, chromedp.Value(chromedp.CSS(`form[action$="/approve"] input[name="csrf"]`)))
	require.Regexp(tb.t, `^[0-9a-f]{64}$`, v)
	return v
}

// frameDocument returns the document the browser put inside the iframe with
// id on the loaded page (an error page when it refused the content).
func (tb *browserTab) frameDocument(id string) *cdp.Node {
	tb.t.Helper()
	depth, pierce := int64(-1), true
	ctx, cancel := context.WithTimeout(tb.ctx, browserStep)
	defer cancel()
	res, err := chromedp.Call(ctx, dom.GetDocument, dom.GetDocumentParams{Depth: &depth, Pierce: &pierce})
	require.NoError(tb.t, err)
	var frame *cdp.Node
	walkNodes(res.Root, func(n *cdp.Node) {
		if n.NodeName == "IFRAME" && nodeAttr(n, "id") == id {
			frame = n
		}
	})
	require.NotNil(tb.t, frame, "no iframe #%s on the page", id)
	require.NotNil(tb.t, frame.ContentDocument, "iframe #%s has no document", id)
	return frame.ContentDocument
}

// walkNodes calls f on n and every node under it, frames' documents included.
func walkNodes(n *cdp.Node, f func(*cdp.Node)) {
	if n == nil {
		return
	}
	f(n)
	for _, c := range n.Children {
		walkNodes(c, f)
	}
	walkNodes(n.ContentDocument, f)
}

// nodeAttr is an attribute of an element node, or "".
func nodeAttr(n *cdp.Node, name string) string {
	for i := 0; i+1 < len(n.Attributes); i += 2 {
		if n.Attributes[i] == name {
			return n.Attributes[i+1]
		}
	}
	return ""
}

// hasNodeID reports whether an element under n has id.
func hasNodeID(n *cdp.Node, id string) bool {
	found := false
	walkNodes(n, func(c *cdp.Node) {
		if nodeAttr(c, "id") == id {
			found = true
		}
	})
	return found
}

// headerOf reads a response header whatever its case.
func headerOf(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

// approvalServer is a walletgate in human mode on a dev chain of its own.
type approvalServer struct {
	*stdioClient
	page  string // the approval page: http://127.0.0.1:PORT/a/SECRET/
	chain *chainView
}

// startApprovalServer starts a dev chain and a walletgate in human mode on
// it (humanModeServer checks the page's address).
func startApprovalServer(t *testing.T, extraEnv ...string) *approvalServer {
	t.Helper()
	info := startDevnet(t)
	c, _, page := humanModeServer(t, info, extraEnv...)
	return &approvalServer{stdioClient: c, page: page, chain: newChainView(t, info)}
}

// origin is the page's own origin, as a browser sends it.
func (s *approvalServer) origin(t *testing.T) string {
	u, err := url.Parse(s.page)
	require.NoError(t, err)
	return u.Scheme + "://" + u.Host
}

// detail is the address of one preview's page.
func (s *approvalServer) detail(id string) string { return s.page + "p/" + id }

// previewSend previews a USDT send and returns the id of the approval it
// awaits and the arguments to confirm it with.
func (s *approvalServer) previewSend(t *testing.T, to common.Address, amount string) (string, map[string]any) {
	t.Helper()
	args := map[string]any{"to": to.Hex(), "amount": amount, "asset": "USDT"}
	return previewID(t, s.stdioClient, args), args
}

// confirm calls wallet_send with args and code as its confirm value.
func (s *approvalServer) confirm(args map[string]any, code string) map[string]any {
	return s.callTool("wallet_send", withConfirm(args, code))
}

// snapshot is what a write would change on chain: the wallet's nonce and
// USDT balance, and the recipient's.
type snapshot struct {
	nonce        uint64
	wallet, dest *big.Int
}

func (s *approvalServer) snapshot(to common.Address) snapshot {
	return snapshot{nonce: s.chain.nonce(), wallet: s.chain.usdtOf(s.chain.dev), dest: s.chain.usdtOf(to)}
}

// requireNothingMoved checks that no transaction was sent since before.
func (s *approvalServer) requireNothingMoved(t *testing.T, before snapshot, to common.Address) {
	t.Helper()
	now := s.snapshot(to)
	require.Equal(t, before.nonce, now.nonce, "no transaction was sent")
	require.Equal(t, before.wallet, now.wallet, "the wallet's USDT did not move")
	require.Equal(t, before.dest, now.dest, "the recipient got no USDT")
}

// openPreview opens the list page in tb and clicks through to preview id,
// as the person would.
func (s *approvalServer) openPreview(tb *browserTab, id string) {
	tb.t.Helper()
	tb.requireStatus(tb.navigate(s.page), http.StatusOK, "the list page")
	require.True(tb.t, tb.has("review-"+id), "the list shows preview %s", id)
	resp := tb.click("review-" + id)
	tb.requireStatus(resp, http.StatusOK, "the preview's page")
	require.Equal(tb.t, s.detail(id), resp.URL)
	require.Equal(tb.t, id, tb.text("preview-id"))
}

// codePattern is a one-time code as the page shows it.
var codePattern = regexp.MustCompile(`^\d{3}-\d{3}$`)

func TestApprovalPageInChromium(t *testing.T) {
	browser := startBrowser(t)

	// The person approves on the page; the code it shows confirms the call
	// once, and the chain shows exactly the previewed transfer.
	t.Run("ApprovedCodeSendsOnce", func(t *testing.T) {
		t.Parallel()
		s := startApprovalServer(t)
		tab := newTab(t, browser)
		to := common.HexToAddress("0x00000000000000000000000000000000000b0a01")
		before := s.snapshot(to)
		id, args := s.previewSend(t, to, "25")
		s.requireNothingMoved(t, before, to)

		s.openPreview(tab, id)
		marker := tab.text("network")
		require.Contains(t, marker, "local dev chain")
		require.Contains(t, marker, "chain id 1337")
		require.Equal(t, "Send 25 USDT", tab.text("title"))
		require.Equal(t, to.Hex(), strings.Join(strings.Fields(tab.text("recipient")), ""))
		require.Contains(t, tab.text("amounts"), "25 USDT")
		require.Equal(t, "pending", tab.text("state"))
		require.False(t, tab.has("code"))

		resp := tab.click("approve")
		tab.requireStatus(resp, http.StatusOK, "the approve POST redirects to the preview's page")
		require.Equal(t, s.detail(id), resp.URL)
		require.Equal(t, "approved", tab.text("state"))
		code := tab.text("code")
		require.Regexp(t, codePattern, code)

		done := s.confirm(args, code)
		require.Nil(t, done["isError"], text(done))
		require.Equal(t, "confirmed", done["structuredContent"].(map[string]any)["status"], text(done))
		amount := big.NewInt(25_000_000) // 25 USDT, 6 decimals
		after := s.snapshot(to)
		require.Equal(t, new(big.Int).Add(before.dest, amount), after.dest, "the recipient got exactly 25 USDT")
		require.Equal(t, new(big.Int).Sub(before.wallet, amount), after.wallet, "the wallet paid exactly 25 USDT")
		require.Equal(t, before.nonce+1, after.nonce, "one transaction")

		again := s.confirm(args, code)
		refusedWith(t, again, "CODE_USED")
		s.requireNothingMoved(t, after, to)

		tab.navigate(s.detail(id))
		require.Equal(t, "used", tab.text("state"))
		require.False(t, tab.has("code"), "a used code is no longer shown")
		require.False(t, tab.has("approve"))
	})

	// Rejecting on the page revokes the preview: no code confirms it, and
	// nothing is spent or counted.
	t.Run("RejectedPreviewMovesNothing", func(t *testing.T) {
		t.Parallel()
		s := startApprovalServer(t)
		tab := newTab(t, browser)
		to := common.HexToAddress("0x00000000000000000000000000000000000b0a02")
		caps := policyCaps(t, s.stdioClient)
		before := s.snapshot(to)
		id, args := s.previewSend(t, to, "30")

		s.openPreview(tab, id)
		resp := tab.click("reject")
		tab.requireStatus(resp, http.StatusOK, "the reject POST redirects to the preview's page")
		require.Equal(t, s.detail(id), resp.URL)
		require.Equal(t, "rejected", tab.text("state"))
		require.False(t, tab.has("code"))
		require.False(t, tab.has("approve"), "a rejected preview cannot be approved after all")

		refusedWith(t, s.confirm(args, "123-456"), "APPROVAL_REJECTED")
		s.requireNothingMoved(t, before, to)
		require.Equal(t, caps, policyCaps(t, s.stdioClient), "the caps are untouched")
	})

	// A preview that expires cannot be approved: not from a fresh page, not
	// from a page loaded while it was live, not by a hand-made POST.
	t.Run("ExpiredPreviewCannotBeApproved", func(t *testing.T) {
		t.Parallel()
		s := startApprovalServer(t, "WALLETGATE_CONFIRM_TTL=10s")
		stale, fresh := newTab(t, browser), newTab(t, browser)
		to := common.HexToAddress("0x00000000000000000000000000000000000b0a03")
		before := s.snapshot(to)
		id, args := s.previewSend(t, to, "5")

		s.openPreview(stale, id)
		stale.stayPut() // it would reload itself at the expiry and lose its form
		require.Equal(t, "pending", stale.text("state"))
		require.True(t, stale.has("approve"))
		csrf := stale.csrf()

		deadline := time.Now().Add(25 * time.Second)
		for {
			fresh.navigate(s.detail(id))
			if fresh.text("state") == "expired" {
				break
			}
			require.True(t, time.Now().Before(deadline), "preview %s never expired", id)
			time.Sleep(500 * time.Millisecond)
		}
		require.False(t, fresh.has("approve"), "an expired preview has no approve button")
		require.False(t, fresh.has("reject"))
		require.Contains(t, fresh.text("outcome"), "Expired")

		resp := stale.click("approve")
		stale.requireStatus(resp, http.StatusGone, "approving from a page loaded before the expiry")
		require.Contains(t, stale.text("problem"), "expired")
		require.False(t, stale.has("code"))

		require.Equal(t, http.StatusGone, postForm(t, s.detail(id)+"/approve", url.Values{"csrf": {csrf}}.Encode(), s.origin(t), ""),
			"a same-origin POST with the right CSRF token, after the expiry")

		fresh.navigate(s.detail(id))
		require.Equal(t, "expired", fresh.text("state"), "nothing was approved")
		refusedWith(t, s.confirm(args, "123-456"), "APPROVAL_EXPIRED")
		s.requireNothingMoved(t, before, to)
	})

	// Another site's page, even one that knows the secret and the CSRF
	// token, cannot approve or reject through the person's browser, nor show
	// the page inside its own.
	t.Run("ForeignPageCannotApproveOrFrame", func(t *testing.T) {
		t.Parallel()
		s := startApprovalServer(t)
		tab := newTab(t, browser)
		to := common.HexToAddress("0x00000000000000000000000000000000000b0a04")
		before := s.snapshot(to)
		id, args := s.previewSend(t, to, "40")
		s.openPreview(tab, id)
		csrf := tab.csrf()

		form := func(action, referrer string) string {
			meta := ""
			if referrer != "" {
				meta = `<meta name="referrer" content="` + referrer + `">`
			}
			return `<!doctype html><html><head>` + meta + `<title>win a prize</title></head><body>` +
				`<form method="post" action="` + s.detail(id) + "/" + action + `"><input type="hidden" name="csrf" value="` + csrf + `">` +
				`<button id="go" type="submit">Claim</button></form></body></html>`
		}
		// A frameable page on yet another port: proof that a frame from
		// another port loads when nothing forbids it.
		control := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<!doctype html><p id="frameable">frameable</p>`)
		}))
		t.Cleanup(control.Close)
		attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			switch r.URL.Path {
			case "/approve":
				io.WriteString(w, form("approve", ""))
			case "/approve-no-referrer": // the browser sends Origin: null
				io.WriteString(w, form("approve", "no-referrer"))
			case "/reject":
				io.WriteString(w, form("reject", ""))
			case "/frame":
				io.WriteString(w, `<!doctype html><iframe id="victim" src="`+s.detail(id)+`"></iframe><iframe id="control" src="`+control.URL+`"></iframe>`)
			default:
				http.NotFound(w, r)
			}
		}))
		t.Cleanup(attacker.Close)
		require.True(t, strings.HasPrefix(attacker.URL, "http://127.0.0.1:"), attacker.URL)
		require.NotEqual(t, s.origin(t), attacker.URL)

		for _, path := range []string{"/approve", "/approve-no-referrer", "/reject"} {
			tab.navigate(attacker.URL + path)
			resp := tab.click("go")
			tab.requireStatus(resp, http.StatusForbidden, "a form on "+path)
			require.Contains(t, tab.body(), "Nothing was approved or rejected", path)
			tab.navigate(s.detail(id))
			require.Equal(t, "pending", tab.text("state"), "after the form on %s", path)
		}

		// The page refuses to be framed: the browser shows its error page in
		// the frame, where a frameable page from another port loads.
		tab.navigate(attacker.URL + "/frame")
		ctrl := tab.frameDocument("control")
		require.Equal(t, control.URL+"/", ctrl.DocumentURL)
		require.True(t, hasNodeID(ctrl, "frameable"), "the control frame shows its content")
		victim := tab.frameDocument("victim")
		require.NotEqual(t, s.detail(id), victim.DocumentURL, "the approval page must not load inside another site's frame")
		require.False(t, hasNodeID(victim, "state"), "the approval page must not render inside another site's frame")
		headers := tab.navigate(s.detail(id)).Headers
		require.Equal(t, "DENY", headerOf(headers, "X-Frame-Options"))
		require.Contains(t, headerOf(headers, "Content-Security-Policy"), "frame-ancestors 'none'")

		refusedWith(t, s.confirm(args, "123-456"), "APPROVAL_PENDING")
		s.requireNothingMoved(t, before, to)
	})

	// A code confirms only the preview it was shown for: used on another
	// preview it is refused, spent, and moves nothing.
	t.Run("CodeOfOnePreviewDoesNotConfirmAnother", func(t *testing.T) {
		t.Parallel()
		s := startApprovalServer(t)
		tab := newTab(t, browser)
		to := common.HexToAddress("0x00000000000000000000000000000000000b0a05")
		before := s.snapshot(to)
		idA, argsA := s.previewSend(t, to, "10")
		idB, argsB := s.previewSend(t, to, "11")
		require.NotEqual(t, idA, idB)

		s.openPreview(tab, idA)
		tab.requireStatus(tab.click("approve"), http.StatusOK, "approve preview "+idA)
		code := tab.text("code")
		require.Regexp(t, codePattern, code)

		// The approval layer itself refuses, naming the preview the code
		// was for; the gate behind it would refuse too, but not say so.
		mismatch := refusedWith(t, s.confirm(argsB, code), "ARGS_MISMATCH")
		require.Contains(t, mismatch, "approval code was given for a different preview (id "+idA+")")
		s.requireNothingMoved(t, before, to)
		refusedWith(t, s.confirm(argsA, code), "CODE_USED")
		s.requireNothingMoved(t, before, to)

		tab.navigate(s.detail(idA))
		require.Equal(t, "used", tab.text("state"), "a mismatched code is spent")
		tab.navigate(s.detail(idB))
		require.Equal(t, "pending", tab.text("state"), "the other preview still awaits the person")
	})
}
