package main_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os/exec"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/testdata"
)

var (
	x402Payee    = common.HexToAddress("0x00000000000000000000000000000000000e4021")
	x402Claimant = common.HexToAddress("0x00000000000000000000000000000000000bad02")
)

// x402Requirement is an x402 v2 requirement for the dev chain's USDC, one
// exact option per (payTo, base amount) pair, for a resource the server says
// is at url.
func x402Requirement(info devnetInfo, url string, options ...any) map[string]any {
	var accepts []any
	for i := 0; i < len(options); i += 2 {
		accepts = append(accepts, map[string]any{"scheme": "exact", "network": "eip155:1337", "asset": info.Contracts["USDC"],
			"amount": options[i+1].(string), "payTo": options[i].(common.Address).Hex(), "maxTimeoutSeconds": 120,
			"extra": map[string]any{"name": "USD Coin", "version": "2"}})
	}
	return map[string]any{"x402Version": 2, "resource": map[string]any{"url": url, "description": "data", "mimeType": "application/json"}, "accepts": accepts}
}

func x402Env(info devnetInfo, allowPayTo string) []string {
	return cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile,
		"WALLETGATE_CAP_PER_TX=ETH=1,USDC=5", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDC=20", "WALLETGATE_CAP_PER_DAY=ETH=1,USDC=20",
		"WALLETGATE_ALLOW_PAY_TO="+allowPayTo)
}

