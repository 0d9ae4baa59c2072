package tools_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

type previewOut struct {
	Status  string `json:"status"`
	Preview struct {
		Summary      string `json:"summary"`
		Asset        string `json:"asset"`
		Amount       string `json:"amount"`
		AmountBase   string `json:"amount_base"`
		To           string `json:"to"`
		ToIsContract bool   `json:"to_is_contract"`
		NetworkKind  string `json:"network_kind"`
		GasLimit     uint64 `json:"gas_limit"`
		Caps         []struct {
			Symbol, Window, Limit, UsedAfter, RemainingAfter string
		} `json:"caps_after"`
		NoCap    []string `json:"no_cap"`
		Warnings []string `json:"warnings"`
	} `json:"preview"`
	ConfirmToken string `json:"confirm_token"`
	ExpiresAt    string `json:"expires_at"`
}

type confirmOut struct {
	Status  string `json:"status"`
	TxHash  string `json:"tx_hash"`
	Block   uint64 `json:"block"`
	GasUsed uint64 `json:"gas_used"`
	Fee     string `json:"fee"`
	Effects []struct {
		Kind, Asset, Symbol, From, To, Amount, Raw string
	} `json:"effects"`
}

// state is what every refusal must leave unchanged.
type state struct {
	eth, usdt, dai *big.Int
	nonce          uint64
	caps           string
}

func (e *env) state() state {
	e.t.Helper()
	acct, err := e.chain.Account(e.ctx, signer.DevAddress, []common.Address{e.dev.Contracts.USDT, e.dev.Contracts.DAI})
	require.NoError(e.t, err)
	pending, err := e.dev.Client().PendingNonceAt(e.ctx, signer.DevAddress)
	require.NoError(e.t, err)
	require.Equal(e.t, acct.Nonce, pending, "nothing pending in the pool")
	var pol struct {
		Caps []map[string]string `json:"caps"`
	}
	e.ok("wallet_policy", `{}`, &pol)
	return state{eth: acct.ETH, usdt: acct.Tokens[0].Balance, dai: acct.Tokens[1].Balance, nonce: acct.Nonce, caps: fmt.Sprint(pol.Caps)}
}

// preview calls a write tool without confirm and requires a preview.
func (e *env) preview(tool string, args map[string]any) previewOut {
	e.t.Helper()
	var p previewOut
	e.ok(tool, mustJSON(args), &p)
	require.Equal(e.t, "confirmation_required", p.Status)
	require.Regexp(e.t, `^wgc_[a-z2-7]{32}$`, p.ConfirmToken)
	return p
}

// confirm repeats args with the token.
func with(args map[string]any, token string) map[string]any {
	out := map[string]any{"confirm": token}
	for k, v := range args {
		out[k] = v
	}
	return out
}

func (e *env) balanceOf(token common.Address, who common.Address) *big.Int {
	e.t.Helper()
	acct, err := e.chain.Account(e.ctx, who, []common.Address{token})
	require.NoError(e.t, err)
	require.NoError(e.t, acct.Tokens[0].Err)
	return acct.Tokens[0].Balance
}

func (e *env) ethOf(who common.Address) *big.Int {
	e.t.Helper()
	b, err := e.dev.Client().BalanceAt(e.ctx, who, nil)
	require.NoError(e.t, err)
	return b
}

