package main_test

// The person is shown the way (issue 28, item 4): in human mode a preview the
// person must approve opens its approval page in their browser, once; where
// it cannot, the preview says where the page is; and a confirm with the
// preview's id from a client that cannot open pages says what the person
// does instead of asking for another preview. No test opens a browser on
// this machine: the opener is a script that records the address it is
// given, and Chromium (headless, the test's own) opens that address.

import (
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// recordingOpener writes a script that appends the address it is given to
// a file, and fails — writing TWICE — when it is given one it was given
// before. It returns the script's path and the record's.
func recordingOpener(t *testing.T) (script, record string) {
	t.Helper()
	dir := t.TempDir()
	script, record = filepath.Join(dir, "open-browser"), filepath.Join(dir, "opened.txt")
	body := "#!/bin/sh\n" +
		"if [ -f '" + record + "' ] && grep -qxF \"$1\" '" + record + "'; then echo TWICE >> '" + record + "'; exit 1; fi\n" +
		"echo \"$1\" >> '" + record + "'\n"
	require.NoError(t, os.WriteFile(script, []byte(body), 0o700))
	return script, record
}

// humanServerOpening starts walletgate in human mode on info's chain with
// WALLETGATE_OPEN_BROWSER=opener and returns it, its state directory and
// the approval page's address.
func humanServerOpening(t *testing.T, info devnetInfo, opener string) (*stdioClient, string, string) {
	t.Helper()
	state := t.TempDir()
	var env []string
	for _, kv := range capsEnv(info, state) {
		if !strings.HasPrefix(kv, "WALLETGATE_OPEN_BROWSER=") {
			env = append(env, kv)
		}
	}
	c := startServer(t, append(env, "WALLETGATE_CONFIRM=human", "WALLETGATE_OPEN_BROWSER="+opener))
	c.initialize()
	page := pageOf(t, c)
	return c, state, page
}

func TestHumanModeOpensTheApprovalPageInTheBrowserOnce(t *testing.T) {
	browser := startBrowser(t)
	info := startDevnet(t)
	chain := newChainView(t, info)
	script, record := recordingOpener(t)
	c, state, page := humanServerOpening(t, info, script)
	urlFile := filepath.Join(state, "approvals", strconv.Itoa(c.cmd.Process.Pid)+".url")

	to := common.HexToAddress("0x00000000000000000000000000000000000b0a07")
	args := map[string]any{"to": to.Hex(), "amount": "7", "asset": "USDT"}
	before := chain.usdtOf(to)
	id := previewID(t, c, args)
	res := c.callTool("wallet_policy", map[string]any{})
	require.Contains(t, text(res), "Approval page: opened in the person's default browser", "wallet_policy says the page is opened")

	// The preview opened exactly its own page, through a 0600 file that
	// sends the browser on to it (the page's secret is on no command
	// line), and says so — never the address, which holds the secret.
	waitFor(t, "the opener's record", func() bool { b, _ := os.ReadFile(record); return len(b) > 0 })
	opened, err := os.ReadFile(record)
	require.NoError(t, err)
	launcher := filepath.Join(state, "approvals", "open-"+strconv.Itoa(c.cmd.Process.Pid)+"-"+id+".html")
	require.Equal(t, "file://"+launcher+"\n", string(opened), "the opener was given the preview's launcher")
	require.NotContains(t, string(opened), page, "no secret on the opener's command line")
	fi, err := os.Stat(launcher)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	body, err := os.ReadFile(launcher)
	require.NoError(t, err)
	require.Contains(t, string(body), `content="0;url=`+page+"p/"+id+`"`, "it sends the browser on to the preview's own page")

	// A client without URL-mode elicitation that confirms with the id is
	// told what the person does, not to make another preview; nothing is
	// spent by it.
	refused := c.callTool("wallet_send", withConfirm(args, id))
	why := refusedWith(t, refused, "APPROVAL_PENDING")
	require.Contains(t, why, "preview "+id+" awaits the person's approval")
	require.Contains(t, why, "walletgate opened preview "+id+"'s approval page in the person's default browser")
	require.Contains(t, why, urlFile, "it names the file holding the page's address")
	require.Contains(t, why, "Do not ask for a new preview")
	require.NotContains(t, why, "call the tool again without confirm")
	require.NotContains(t, why, page, "the page's secret never reaches the model")

	// The person opens what the opener was given, in a real browser, and
	// approves; the code confirms the send, which the chain shows.
	tab := newTab(t, browser)
	tab.open(strings.TrimSpace(string(opened))) // the launcher sends the browser on at once
	waitFor(t, "the browser to arrive at the preview's page", func() bool { return tab.has("preview-id") })
	require.Equal(t, id, tab.text("preview-id"))
	require.Equal(t, "Send 7 USDT", tab.text("title"))
	tab.requireStatus(tab.click("approve"), http.StatusOK, "the approve POST")
	code := tab.text("code")
	require.Regexp(t, codePattern, code)
	done := c.callTool("wallet_send", withConfirm(args, code))
	require.Nil(t, done["isError"], text(done))
	require.Equal(t, "confirmed", done["structuredContent"].(map[string]any)["status"], text(done))
	require.Equal(t, new(big.Int).Add(before, big.NewInt(7_000_000)), chain.usdtOf(to), "the recipient got exactly 7 USDT")

	// Once per preview: after the refused confirm, the confirm and the
	// server's stop, the record still holds one address (the script writes
	// TWICE when given one again; walletgate waits for its openers when it
	// stops).
	c.stop()
	opened, err = os.ReadFile(record)
	require.NoError(t, err)
	require.Equal(t, "file://"+launcher+"\n", string(opened), "the page was opened once")
	_, err = os.Stat(launcher)
	require.True(t, os.IsNotExist(err), "the launcher is removed when walletgate stops")
}

// Where walletgate cannot open a browser, the preview says exactly where
// the person finds the page.
func TestHumanModePreviewSaysWhereThePageIsWhenNoBrowserOpens(t *testing.T) {
	info := startDevnet(t)
	for _, tc := range []struct{ name, opener, says string }{
		{"off", "off", "walletgate could not open a browser for the person, so tell them: the approval page's address is in the file "},
		{"opener missing", "/nonexistent/open-browser", "walletgate could not open a browser for the person, so tell them: the approval page's address is in the file "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, state, page := humanServerOpening(t, info, tc.opener)
			urlFile := filepath.Join(state, "approvals", strconv.Itoa(c.cmd.Process.Pid)+".url")
			res := c.callTool("wallet_send", map[string]any{"to": "0x00000000000000000000000000000000000b0a08", "amount": "1", "asset": "USDT"})
			require.Nil(t, res["isError"], text(res))
			txt := text(res)
			require.Contains(t, txt, tc.says+urlFile)
			require.NotContains(t, txt, page)
			require.NotContains(t, txt, "`walletgate approvals`", "no command that is on no PATH")
			exe := "approve in a terminal with: WALLETGATE_STATE_DIR=" + state + " " + binary + " approvals"
			require.Contains(t, txt, exe, "the terminal command is this binary's, by its absolute path")
			how := res["structuredContent"].(map[string]any)["approval"].(map[string]any)["how"].(string)
			require.Contains(t, how, urlFile)
		})
	}
}
