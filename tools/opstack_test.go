package tools_test

import (
	"context"
	"math/big"
	"os"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/internal/nodeproxy"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools"
)

// On the --op-stack dev chain (the real GasPriceOracle and L1Block, and
// Uniswap), the previews' max fee — the total and each leg's — includes the
// oracle's L1 fee bound, and a confirm's fee is the receipts' gas and l1Fee:
// a wallet_send, and a real wallet_swap's approve and swap. geth charges no
// L1 fee, so the receipts' l1Fee comes from the proxy (as an OP-stack node
// puts it there), different per leg.
func TestOPStackPreviewsShowTheL1FeeAndConfirmsPayIt(t *testing.T) {
	l1 := devnet.L1Values{BaseFee: big.NewInt(1e13), BlobBaseFee: big.NewInt(1), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
	d, err := devnet.Start(context.Background(), devnet.Options{HTTPAddr: "127.0.0.1:0", OPStack: true, L1: l1, OPArtifactsDir: os.Getenv("WALLETGATE_OP_ARTIFACTS")})
	if err != nil && os.Getenv("WALLETGATE_REQUIRE_OPSTACK") != "1" {
		t.Skipf("no OP-stack artifacts (%v)", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	if d.Contracts.Uniswap == nil {
		if os.Getenv("WALLETGATE_REQUIRE_UNISWAP") == "1" {
			t.Fatal("WALLETGATE_REQUIRE_UNISWAP=1 but the dev chain has no Uniswap: " + devnet.EnableSwapsHint)
		}
		t.Skip("the Uniswap artifacts are not installed: " + devnet.EnableSwapsHint)
	}
	router := d.Contracts.Uniswap.SwapRouter02
	p := nodeproxy.New(d.HTTPURL())
	t.Cleanup(p.Close)
	const l1Approve, l1Swap, l1Send = 11e11, 23e11, 7e11
	p.L1Fee(func(h common.Hash) *big.Int {
		tx, _, err := d.Client().TransactionByHash(context.Background(), h)
		switch {
		case err != nil || tx.To() == nil:
			return nil
		case *tx.To() == router:
			return big.NewInt(l1Swap)
		case *tx.To() == d.Contracts.USDT:
			return big.NewInt(l1Approve)
		}
		return big.NewInt(l1Send)
	})
	c, err := chain.Dial(context.Background(), []string{p.URL()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.True(t, c.OPStack())
	e := serverOn(t, d, func(deps *tools.Deps) { deps.Chain = c })
	bound := func(data []byte) *big.Int {
		t.Helper()
		v := chain.L1FeeBoundView(chain.Call{Data: data})
		_, err := c.StateAndViews(context.Background(), signer.DevAddress, v)
		require.NoError(t, err)
		b, err := v.Uint256()
		require.NoError(t, err)
		require.Positive(t, b.Sign())
		return b
	}
	wei := func(eth string) *big.Int {
		t.Helper()
		v, err := policy.ParseAmount(eth, 18)
		require.NoError(t, err)
		return v
	}
	gasPaid := func(tx string) *big.Int {
		t.Helper()
		rc, err := d.Client().TransactionReceipt(context.Background(), common.HexToHash(tx))
		require.NoError(t, err)
		return new(big.Int).Mul(new(big.Int).SetUint64(rc.GasUsed), rc.EffectiveGasPrice)
	}
	type legJSON struct {
		Label    string `json:"label"`
		GasLimit uint64 `json:"gas_limit"`
		MaxFee   string `json:"max_fee"`
		Calldata string `json:"calldata"`
	}
	var pv struct {
		Status  string `json:"status"`
		Token   string `json:"confirm_token"`
		Preview struct {
			GasLimit     uint64    `json:"gas_limit"`
			MaxFeePerGas string    `json:"max_fee_per_gas_gwei"`
			MaxFee       string    `json:"max_fee"`
			Legs         []legJSON `json:"legs"`
		} `json:"preview"`
	}
	var out struct {
		Status string `json:"status"`
		TxHash string `json:"tx_hash"`
		Fee    string `json:"fee"`
		Legs   []struct {
			Label  string `json:"label"`
			Status string `json:"status"`
			TxHash string `json:"tx_hash"`
		} `json:"legs"`
	}

	// wallet_send: max fee = gas limit × max fee per gas + the L1 bound of
	// a transaction without calldata.
	sink := common.HexToAddress("0x00000000000000000000000000000000005e77e7")
	send := map[string]any{"to": sink.Hex(), "amount": "0.001"}
	e.ok("wallet_send", mustJSON(send), &pv)
	require.Equal(t, "confirmation_required", pv.Status)
	perGas, err := policy.ParseAmount(pv.Preview.MaxFeePerGas, 9)
	require.NoError(t, err)
	gasMax := new(big.Int).Mul(new(big.Int).SetUint64(pv.Preview.GasLimit), perGas)
	require.Equal(t, policy.FormatAmount(new(big.Int).Add(gasMax, bound(nil)), 18), pv.Preview.MaxFee, "the send's max fee counts its L1 bound")
	e.ok("wallet_send", mustJSON(with(send, pv.Token)), &out)
	require.Equal(t, "confirmed", out.Status)
	require.Equal(t, policy.FormatAmount(new(big.Int).Add(gasPaid(out.TxHash), big.NewInt(l1Send)), 18), out.Fee, "the fee: gas and the receipt's l1Fee")

	// wallet_swap: each leg's max fee is its gas part plus its own L1
	// bound (per calldata size), and they add up to the preview's.
	swap := map[string]any{"token_in": "USDT", "token_out": "DAI", "amount_in": "10"}
	pv.Preview.Legs = nil
	e.ok("wallet_swap", mustJSON(swap), &pv)
	require.Equal(t, "confirmation_required", pv.Status)
	require.Len(t, pv.Preview.Legs, 2)
	total := new(big.Int)
	var legPerGas *big.Int
	for _, l := range pv.Preview.Legs {
		fee := wei(l.MaxFee)
		total.Add(total, fee)
		gasPart := new(big.Int).Sub(fee, bound(hexutil.MustDecode(l.Calldata)))
		perGas, rest := new(big.Int).QuoRem(gasPart, new(big.Int).SetUint64(l.GasLimit), new(big.Int))
		require.Zero(t, rest.Sign(), "leg %q: max fee minus its L1 bound is gas limit × max fee per gas", l.Label)
		if legPerGas == nil {
			legPerGas = perGas
		}
		require.Equal(t, legPerGas, perGas, "leg %q: the same max fee per gas as the other leg", l.Label)
	}
	require.Equal(t, pv.Preview.MaxFee, policy.FormatAmount(total, 18), "the legs' max fees add up to the preview's")
	e.ok("wallet_swap", mustJSON(with(swap, pv.Token)), &out)
	require.Equal(t, "confirmed", out.Status)
	require.Len(t, out.Legs, 2)
	want := new(big.Int).Add(gasPaid(out.Legs[0].TxHash), gasPaid(out.Legs[1].TxHash))
	want.Add(want, big.NewInt(l1Approve+l1Swap))
	require.Equal(t, policy.FormatAmount(want, 18), out.Fee, "the fee: both receipts' gas and l1Fee")
}