func TestSendMovesFundsOnChain(t *testing.T) {
	e := newEnv(t)
	to := addr("0x00000000000000000000000000000000000000d1")
	cases := []struct {
		name, asset, amount string
		token               *common.Address
		base                *big.Int
	}{
		{"ETH", "ETH", "0.25", nil, big.NewInt(250_000_000_000_000_000)},
		{"DAI (18 decimals)", "DAI", "12.5", &e.dev.Contracts.DAI, new(big.Int).Mul(big.NewInt(125), big.NewInt(100_000_000_000_000_000))},
		{"USDT-like (6 decimals, no return values)", "USDT", "7.000001", &e.dev.Contracts.USDT, big.NewInt(7_000_001)},
		{"USDT by lower-case address", strings.ToLower(e.dev.Contracts.USDT.Hex()), "1", &e.dev.Contracts.USDT, big.NewInt(1_000_000)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"to": to.Hex(), "amount": c.amount, "asset": c.asset}
			before := e.state()
			recvETH, recvTok := e.ethOf(to), big.NewInt(0)
			if c.token != nil {
				recvTok = e.balanceOf(*c.token, to)
			}

			p := e.preview("wallet_send", args)
			require.Equal(t, c.base.String(), p.Preview.AmountBase)
			require.Equal(t, "dev", p.Preview.NetworkKind)
			require.Equal(t, before, e.state(), "a preview changes nothing")

			var out confirmOut
			text := e.ok("wallet_send", mustJSON(with(args, p.ConfirmToken)), &out)
			require.Equal(t, "confirmed", out.Status, text)
			require.Contains(t, text, "CONFIRMED")
			require.Len(t, out.Effects, 1)
			require.Equal(t, c.base.String(), out.Effects[0].Raw)

			// The chain, not the return value, is the evidence.
			rcpt, err := e.dev.Client().TransactionReceipt(e.ctx, common.HexToHash(out.TxHash))
			require.NoError(t, err)
			require.Equal(t, uint64(1), rcpt.Status)
			require.Equal(t, out.Block, rcpt.BlockNumber.Uint64())
			fee := new(big.Int).Mul(new(big.Int).SetUint64(rcpt.GasUsed), rcpt.EffectiveGasPrice)
			after := e.state()
			require.Equal(t, before.nonce+1, after.nonce)
			if c.token == nil {
				require.Equal(t, new(big.Int).Add(recvETH, c.base), e.ethOf(to))
				require.Equal(t, new(big.Int).Sub(before.eth, new(big.Int).Add(c.base, fee)), after.eth)
			} else {
				require.Equal(t, new(big.Int).Add(recvTok, c.base), e.balanceOf(*c.token, to))
				require.Equal(t, new(big.Int).Sub(before.eth, fee), after.eth, "only the fee in ETH")
				require.Len(t, rcpt.Logs, 1, "one Transfer log")
			}
		})
	}
}

