package main

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
	term := &terminal{out: &out}
	term.show(pendingItem{
		server: approval.ServerInfo{PID: 7, Wallet: "0xabc"},
		view: approval.View{ID: "ABCD", Tool: "wallet_send", State: approval.Pending, Expires: time.Now().Add(time.Minute), Display: approval.Display{
			Title: "Send 1 " + hostile, Network: "net", Marker: "MAINNET (real funds)", Mainnet: true,
			Amounts: []string{"1 " + hostile}, Unverified: []string{hostile + " (0x01)"}, Warnings: []string{hostile}, Text: "line1\n" + hostile,
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