// A host alone in WALLETGATE_ALLOW_PAY_TO would trust what the paying server
// says about itself: walletgate refuses to start, naming the form to use.
func TestAllowPayToBareHostRefusesToStart(t *testing.T) {
	info := startDevnet(t)
	cmd := exec.Command(binary)
	cmd.Env = withStateDir(t, x402Env(info, "api.example.com"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 2, exit.ExitCode(), stderr.String())
	require.Empty(t, stdout.String())
	require.Contains(t, stderr.String(), `WALLETGATE_ALLOW_PAY_TO="api.example.com"`)
	require.Contains(t, stderr.String(), "api.example.com=0x<payee address>")
}

// The payee limit binds the payTo address, not the URL the server claims;
// of several payable options the cheapest within the caps is paid and the
// others are listed; the authorization settles on chain, submitted by
// another account (a facilitator), and pays exactly the payee.
func TestX402PayeeIsBoundByAddressAndTheCheapestOptionIsPaid(t *testing.T) {
	info := startDevnet(t)
	require.NotEmpty(t, info.Contracts["USDC"], "the dev chain deploys a USDC-like token")
	usdc := common.HexToAddress(info.Contracts["USDC"])
	url := "http://127.0.0.1:4021/data"
	c := startServer(t, x402Env(info, "127.0.0.1:4021="+x402Payee.Hex()))
	c.initialize()
	node, err := ethclient.Dial(info.RPC)
	require.NoError(t, err)
	t.Cleanup(node.Close)

	// A server claiming the pinned host names its own payTo: refused, nothing signed.
	claim := x402Requirement(info, url, x402Claimant, "1000000")
	res := c.callTool("wallet_pay_x402", map[string]any{"payment_required": claim})
	require.True(t, res["isError"].(bool), text(res))
	require.True(t, strings.HasPrefix(text(res), "X402_PAYEE_NOT_ALLOWED: "), text(res))
	require.Contains(t, text(res), x402Claimant.Hex())
	require.Contains(t, text(res), x402Payee.Hex(), "the refusal names the pinned address")
	// The same payee at another URL is not allowed either: the limit is the address.
	res = c.callTool("wallet_pay_x402", map[string]any{"payment_required": x402Requirement(info, "https://elsewhere.example/x", x402Claimant, "1000000")})
	require.True(t, strings.HasPrefix(text(res), "X402_PAYEE_NOT_ALLOWED: "), text(res))

	pol := c.callTool("wallet_policy", map[string]any{})["structuredContent"].(map[string]any)
	require.Equal(t, []any{"127.0.0.1:4021=" + x402Payee.Hex()}, pol["signing"].(map[string]any)["pay_to"])
	require.Empty(t, pol["pending"], "nothing was offered for confirmation")
	require.Equal(t, "0", usedOf(t, c, usdc.Hex(), "per session"))

	// 3 USDC, 1 USDC and 9 USDC (over the 5 per payment) to the pinned payee,
	// and 0.5 USDC to the claimant: 1 USDC is paid; the others are listed.
	req := x402Requirement(info, url, x402Payee, "3000000", x402Payee, "1000000", x402Payee, "9000000", x402Claimant, "500000")
	args := map[string]any{"payment_required": req}
	res = c.callTool("wallet_pay_x402", args)
	require.Nil(t, res["isError"], text(res))
	preview := res["structuredContent"].(map[string]any)["preview"].(map[string]any)
	require.Equal(t, x402Payee.Hex(), preview["pay_to"])
	require.Equal(t, "1", preview["amount"])
	require.EqualValues(t, 1, preview["option"])
	require.Equal(t, url, preview["resource"])
	others := preview["other_options"].([]any)
	require.Len(t, others, 3)
	why := map[float64]string{}
	for _, o := range others {
		m := o.(map[string]any)
		why[m["index"].(float64)] = m["not_taken"].(string)
	}
	require.Equal(t, map[float64]string{0: "dearer", 2: "over_caps", 3: "payee_not_allowed"}, why)
	shown := text(res)
	require.Less(t, strings.Index(shown, x402Payee.Hex()), strings.Index(shown, url), "the payee address comes before the URL:\n%s", shown)
	require.Contains(t, shown, url+" (as the paying server states it")
	require.Contains(t, shown, "3 USDC")
	require.Contains(t, shown, "9 USDC")

	args["confirm"] = res["structuredContent"].(map[string]any)["confirm_token"]
	res = c.callTool("wallet_pay_x402", args)
	require.Nil(t, res["isError"], text(res))
	out := res["structuredContent"].(map[string]any)
	require.Equal(t, "signed", out["status"])
	raw, err := base64.StdEncoding.DecodeString(out["payment_signature"].(string))
	require.NoError(t, err)
	var pl struct {
		Accepted map[string]any `json:"accepted"`
		Payload  struct {
			Signature     string            `json:"signature"`
			Authorization map[string]string `json:"authorization"`
		} `json:"payload"`
	}
	require.NoError(t, json.Unmarshal(raw, &pl))
	require.Equal(t, "1000000", pl.Accepted["amount"])

	// The facilitator settles it on chain.
	before := tokenOf(t, node, usdc, x402Payee)
	fac := &devSender{t: t, node: node, key: signer.DevFacilitator(), from: signer.DevFacilitatorAddress}
	rcpt := fac.send(&usdc, nil, transferWithAuthorization(t, pl.Payload.Authorization, pl.Payload.Signature))
	tx, _, err := node.TransactionByHash(t.Context(), rcpt.TxHash)
	require.NoError(t, err)
	sender, err := signerOf(tx)
	require.NoError(t, err)
	require.Equal(t, signer.DevFacilitatorAddress, sender, "the facilitator submitted it, not the wallet")
	require.Equal(t, big.NewInt(1_000_000), new(big.Int).Sub(tokenOf(t, node, usdc, x402Payee), before), "the payee got exactly 1 USDC")
	require.Zero(t, tokenOf(t, node, usdc, x402Claimant).Sign())
}

// transferWithAuthorization is the call a facilitator makes for an exact
// EVM payload.
func transferWithAuthorization(t *testing.T, a map[string]string, signature string) []byte {
	t.Helper()
	j, _, err := testdata.Contract("PermitToken")
	require.NoError(t, err)
	parsed := mustABI(t, j)
	sig := hexutil.MustDecode(signature)
	var r, s, nonce [32]byte
	copy(r[:], sig[:32])
	copy(s[:], sig[32:64])
	copy(nonce[:], hexutil.MustDecode(a["nonce"]))
	n := func(v string) *big.Int { b, ok := new(big.Int).SetString(v, 10); require.True(t, ok, v); return b }
	data, err := parsed.Pack("transferWithAuthorization", common.HexToAddress(a["from"]), common.HexToAddress(a["to"]), n(a["value"]),
		n(a["validAfter"]), n(a["validBefore"]), nonce, sig[64], r, s)
	require.NoError(t, err)
	return data
}

func mustABI(t *testing.T, j string) abi.ABI {
	t.Helper()
	parsed, err := abi.JSON(strings.NewReader(j))
	require.NoError(t, err)
	return parsed
}

// signerOf is who signed tx.
func signerOf(tx *types.Transaction) (common.Address, error) {
	return types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
}