func TestRefusalsChangeNothing(t *testing.T) {
	clk := newClock()
	e := newEnv(t, func(d *tools.Deps) { d.Now = clk.Now })
	to := addr("0x00000000000000000000000000000000000000d2").Hex()
	send := map[string]any{"to": to, "amount": "10", "asset": "USDT"}

	// One successful send, to replay.
	p := e.preview("wallet_send", send)
	var out confirmOut
	e.ok("wallet_send", mustJSON(with(send, p.ConfirmToken)), &out)
	require.Equal(t, "confirmed", out.Status)
	usedToken := p.ConfirmToken

	cases := []struct {
		name string
		// call returns the arguments to send (it may make previews first)
		call func() map[string]any
		code string
	}{
		{"replay after success", func() map[string]any { return with(send, usedToken) }, "TOKEN_USED"},
		{"replay after a failed confirm", func() map[string]any {
			tok := e.preview("wallet_send", send).ConfirmToken
			e.refused("wallet_send", mustJSON(with(map[string]any{"to": to, "amount": "11", "asset": "USDT"}, tok)), "ARGS_MISMATCH")
			return with(send, tok)
		}, "TOKEN_USED"},
		{"expired", func() map[string]any {
			tok := e.preview("wallet_send", send).ConfirmToken
			clk.Advance(5 * time.Minute)
			return with(send, tok)
		}, "TOKEN_EXPIRED"},
		{"recipient changed", func() map[string]any {
			tok := e.preview("wallet_send", send).ConfirmToken
			return with(map[string]any{"to": addr("0x00000000000000000000000000000000000000d3").Hex(), "amount": "10", "asset": "USDT"}, tok)
		}, "ARGS_MISMATCH"},
		{"amount changed by one base unit", func() map[string]any {
			tok := e.preview("wallet_send", send).ConfirmToken
			return with(map[string]any{"to": to, "amount": "10.000001", "asset": "USDT"}, tok)
		}, "ARGS_MISMATCH"},
		{"asset changed", func() map[string]any {
			tok := e.preview("wallet_send", send).ConfirmToken
			return with(map[string]any{"to": to, "amount": "10", "asset": "DAI"}, tok)
		}, "ARGS_MISMATCH"},
		{"guessed token", func() map[string]any { return with(send, "wgc_"+strings.Repeat("a", 32)) }, "TOKEN_UNKNOWN"},
		{"malformed amount", func() map[string]any { return map[string]any{"to": to, "amount": "1e1", "asset": "USDT"} }, "BAD_AMOUNT"},
		{"zero amount", func() map[string]any { return map[string]any{"to": to, "amount": "0", "asset": "USDT"} }, "BAD_AMOUNT"},
		{"too many decimals", func() map[string]any { return map[string]any{"to": to, "amount": "1.0000001", "asset": "USDT"} }, "BAD_AMOUNT"},
		{"zero address", func() map[string]any {
			return map[string]any{"to": "0x0000000000000000000000000000000000000000", "amount": "1", "asset": "USDT"}
		}, "BAD_ADDRESS"},
		{"bad checksum", func() map[string]any {
			return map[string]any{"to": "0xe40aed1eB6c2B8b39b55A809685CC93425F60D0c", "amount": "1"}
		}, "BAD_ADDRESS"},
		{"unknown field", func() map[string]any { return map[string]any{"to": to, "amount": "1", "nonce": "7"} }, "BAD_ARGUMENT"},
		{"JSON number amount", func() map[string]any { return map[string]any{"to": to, "amount": 1} }, "BAD_ARGUMENT"},
		// encoding/json would match "Confirm" to confirm; the strict parser
		// refuses it, and the token it carries is spent all the same.
		{"case-variant Confirm key burns the token", func() map[string]any {
			tok := e.preview("wallet_send", send).ConfirmToken
			e.refused("wallet_send", mustJSON(map[string]any{"to": to, "amount": "10", "asset": "USDT", "Confirm": tok}), "BAD_ARGUMENT")
			return with(send, tok)
		}, "TOKEN_USED"},
		{"case-variant CONFIRM key beside confirm burns both", func() map[string]any {
			tok := e.preview("wallet_send", send).ConfirmToken
			other := e.preview("wallet_send", send).ConfirmToken
			e.refused("wallet_send", mustJSON(map[string]any{"to": to, "amount": "10", "asset": "USDT", "CONFIRM": tok, "confirm": other}), "BAD_ARGUMENT")
			e.refused("wallet_send", mustJSON(with(send, other)), "TOKEN_USED")
			return with(send, tok)
		}, "TOKEN_USED"},
		{"confirm with bad arguments burns the token", func() map[string]any {
			tok := e.preview("wallet_send", send).ConfirmToken
			e.refused("wallet_send", mustJSON(with(map[string]any{"to": to, "amount": "ten", "asset": "USDT"}, tok)), "BAD_AMOUNT")
			return with(send, tok)
		}, "TOKEN_USED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.call()
			before := e.state()
			e.refused("wallet_send", mustJSON(args), c.code)
			require.Equal(t, before, e.state(), "balances, nonce and caps unchanged")
		})
	}

	// Duplicate and case-variant keys, sent as raw JSON.
	before := e.state()
	e.refused("wallet_send", `{"to":"`+to+`","amount":"1","amount":"100"}`, "BAD_ARGUMENT")
	e.refused("wallet_send", `{"to":"`+to+`","amount":"1","AMOUNT":"100"}`, "BAD_ARGUMENT")
	e.refused("wallet_send", `{"to":"`+to+`","amount":"1","value":"100"}`, "BAD_ARGUMENT")
	require.Equal(t, before, e.state())
}

