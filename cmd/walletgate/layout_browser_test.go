package main_test

// Layout tests of the approval page in real headless Chromium, at the widths
// a person reads it at: a phone (390 px, emulated as a mobile device, so the
// viewport meta tag matters), half a laptop screen (640 px) and a full one
// (1280 px). What they check is what a hardware wallet's screen promises:
// nothing is cut off (the document is never wider than the viewport), the
// recipient is there in full above the buttons, and so is how the caps stand
// after this. Screenshots of every page at every width are written to
// $WALLETGATE_SCREENSHOTS (default: the test's temporary directory) for a
// reviewer to look at; they are not committed.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// layoutWidths are the viewport widths every page is checked at.
var layoutWidths = []struct {
	width  int64
	mobile bool
}{{390, true}, {640, false}, {1280, false}}

// screenshotDir is where the screenshots go.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("WALLETGATE_SCREENSHOTS")
	if dir == "" {
		return t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// layout is what the page looks like in the browser, measured by script run
// through the DevTools protocol (the page itself runs none).
type layout struct {
	ViewportWidth int     `json:"vw"`
	ScrollWidth   int     `json:"scroll"`
	Viewport      string  `json:"viewport"`       // the viewport meta tag's content
	Recipient     string  `json:"recipient"`      // #recipient's text, whitespace removed
	RecipientOut  bool    `json:"recipientOut"`   // a part of it lies outside the viewport
	RecipientLow  float64 `json:"recipientBelow"` // its bottom minus the first button's top (≤ 0: above)
	Caps          string  `json:"caps"`
	CapsLow       float64 `json:"capsBelow"`
	Button        bool    `json:"button"` // a decision button is on the page
}

const measureLayout = `(() => {
  const vw = window.innerWidth;
  const out = {vw, scroll: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
    viewport: (document.querySelector('meta[name="viewport"]') || {}).content || "",
    recipient: "", recipientOut: false, recipientBelow: 1e9, caps: "", capsBelow: 1e9, button: false};
  const btn = document.querySelector('.actions button');
  const top = btn ? btn.getBoundingClientRect().top : 1e9;
  out.button = !!btn;
  const r = document.getElementById('recipient');
  if (r) {
    out.recipient = r.textContent.replace(/\s+/g, "");
    for (const el of [r, ...r.querySelectorAll('*')]) {
      for (const box of el.getClientRects()) {
        if (box.left < 0 || box.right > vw + 0.5) out.recipientOut = true;
      }
    }
    out.recipientBelow = r.getBoundingClientRect().bottom - top;
  }
  const c = document.getElementById('caps');
  if (c) {
    out.caps = c.textContent.replace(/\s+/g, " ").trim();
    out.capsBelow = c.getBoundingClientRect().bottom - top;
  }
  return out;
})()`

// checkLayout loads url at every width, requires that nothing overflows, and
// writes a screenshot per width named after page. want, when set, is the
// address that must stand in full above the buttons with the caps line.
func checkLayout(t *testing.T, tab *browserTab, url, page string, want *common.Address, shots string) {
	t.Helper()
	for _, w := range layoutWidths {
		t.Run(fmt.Sprintf("%s/%d", page, w.width), func(t *testing.T) {
			var opts []chromedp.EmulateViewportOption
			if w.mobile {
				opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(3))
			}
			runIn(tab, chromedp.EmulateViewport(w.width, 900, opts...))
			tab.requireStatus(tab.navigate(url), http.StatusOK, page)
			m := runIn(tab, chromedp.Evaluate[layout](measureLayout))
			png := runIn(tab, chromedp.FullScreenshot(100))
			require.NoError(t, os.WriteFile(filepath.Join(shots, fmt.Sprintf("%s-%d.png", page, w.width)), png, 0o644))

			require.Contains(t, m.Viewport, "width=device-width", "the mobile viewport meta tag")
			require.EqualValues(t, w.width, m.ViewportWidth, "the page is laid out at the device's width (no zooming out)")
			require.LessOrEqual(t, m.ScrollWidth, m.ViewportWidth, "the page is wider than the window: something is cut off or needs sideways scrolling")
			if want == nil {
				return
			}
			require.True(t, m.Button, "the page has its decision buttons")
			require.Equal(t, want.Hex(), m.Recipient, "the full address, checksummed, in the summary")
			require.False(t, m.RecipientOut, "no part of the address lies outside the window")
			require.LessOrEqual(t, m.RecipientLow, 0.0, "the address stands above the buttons")
			require.Contains(t, m.Caps, "left", "how the caps stand after this")
			require.LessOrEqual(t, m.CapsLow, 0.0, "the caps line stands above the buttons")
		})
	}
}

func TestApprovalPageLayoutInChromium(t *testing.T) {
	browser := startBrowser(t)
	shots := screenshotDir(t)
	t.Logf("screenshots in %s", shots)
	s := startApprovalServer(t)
	tab := newTab(t, browser)

	// An address whose checksum mixes cases, as people are used to reading.
	to := common.HexToAddress("0x252F548bFEA5C0a7b9e1D56F4E2a3e0B7c1D9A43")
	id, args := s.previewSend(t, to, "25.123456")
	swap := s.callTool("wallet_swap", map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "30"})
	require.Nil(t, swap["isError"], text(swap))
	swapID := swap["structuredContent"].(map[string]any)["approval"].(map[string]any)["id"].(string)
	router := common.HexToAddress(swap["structuredContent"].(map[string]any)["preview"].(map[string]any)["router"].(string))

	checkLayout(t, tab, s.page, "list", nil, shots)
	checkLayout(t, tab, s.detail(id), "send-pending", &to, shots)
	checkLayout(t, tab, s.detail(swapID), "swap-pending", &router, shots)
	legs := tab.text("legs")
	require.Regexp(t, `(?s)approve: let the router take 30 USDT, exactly.*swap: pay 30 USDT for at least`, legs, "every leg, the approval included")
	require.Contains(t, tab.text("allowance"), "0 USDT before, 0 USDT after")
	require.Regexp(t, `1 USDT ≈ [0-9.]+ WETH · 1 WETH ≈ [0-9,.]+ USDT`, tab.body())
	require.Contains(t, tab.body(), "0.5% (50 bps)")

	runIn(tab, chromedp.EmulateViewport(1280, 900))
	tab.navigate(s.detail(id))
	tab.requireStatus(tab.click("approve"), http.StatusOK, "approve")
	code := tab.text("code")
	require.Regexp(t, codePattern, code)
	checkLayout(t, tab, s.detail(id), "send-approved", &to, shots)

	done := s.confirm(args, code)
	require.Nil(t, done["isError"], text(done))
	hash := done["structuredContent"].(map[string]any)["tx_hash"].(string)
	checkLayout(t, tab, s.detail(id), "send-used", nil, shots)
	outcome := strings.Join(strings.Fields(tab.text("outcome")), "")
	require.Contains(t, outcome, hash, "the used page names the transaction")
	require.Contains(t, tab.text("outcome"), "erified", "and says what was verified on chain")
	checkLayout(t, tab, s.page, "list-history", nil, shots)
}
