package gate_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/gate"
)

// TestFingerprintFormat pins the hash input byte for byte, and one digest, so
// a change to the encoding cannot pass unnoticed.
func TestFingerprintFormat(t *testing.T) {
	want := []byte("walletgate/gate/v1\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x0bwallet_send" +
		"\x00\x00\x00\x00\x00\x00\x00\x03abc")
	var buf bytes.Buffer
	gate.WriteInput(&buf, "wallet_send", []byte("abc"))
	require.Equal(t, want, buf.Bytes())

	sum := sha256.Sum256(want)
	got := gate.Fingerprint("wallet_send", []byte("abc"))
	require.Equal(t, sum, got)
	require.Equal(t, "bb68783617e9a6db167e5c6a62499b235cf9c600a7b845dcf79383a552a710e0", hex.EncodeToString(got[:]))
}

func TestFingerprintInjective(t *testing.T) {
	type pair struct {
		tool string
		args []byte
	}
	tests := []struct {
		name string
		a, b pair
	}{
		{"split inside args", pair{"ab", []byte("c")}, pair{"a", []byte("bc")}},
		{"byte moved from tool to args", pair{"wallet_send", []byte("x")}, pair{"wallet_sen", []byte("dx")}},
		{"byte moved from args to tool", pair{"wallet_send", []byte("x")}, pair{"wallet_sendx", nil}},
		{"all in tool vs all in args", pair{"abc", nil}, pair{"", []byte("abc")}},
		{"empty vs one zero byte", pair{"t", nil}, pair{"t", []byte{0}}},
		{"tool with zero byte vs args", pair{"t\x00", nil}, pair{"t", []byte{0}}},
		{"length bytes smuggled into tool", pair{"a" + "\x00\x00\x00\x00\x00\x00\x00\x01b", nil}, pair{"a", []byte("b")}},
		{"tool swallows the args length", pair{"a", []byte("b\x00\x00\x00\x00\x00\x00\x00\x00")}, pair{"a\x00\x00\x00\x00\x00\x00\x00\x09b", nil}},
		{"tool vs args swapped", pair{"x", []byte("y")}, pair{"y", []byte("x")}},
		{"empty vs empty tool", pair{"", nil}, pair{"\x00", nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fa := gate.Fingerprint(tt.a.tool, tt.a.args)
			fb := gate.Fingerprint(tt.b.tool, tt.b.args)
			require.NotEqual(t, fa, fb)
		})
	}
}

func TestFingerprintNotPlainSHA256(t *testing.T) {
	args := []byte("args")
	fp := gate.Fingerprint("", args)
	require.NotEqual(t, sha256.Sum256(args), fp)
	require.NotEqual(t, sha256.Sum256(append([]byte("wallet_send"), args...)), gate.Fingerprint("wallet_send", args))
}

// FuzzFingerprint checks that different (tool, args) pairs give different hash
// inputs and different fingerprints, and the same pair the same fingerprint.
func FuzzFingerprint(f *testing.F) {
	f.Add("ab", []byte("c"), "a", []byte("bc"))
	f.Add("wallet_send", []byte("x"), "wallet_sen", []byte("dx"))
	f.Add("abc", []byte{}, "", []byte("abc"))
	f.Add("t", []byte{}, "t", []byte{0})
	f.Add("a\x00\x00\x00\x00\x00\x00\x00\x01b", []byte{}, "a", []byte("b"))
	f.Add("a", []byte("b\x00\x00\x00\x00\x00\x00\x00\x00"), "a\x00\x00\x00\x00\x00\x00\x00\x09b", []byte{})
	f.Add("wallet_send", []byte("same"), "wallet_send", []byte("same"))
	f.Fuzz(func(t *testing.T, toolA string, argsA []byte, toolB string, argsB []byte) {
		fa := gate.Fingerprint(toolA, argsA)
		require.Equal(t, fa, gate.Fingerprint(toolA, bytes.Clone(argsA)), "deterministic")

		var ia, ib bytes.Buffer
		gate.WriteInput(&ia, toolA, argsA)
		gate.WriteInput(&ib, toolB, argsB)
		fb := gate.Fingerprint(toolB, argsB)
		if toolA == toolB && bytes.Equal(argsA, argsB) {
			require.Equal(t, fa, fb)
			return
		}
		require.NotEqual(t, ia.Bytes(), ib.Bytes(), "hash inputs must differ")
		require.NotEqual(t, fa, fb)
	})
}