func TestConcurrentConfirmsNeverPassTheSessionCap(t *testing.T) {
	e := newEnv(t)
	to := addr("0x00000000000000000000000000000000000000d4").Hex()
	for i := 0; i < 15; i++ {
		// A fresh server: fresh session caps (DAI 100 per tx, 500 per session).
		s := serverOn(t, e.dev)
		// Four sends of 100 DAI each fit; 150 DAI fits once per transaction…
		// so use amounts whose pair exceeds the session cap: 300 + 300 > 500.
		s2 := serverOn(t, e.dev, func(d *tools.Deps) {
			cfg := d.Config
			cfg.CapPerTx = []policy.CapEntry{{Asset: "ETH", Amount: "1"}, {Asset: "DAI", Amount: "300"}}
			cfg.CapPerSession = []policy.CapEntry{{Asset: "ETH", Amount: "5"}, {Asset: "DAI", Amount: "500"}}
			cfg.CapPerDay = []policy.CapEntry{{Asset: "ETH", Amount: "10"}, {Asset: "DAI", Amount: "1000"}}
			caps, err := tools.ResolveCaps(context.Background(), s.chain, cfg, tools.DevCaps)
			require.NoError(t, err)
			d.Config, d.Caps = cfg, caps
		})
		args := map[string]any{"to": to, "amount": "300", "asset": "DAI"}
		p1 := s2.preview("wallet_send", args)
		p2 := s2.preview("wallet_send", args)
		before := s2.balanceOf(e.dev.Contracts.DAI, addr(to))

		var wg sync.WaitGroup
		results := make([]string, 2)
		for j, tok := range []string{p1.ConfirmToken, p2.ConfirmToken} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := s2.call("wallet_send", mustJSON(with(args, tok)))
				results[j] = resultText(res)
			}()
		}
		wg.Wait()
		confirmed, refused := 0, 0
		for _, r := range results {
			switch {
			case strings.HasPrefix(r, "CONFIRMED"):
				confirmed++
			case strings.HasPrefix(r, "CAP_EXCEEDED"):
				refused++
			}
		}
		require.Equal(t, 1, confirmed, "round %d: %v", i, results)
		require.Equal(t, 1, refused, "round %d: %v", i, results)
		require.Equal(t, new(big.Int).Add(before, new(big.Int).Mul(big.NewInt(300), big.NewInt(1e18))), s2.balanceOf(e.dev.Contracts.DAI, addr(to)))
		_ = s
	}
}

func TestSplittingUnderPerTxCapStopsAtSessionCap(t *testing.T) {
	e := newEnv(t) // USDT: 100 per transaction, 500 per session
	to := addr("0x00000000000000000000000000000000000000d5")
	args := map[string]any{"to": to.Hex(), "amount": "100", "asset": "USDT"}
	text := e.refused("wallet_send", mustJSON(map[string]any{"to": to.Hex(), "amount": "100.000001", "asset": "USDT"}), "CAP_EXCEEDED")
	require.Contains(t, text, "At most 100 USDT fits now")
	require.Contains(t, text, "Caps are the operator's limits (WALLETGATE_CAP_PER_TX)")
	require.NotContains(t, strings.ToLower(text), "split", "a refusal never coaches a way around the cap")
	for i := 0; i < 5; i++ {
		p := e.preview("wallet_send", args)
		var out confirmOut
		e.ok("wallet_send", mustJSON(with(args, p.ConfirmToken)), &out)
		require.Equal(t, "confirmed", out.Status)
	}
	require.Equal(t, big.NewInt(500_000_000), e.balanceOf(e.dev.Contracts.USDT, to))
	before := e.state()
	text = e.refused("wallet_send", mustJSON(map[string]any{"to": to.Hex(), "amount": "0.000001", "asset": "USDT"}), "CAP_EXCEEDED")
	require.Contains(t, text, "more than its per session cap leaves: the cap is 500 USDT, 500 USDT is already used (settled or reserved), so 0 USDT is left. Nothing of it fits now")
	require.Equal(t, before, e.state())
}

