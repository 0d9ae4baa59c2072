package tools_test

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/tools"
)

// The outcomes a confirm reports after a broadcast, each produced on the real
// chain by QuirkyToken (testdata/contracts): the answer, its schema (checked
// by the shared client) and the chain must agree.

// quirky deploys a QuirkyToken of the wallet's with 1000 units (6 decimals).
func (e *env) quirky() common.Address {
	e.t.Helper()
	tok, err := e.dev.Deploy(e.ctx, "QuirkyToken", "Quirky", "QRK", uint8(6), big.NewInt(1_000_000_000))
	require.NoError(e.t, err)
	return tok
}

// ownerCall sends a QuirkyToken owner call from the dev account (the wallet).
func (e *env) ownerCall(tok common.Address, signature string, args ...*big.Int) {
	e.t.Helper()
	data := crypto.Keccak256([]byte(signature))[:4]
	for _, a := range args {
		data = append(data, common.LeftPadBytes(a.Bytes(), 32)...)
	}
	rcpt, err := e.dev.SendAsDev(e.ctx, &tok, nil, data, 300_000)
	require.NoError(e.t, err)
	require.Equal(e.t, uint64(1), rcpt.Status, signature)
}

// outcome confirms and decodes a refused outcome that still carries
// structuredContent (REVERTED, EFFECT_MISMATCH).
func (e *env) outcome(args map[string]any, token, code string) (confirmOut, string) {
	e.t.Helper()
	res := e.call("wallet_send", mustJSON(with(args, token)))
	text := resultText(res)
	require.True(e.t, res.IsError, text)
	require.True(e.t, strings.HasPrefix(text, code+": "), text)
	require.NotNil(e.t, res.StructuredContent, "a broadcast outcome carries structuredContent: %s", text)
	var out confirmOut
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(e.t, err)
	require.NoError(e.t, json.Unmarshal(b, &out))
	return out, text
}

// evenHead brings the chain's head to an even block, sending a 1-wei
// transfer when it is odd. The dev chain seals a block only while a
// transaction waits (devnet's miner), so a head read after a receipt stays
// put until the next transaction: the wallet's broadcast lands in the odd
// block after it. Nothing here waits for time.
func (e *env) evenHead() {
	e.t.Helper()
	n, err := e.dev.Client().BlockNumber(e.ctx)
	require.NoError(e.t, err)
	if n%2 == 1 {
		sink := addr("0x00000000000000000000000000000000000000e4")
		rcpt, err := e.dev.SendAsDev(e.ctx, &sink, big.NewInt(1), nil, 21_000)
		require.NoError(e.t, err)
		require.Equal(e.t, n+1, rcpt.BlockNumber.Uint64(), "one transaction, one block")
		n, err = e.dev.Client().BlockNumber(e.ctx)
		require.NoError(e.t, err)
	}
	require.Zero(e.t, n%2, "head %d", n)
}

func TestEffectMismatchIsIncludedNotConfirmed(t *testing.T) {
	e := newEnv(t, func(d *tools.Deps) { d.Config.AllowUncappedTokens = true })
	tok := e.quirky()
	to := addr("0x00000000000000000000000000000000000000e2")
	args := map[string]any{"to": to.Hex(), "amount": "10", "asset": tok.Hex()}
	p := e.preview("wallet_send", args)
	e.ownerCall(tok, "setFeeBps(uint256)", big.NewInt(100)) // 1%: the recipient gets 9.9

	out, text := e.outcome(args, p.ConfirmToken, "EFFECT_MISMATCH")
	require.Equal(t, "effect_mismatch", out.Status, "never \"confirmed\" when the previewed effect was not seen")
	require.NotContains(t, text, "CONFIRMED")
	require.Contains(t, text, "succeeded in block")
	require.Contains(t, text, "no Transfer of exactly 10 QRK (UNVERIFIED)")
	require.NotEmpty(t, out.Effects, "what the receipt did show")
	require.Equal(t, "9.9", out.Effects[0].Amount)
	// The chain agrees: included, succeeded, 9.9 arrived.
	require.Equal(t, big.NewInt(9_900_000), e.balanceOf(tok, to))
}

func TestRevertedOnChainAfterSimulationPassed(t *testing.T) {
	e := newEnv(t, func(d *tools.Deps) { d.Config.AllowUncappedTokens = true })
	tok := e.quirky()
	to := addr("0x00000000000000000000000000000000000000e3")
	args := map[string]any{"to": to.Hex(), "amount": "10", "asset": tok.Hex()}
	p := e.preview("wallet_send", args)
	e.ownerCall(tok, "setOddBlocksRevert(bool)", big.NewInt(1))
	e.evenHead()
	ethBefore := e.state()

	out, text := e.outcome(args, p.ConfirmToken, "REVERTED")
	require.Equal(t, "reverted", out.Status)
	require.Contains(t, text, "nothing moved except network fees")
	require.Empty(t, out.Effects)
	require.NotEmpty(t, out.Fee)
	// The chain agrees: the transaction is there, failed, and nothing moved.
	rcpt, err := e.dev.WaitReceipt(e.ctx, common.HexToHash(out.TxHash))
	require.NoError(t, err)
	require.Equal(t, uint64(0), rcpt.Status)
	require.Zero(t, e.balanceOf(tok, to).Sign())
	require.Equal(t, ethBefore.nonce+1, e.state().nonce, "the reverted transaction took its nonce")
}
