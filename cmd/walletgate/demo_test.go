package main_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// walletgate demo tries every write kind that moves a token without a
// transaction on the dev chain: a permit, signed and then used by its
// spender, and an x402 payment from the 402 to the resource served, the
// payee paid on chain (the demo itself reads the balances and fails if they
// are not what it says).
func TestDemoShowsAPermitAndAnX402PaymentEndToEnd(t *testing.T) {
	cmd := exec.Command(binary, "demo")
	cmd.Env = cleanEnv("WALLETGATE_STATE_DIR=" + t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	out := stdout.String()
	steps := []string{
		"▶ wallet_sign_typed_data",
		"SIGNED",
		"permit(…) submitted by the spender",
		"▶ wallet_allowance",
		"→ 402 Payment Required",
		"▶ wallet_pay_x402",
		"as the paying server states it",
		"PAYMENT-SIGNATURE",
		"→ 200 OK",
		"transferWithAuthorization",
		"▶ wallet_verify_tx",
		"the payee now holds 1 USDC on chain",
	}
	at := 0
	for _, s := range steps {
		i := strings.Index(out[at:], s)
		require.GreaterOrEqual(t, i, 0, "the demo does not show %q after offset %d:\n%s", s, at, out)
		at += i
	}
	require.NotContains(t, out, "TYPED_DATA_NO_CONTRACT")
}