func TestMainnetRefusedWithoutOptIn(t *testing.T) {
	pretend := policy.Network{ChainID: 1337, Name: "pretend mainnet", Kind: policy.Mainnet}
	e := newEnv(t, func(d *tools.Deps) { d.Network = &pretend })
	args := map[string]any{"to": addr("0x00000000000000000000000000000000000000d6").Hex(), "amount": "0.01"}
	before := e.state()
	text := e.refused("wallet_send", mustJSON(args), "MAINNET_NOT_ALLOWED")
	require.Contains(t, text, "WALLETGATE_ALLOW_MAINNET=true")
	require.Equal(t, before, e.state())

	opted := serverOn(t, e.dev, func(d *tools.Deps) { d.Network = &pretend; d.Config.AllowMainnet = true })
	p := opted.preview("wallet_send", args)
	require.Equal(t, "mainnet", p.Preview.NetworkKind)
	res := opted.call("wallet_send", mustJSON(args))
	require.Contains(t, resultText(res), "MAINNET (real funds)")
}

func TestAboveBalanceRefusedBySimulation(t *testing.T) {
	e := newEnv(t, func(d *tools.Deps) { d.Config.AllowUncappedTokens = true })
	// A token without a cap (allowed here) whose balance is small.
	tok, err := e.dev.Deploy(e.ctx, "TestToken", "Small", "SML", uint8(2), big.NewInt(500))
	require.NoError(t, err)
	to := addr("0x00000000000000000000000000000000000000d7").Hex()
	before := e.state()
	text := e.refused("wallet_send", mustJSON(map[string]any{"to": to, "amount": "5.01", "asset": tok.Hex()}), "SIMULATION_REVERTED")
	require.Contains(t, text, "exceeds balance")
	require.Equal(t, before, e.state())

	// Within the balance, the preview says plainly that no cap applies.
	p := e.preview("wallet_send", map[string]any{"to": to, "amount": "5", "asset": tok.Hex()})
	require.Len(t, p.Preview.NoCap, 1)
	require.Contains(t, resultText(e.call("wallet_send", mustJSON(map[string]any{"to": to, "amount": "5", "asset": tok.Hex()}))), "NO CAP APPLIES")
}

func TestUncappedTokenRefusedByDefault(t *testing.T) {
	e := newEnv(t)
	tok, err := e.dev.Deploy(e.ctx, "TestToken", "Other", "OTH", uint8(18), big.NewInt(1e18))
	require.NoError(t, err)
	before := e.state()
	text := e.refused("wallet_send", mustJSON(map[string]any{"to": addr("0x00000000000000000000000000000000000000d8").Hex(), "amount": "1", "asset": tok.Hex()}), "UNCAPPED_TOKEN")
	require.Contains(t, text, "WALLETGATE_ALLOW_UNCAPPED_TOKENS=true")
	require.Equal(t, before, e.state())
}

