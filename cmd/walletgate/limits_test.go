package main_test

// The operator's limits bind the effects of every write kind, tried from
// outside: the real binary on the dev chain.

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// Finding 1 of the operator-limits issue: WALLETGATE_ALLOW_TO binds what a
// wallet_call gives, not only wallet_send's argument. ETH sent by a call and
// a token transferred by one, to an address the list does not name, are
// refused at preview with nothing moved; the same to the allowed address
// confirms.
func TestAllowToBindsWhatACallGives(t *testing.T) {
	info := startDevnet(t)
	allowed := common.HexToAddress("0x00000000000000000000000000000000000a110e")
	other := common.HexToAddress("0x00000000000000000000000000000000000b0b00")
	dai := common.HexToAddress(info.Contracts["DAI"])
	dev := newDevSender(t, info)
	for _, calls := range []string{"any", dai.Hex() + ":0xa9059cbb"} {
		t.Run("ALLOW_CALLS="+calls, func(t *testing.T) {
			c := startServer(t, append(capsEnv(info, t.TempDir()), "WALLETGATE_ALLOW_TO="+allowed.Hex(), "WALLETGATE_ALLOW_CALLS="+calls,
				"WALLETGATE_CAP_PER_TX=ETH=1,USDT=100,DAI=100", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=100,DAI=100", "WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100,DAI=100"))
			c.initialize()
			erc20, err := abi.JSON(strings.NewReader(`[{"name":"transfer","type":"function","inputs":[{"name":"to","type":"address"},{"name":"value","type":"uint256"}],"outputs":[{"type":"bool"}]}]`))
			require.NoError(t, err)
			two := new(big.Int).Mul(big.NewInt(2), big.NewInt(1e18))
			daiTo := func(to common.Address) []any {
				return []any{map[string]any{"to": dai.Hex(), "data": pack(t, erc20, "transfer", to, two)}}
			}
			before := tokenOf(t, dev.node, dai, other)
			res := c.callTool("wallet_call", map[string]any{"calls": daiTo(other)})
			require.Equal(t, "RECIPIENT_NOT_ALLOWED", refusalCode(res), text(res))
			require.Contains(t, text(res), "gives 2 DAI to "+other.Hex())
			require.Equal(t, before, tokenOf(t, dev.node, dai, other), "nothing moved")
			if calls == "any" {
				ethBefore, err := dev.node.BalanceAt(t.Context(), other, nil)
				require.NoError(t, err)
				res = c.callTool("wallet_call", map[string]any{"calls": []any{map[string]any{"to": other.Hex(), "value": "0.002"}}})
				require.Equal(t, "RECIPIENT_NOT_ALLOWED", refusalCode(res), text(res))
				ethAfter, err := dev.node.BalanceAt(t.Context(), other, nil)
				require.NoError(t, err)
				require.Equal(t, ethBefore, ethAfter, "no ETH moved")
			}
			require.Equal(t, "0", usedOf(t, c, dai.Hex(), "per day"), "no cap consumed")
			// The allowed address: the same call confirms, and the DAI arrive.
			got := tokenOf(t, dev.node, dai, allowed)
			res = previewAndConfirm(t, c, "wallet_call", map[string]any{"calls": daiTo(allowed)})
			require.Equal(t, "confirmed", statusOf(res), text(res))
			require.Equal(t, new(big.Int).Add(got, two), tokenOf(t, dev.node, dai, allowed))
		})
	}
}

// Finding 8 of the operator-limits issue, the parts that are walletgate's
// words: a confirmed approval reads as an allowance set, not a transfer;
// wrapping ETH into WETH through wallet_call shows both sides (WETH9's
// deposit logs no Transfer), and confirms with the WETH measured in.
func TestAnswersAPersonReadsRight(t *testing.T) {
	info := startDevnet(t)
	weth := common.HexToAddress(info.Contracts["WETH"])
	router := common.HexToAddress(info.Contracts["SwapRouter02"])
	if weth == (common.Address{}) || router == (common.Address{}) {
		t.Fatal("the dev chain has no Uniswap: install testdata's npm packages")
	}
	c := startServer(t, append(capsEnv(info, t.TempDir()), "WALLETGATE_ALLOW_CALLS=any",
		"WALLETGATE_CAP_PER_TX=ETH=1,USDT=100,DAI=100", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=100,DAI=100", "WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100,DAI=100"))
	c.initialize()

	res := previewAndConfirm(t, c, "wallet_approve", map[string]any{"token": "DAI", "spender": router.Hex(), "amount": "30"})
	require.Equal(t, "confirmed", statusOf(res), text(res))
	require.Contains(t, text(res), "Verified on chain: an allowance: "+router.Hex()+" may now spend 30 DAI")
	require.NotContains(t, text(res), "to "+router.Hex(), "never read as a transfer to the router")

	wethABI, err := abi.JSON(strings.NewReader(`[{"name":"deposit","type":"function","inputs":[],"outputs":[],"stateMutability":"payable"}]`))
	require.NoError(t, err)
	wrap := map[string]any{"calls": []any{map[string]any{"to": weth.Hex(), "data": pack(t, wethABI, "deposit"), "value": "0.1"}}}
	preview := c.callTool("wallet_call", wrap)
	require.Contains(t, text(preview), "−0.1 ETH")
	require.Contains(t, text(preview), "+0.1 WETH", "the WETH that comes back is shown")
	dev := newDevSender(t, info)
	before := tokenOf(t, dev.node, weth, dev.from)
	res = previewAndConfirm(t, c, "wallet_call", wrap)
	require.Equal(t, "confirmed", statusOf(res), text(res))
	require.Equal(t, new(big.Int).Add(before, big.NewInt(1e17)), tokenOf(t, dev.node, weth, dev.from))
	var got map[string]any
	for _, ch := range res["structuredContent"].(map[string]any)["changes"].([]any) {
		if m := ch.(map[string]any); strings.EqualFold(m["asset"].(string), weth.Hex()) {
			got = m
		}
	}
	require.NotNil(t, got, text(res))
	require.Equal(t, "0.1", got["in"])
	require.Equal(t, "0.1", got["previewed_in"])
}

// Findings 3 and 4 of the operator-limits issue, from outside: in human
// mode with WALLETGATE_HUMAN_ABOVE=ETH=0.01, sends of 0.004 ETH each go by
// token only while the day's token-confirmed total fits (two of them; fees
// count), and the third preview goes to the person; unknown typed data goes
// to the person however small.
func TestHumanThresholdHoldsOverTheDay(t *testing.T) {
	info := startDevnet(t)
	c := startServer(t, append(capsEnv(info, t.TempDir()), "WALLETGATE_CONFIRM=human", "WALLETGATE_HUMAN_ABOVE=ETH=0.01", "WALLETGATE_ALLOW_TYPED_DATA=any"))
	c.initialize()
	dev := newDevSender(t, info)
	to := common.HexToAddress("0x00000000000000000000000000000000000da112")
	send := map[string]any{"to": to.Hex(), "amount": "0.004"}
	for i := 0; i < 2; i++ {
		res := previewAndConfirm(t, c, "wallet_send", send)
		require.Equal(t, "confirmed", statusOf(res), "send %d: %s", i+1, text(res))
	}
	res := c.callTool("wallet_send", send)
	sc := res["structuredContent"].(map[string]any)
	require.Nil(t, sc["confirm_token"], "no token for the third: %s", text(res))
	require.NotNil(t, sc["approval"], "the person is asked")
	require.Contains(t, text(res), "in the last 24 hours; together that is above the 0.01 ETH a day")
	bal, err := dev.node.BalanceAt(t.Context(), to, nil)
	require.NoError(t, err)
	require.Equal(t, big.NewInt(8e15), bal, "the model alone moved 0.008 ETH")

	grant := map[string]any{"typed_data": map[string]any{
		"types":       map[string]any{"EIP712Domain": []map[string]string{{"name": "name", "type": "string"}, {"name": "chainId", "type": "uint256"}}, "Grant": []map[string]string{{"name": "operator", "type": "address"}, {"name": "approved", "type": "bool"}}},
		"primaryType": "Grant", "domain": map[string]any{"name": "Some Exchange", "chainId": "1337"}, "message": map[string]any{"operator": "0x00000000000000000000000000000000000000aa", "approved": true},
	}}
	res = c.callTool("wallet_sign_typed_data", grant)
	sc = res["structuredContent"].(map[string]any)
	require.Nil(t, sc["confirm_token"], text(res))
	require.Contains(t, text(res), "A PERSON MUST APPROVE this write: walletgate cannot tell what typed data of an unknown kind allows")
}

// A revoke gives nothing: an operator who narrows WALLETGATE_ALLOW_TO can
// still take back an allowance from a spender the list no longer names,
// while raising that spender's allowance stays refused with nothing moved.
func TestRevokeNeedsNoAllowList(t *testing.T) {
	info := startDevnet(t)
	dai := common.HexToAddress(info.Contracts["DAI"])
	old := common.HexToAddress("0x00000000000000000000000000000000000051de")
	allowed := common.HexToAddress("0x00000000000000000000000000000000000a110e")
	dev := newDevSender(t, info)
	view := &chainView{t: t, node: dev.node}
	limits := []string{"WALLETGATE_CAP_PER_TX=ETH=1,DAI=100", "WALLETGATE_CAP_PER_SESSION=ETH=1,DAI=100", "WALLETGATE_CAP_PER_DAY=ETH=1,DAI=100"}

	c := startServer(t, append(capsEnv(info, t.TempDir()), limits...))
	c.initialize()
	res := previewAndConfirm(t, c, "wallet_approve", map[string]any{"token": "DAI", "spender": old.Hex(), "amount": "5"})
	require.Equal(t, "confirmed", statusOf(res), text(res))
	require.Equal(t, big.NewInt(0).Mul(big.NewInt(5), big.NewInt(1e18)), allowanceOf(t, view, dai, dev.from, old))

	c = startServer(t, append(capsEnv(info, t.TempDir()), append(limits, "WALLETGATE_ALLOW_TO="+allowed.Hex())...))
	c.initialize()
	res = c.callTool("wallet_approve", map[string]any{"token": "DAI", "spender": old.Hex(), "amount": "6"})
	require.Equal(t, "RECIPIENT_NOT_ALLOWED", refusalCode(res), text(res))
	res = previewAndConfirm(t, c, "wallet_approve", map[string]any{"token": "DAI", "spender": old.Hex(), "amount": "0"})
	require.Equal(t, "confirmed", statusOf(res), text(res))
	require.Zero(t, allowanceOf(t, view, dai, dev.from, old).Sign(), "the allowance is gone")
}
