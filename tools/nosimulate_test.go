package tools_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/internal/nodeproxy"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools"
)

// A node without eth_simulateV1 (a provider that lacks it): wallet_call and
// wallet_approve are refused in words before anything is signed, with no
// simulation asked of the node after the start; wallet_send works, and
// wallet_policy says which writes the node cannot serve.
func TestANodeWithoutSimulateV1RefusesCallsAndSends(t *testing.T) {
	d, err := devnet.Start(context.Background(), devnet.Options{HTTPAddr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	p := nodeproxy.New(d.HTTPURL())
	t.Cleanup(p.Close)
	p.Lack("eth_simulateV1")
	c, err := chain.Dial(context.Background(), []string{p.URL()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	e := serverOn(t, d, func(deps *tools.Deps) {
		deps.Chain = c
		deps.Config.AllowCalls = policy.CallsAllowed{Rules: []policy.CallRule{{Contract: d.Contracts.USDT}}}
	})
	var pol struct {
		Node struct {
			SimulateV1 string `json:"simulate_v1"`
			Refused    string `json:"refused_without_simulation"`
		} `json:"node"`
	}
	text := e.ok("wallet_policy", `{}`, &pol)
	require.Equal(t, "not offered", pol.Node.SimulateV1)
	require.Contains(t, pol.Node.Refused, "wallet_call")
	require.Contains(t, text, "does not offer eth_simulateV1")

	asked := p.Arrived("eth_simulateV1")
	sink := common.HexToAddress("0x00000000000000000000000000000000005e77e6")
	data := common.Bytes2Hex(chain.TransferData(sink, big.NewInt(1_000_000)))
	refusal := e.refused("wallet_call", `{"calls":[{"to":"`+d.Contracts.USDT.Hex()+`","data":"0x`+data+`"}]}`, "NODE_CANNOT_SIMULATE")
	require.Contains(t, refusal, "does not offer eth_simulateV1")
	require.Contains(t, refusal, "Nothing was signed or sent")
	require.Contains(t, refusal, "wallet_send")
	e.refused("wallet_approve", `{"token":"USDT","spender":"`+sink.Hex()+`","amount":"1"}`, "NODE_CANNOT_SIMULATE")
	require.Equal(t, asked, p.Arrived("eth_simulateV1"), "learned once: no simulation asked per call")

	args := map[string]any{"to": sink.Hex(), "amount": "0.001"}
	pv := e.preview("wallet_send", args)
	var out confirmOut
	e.ok("wallet_send", mustJSON(with(args, pv.ConfirmToken)), &out)
	require.Equal(t, "confirmed", out.Status)
	require.Equal(t, 1, p.Broadcasts())
	bal, err := d.Client().BalanceAt(context.Background(), sink, nil)
	require.NoError(t, err)
	require.Equal(t, big.NewInt(1e15), bal, "the send moved the ETH on chain")
}