func TestReceiptTimeoutIsPendingAndStaysCounted(t *testing.T) {
	e := newEnv(t, func(d *tools.Deps) { d.Config.ReceiptTimeout = time.Nanosecond })
	to := addr("0x00000000000000000000000000000000000000d9")
	args := map[string]any{"to": to.Hex(), "amount": "3", "asset": "USDT"}
	p := e.preview("wallet_send", args)
	var out confirmOut
	text := e.ok("wallet_send", mustJSON(with(args, p.ConfirmToken)), &out)
	require.Equal(t, "pending", out.Status, text)
	require.Contains(t, text, "wallet_verify_tx")
	require.NotEmpty(t, out.TxHash)

	var pol struct {
		Caps []struct{ Symbol, Window, Used string } `json:"caps"`
	}
	e.ok("wallet_policy", `{}`, &pol)
	for _, c := range pol.Caps {
		if c.Symbol == "USDT" && c.Window == "per session" {
			require.Equal(t, "3", c.Used, "an unknown outcome stays counted")
		}
	}
	// It was sent, and the chain has it.
	rcpt, err := e.dev.WaitReceipt(e.ctx, common.HexToHash(out.TxHash))
	require.NoError(t, err)
	require.Equal(t, uint64(1), rcpt.Status)
	require.Equal(t, big.NewInt(3_000_000), e.balanceOf(e.dev.Contracts.USDT, to))
}

func TestRecipientAllowList(t *testing.T) {
	allowed := addr("0x00000000000000000000000000000000000000da")
	e := newEnv(t, func(d *tools.Deps) { d.Config.AllowTo = []common.Address{allowed} })
	before := e.state()
	e.refused("wallet_send", mustJSON(map[string]any{"to": addr("0x00000000000000000000000000000000000000db").Hex(), "amount": "1", "asset": "USDT"}), "RECIPIENT_NOT_ALLOWED")
	require.Equal(t, before, e.state())
	e.preview("wallet_send", map[string]any{"to": allowed.Hex(), "amount": "1", "asset": "USDT"})
}

func TestWritesNotOfferedWithoutKeyOrInReadMode(t *testing.T) {
	for name, mutate := range map[string]func(*tools.Deps){
		"watch-only": func(d *tools.Deps) { d.Signer = nil },
		"read":       func(d *tools.Deps) { d.Config.Tools = "read" },
		"human mode": func(d *tools.Deps) { d.Config.Confirm = "human" },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mutate)
			_, listed := e.listTools()["wallet_send"]
			require.False(t, listed, "wallet_send is not offered")
			var pol struct {
				Reason string `json:"writes_disabled_reason"`
			}
			e.ok("wallet_policy", `{}`, &pol)
			require.NotEmpty(t, pol.Reason)
		})
	}
}

// The ledger the preview shows is the ledger that refuses: the server's
// instructions state the same caps, once; the amount says they apply.
func TestInstructionsStateTheCaps(t *testing.T) {
	e := newEnv(t)
	desc := e.listTools()["wallet_send"]
	require.Contains(t, desc, "counts against the caps (see wallet_policy)")
	require.NotContains(t, desc, "USDT 100", "the caps are not repeated in each tool")
	init, err := e.mcp.Initialize(e.ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "test", Version: "0"}}})
	require.NoError(t, err)
	require.Contains(t, init.Instructions, "Caps (per transaction / per session / per day): ETH 1 / 5 / 10; ")
	require.Contains(t, init.Instructions, "USDT 100 / 500 / 1000")
	_ = chain.TransferData
}

func TestConcurrentConfirmsGetDistinctNonces(t *testing.T) {
	e := newEnv(t)
	to := addr("0x00000000000000000000000000000000000000dd")
	const n = 4
	args := make([]map[string]any, n)
	tokens := make([]string, n)
	for i := range args {
		args[i] = map[string]any{"to": to.Hex(), "amount": fmt.Sprintf("%d", i+1), "asset": "USDT"}
		tokens[i] = e.preview("wallet_send", args[i]).ConfirmToken
	}
	before := e.state()
	var wg sync.WaitGroup
	texts := make([]string, n)
	for i := range args {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts[i] = resultText(e.call("wallet_send", mustJSON(with(args[i], tokens[i]))))
		}()
	}
	wg.Wait()
	for _, txt := range texts {
		require.True(t, strings.HasPrefix(txt, "CONFIRMED"), txt)
	}
	require.Equal(t, before.nonce+n, e.state().nonce)
	require.Equal(t, big.NewInt(10_000_000), e.balanceOf(e.dev.Contracts.USDT, to), "1+2+3+4 USDT arrived")
}

