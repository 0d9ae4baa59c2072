package terminal

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/approval"
)

func TestTerminalShowsHostileTextInert(t *testing.T) {
	hostile := "EVIL\x1b[2J\x1b]0;owned\x07\u202eDSU\r\b"
	var out strings.Builder
	term := &terminal{out: &out, width: func() int { return 80 }}
	term.show(pendingItem{
		server: approval.ServerInfo{PID: 7, Wallet: "0xabc"},
		view: approval.View{ID: "ABCD", Tool: "wallet_send", State: approval.Pending, Expires: time.Now().Add(time.Minute), Display: approval.Display{
			Title: "Send 1 " + hostile, Network: "net", Marker: "MAINNET (real funds)", Mainnet: true,
			Amounts: []approval.Amount{{Label: "Send", Rounded: "1 " + hostile}}, Unverified: []string{hostile + " (0x01)"}, Warnings: []string{hostile}, Text: "line1\n" + hostile,
		}},
	})
	shown := out.String()
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\r", "\b"} {
		require.NotContains(t, shown, bad, "a control or format character reached the terminal")
	}
	require.Contains(t, shown, "MAINNET (REAL FUNDS)")
	require.Contains(t, shown, "UNVERIFIED TOKEN:")
	require.Contains(t, shown, "line1\nEVIL\uFFFD[2J", "newlines of the preview stay; the escape does not")

	// With colour on, the only escapes are walletgate's own.
	out.Reset()
	term.color = true
	term.show(pendingItem{view: approval.View{ID: "ABCD", Display: approval.Display{Title: hostile, Marker: "testnet"}}})
	require.NotContains(t, ansiOwn.ReplaceAllString(out.String(), ""), "\x1b")
}

var ansiOwn = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestWrapAtWordBoundaries(t *testing.T) {
	text := "Network: walletgate dev chain, chain id 1337 — Local dev chain; the recipient 0x252F 548B FEA5 C0A7 b9E1 d56F 4E2a 3e0b 7c1d 9A43 in full"
	for _, width := range []int{20, 37, 60, 120} {
		lines := wrap(text, width, "  ")
		for _, l := range lines {
			require.LessOrEqual(t, visible(l), width, "line %q is wider than %d", l, width)
		}
		require.Equal(t, strings.Fields(text), strings.Fields(strings.Join(lines, " ")), "no word is broken or lost at width %d", width)
		if width < len(text) {
			require.Greater(t, len(lines), 1)
			require.True(t, strings.HasPrefix(lines[1], "  "), "continuation lines are indented")
		}
	}
	require.Equal(t, []string{"Action:    send 1 USDT"}, wrap("Action:    send 1 USDT", 80, ""), "columns the text aligns stay aligned")
	long := "0x" + strings.Repeat("ab", 32)
	lines := wrap("tx "+long, 30, "")
	require.Equal(t, "tx", lines[0])
	require.Equal(t, long, strings.Join(lines[1:], ""), "a word longer than a line is cut, not lost")
	require.Equal(t, []string{"\x1b[1mbold\x1b[0m word"}, wrap("\x1b[1mbold\x1b[0m word", 20, ""), "colour takes no width")
	require.Equal(t, []string{""}, wrap("", 40, ""))
}