func TestSameTokenConfirmedConcurrentlyProceedsOnce(t *testing.T) {
	e := newEnv(t)
	to := addr("0x00000000000000000000000000000000000000de")
	args := map[string]any{"to": to.Hex(), "amount": "2", "asset": "USDT"}
	tok := e.preview("wallet_send", args).ConfirmToken
	before := e.state()
	const n = 8
	texts := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts[i] = resultText(e.call("wallet_send", mustJSON(with(args, tok))))
		}()
	}
	wg.Wait()
	confirmed := 0
	for _, txt := range texts {
		if strings.HasPrefix(txt, "CONFIRMED") {
			confirmed++
		} else {
			require.True(t, strings.HasPrefix(txt, "TOKEN_USED: "), txt)
		}
	}
	require.Equal(t, 1, confirmed)
	require.Equal(t, before.nonce+1, e.state().nonce, "one transaction")
	require.Equal(t, big.NewInt(2_000_000), e.balanceOf(e.dev.Contracts.USDT, to), "moved once")
}

// A token confirmed in another walletgate process than the one that
// previewed it (each MCP Inspector --cli call starts a new server) is refused
// with words that say why and what to do.
func TestConfirmInAnotherProcessSaysSo(t *testing.T) {
	e := newEnv(t)
	args := map[string]any{"to": addr("0x00000000000000000000000000000000000000df").Hex(), "amount": "1", "asset": "USDT"}
	tok := e.preview("wallet_send", args).ConfirmToken
	other := serverOn(t, e.dev)
	before := e.state()
	text := other.refused("wallet_send", mustJSON(with(args, tok)), "TOKEN_UNKNOWN")
	require.Contains(t, text, "not one this walletgate process issued")
	require.Contains(t, text, "confirmations live only in the process and the connection that previewed them")
	require.NotContains(t, text, tok[:len("wgc_")+4], "a refusal repeats none of a token that may be another session's")
	require.Contains(t, text, "MCP Inspector CLI")
	require.Contains(t, text, "call wallet_send again without confirm")
	require.Equal(t, before, e.state())
}

// Every line of text that names a token outside the known-token table marks
// it UNVERIFIED, in the preview and in the confirm's outcome alike.
func TestUnverifiedTokenMarkedOnEveryLine(t *testing.T) {
	e := newEnv(t, func(d *tools.Deps) { d.Config.AllowUncappedTokens = true })
	tok, err := e.dev.Deploy(e.ctx, "TestToken", "Tether USD", "USDT", uint8(6), big.NewInt(50_000_000))
	require.NoError(t, err)
	args := map[string]any{"to": addr("0x00000000000000000000000000000000000000e1").Hex(), "amount": "5", "asset": tok.Hex()}
	requireMarked := func(text string) {
		t.Helper()
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "USDT") && !strings.Contains(line, "UNVERIFIED") {
				t.Errorf("a line names the unverified token without marking it: %q\n%s", line, text)
			}
		}
	}
	p := e.preview("wallet_send", args)
	preview := resultText(e.call("wallet_send", mustJSON(args)))
	require.Contains(t, preview, "Action:    send 5 USDT (UNVERIFIED)")
	requireMarked(preview)
	var out confirmOut
	requireMarked(e.ok("wallet_send", mustJSON(with(args, p.ConfirmToken)), &out))
	require.Equal(t, "confirmed", out.Status)
	var v struct{ Status string }
	requireMarked(e.ok("wallet_verify_tx", mustJSON(map[string]any{"tx": out.TxHash, "asset": tok.Hex(), "expected_amount": "5"}), &v))
	require.Equal(t, big.NewInt(5_000_000), e.balanceOf(tok, addr("0x00000000000000000000000000000000000000e1")))
}
