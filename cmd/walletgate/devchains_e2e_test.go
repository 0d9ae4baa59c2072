package main_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/signer"
)

// startDevnetIn runs `walletgate devnet --http 127.0.0.1:0 args…` with state
// as its state directory and returns its line.
func startDevnetIn(t *testing.T, state string, args ...string) devnetInfo {
	t.Helper()
	info, _ := runDevnet(t, state, args...)
	return info
}

// Two dev chains side by side (walletgate-devnet and walletgate-devnet
// --chain-id 31337): other ports, one shared dev key file, each its own
// chain; a walletgate on each sends USDT there (its id read and checked at
// start), and a walletgate told the other id refuses to start.
func TestTwoDevChainsSideBySide(t *testing.T) {
	state := t.TempDir()
	a := startDevnetIn(t, state)
	b := startDevnetIn(t, state, "--chain-id", "31337")
	require.EqualValues(t, 1337, a.ChainID)
	require.EqualValues(t, 31337, b.ChainID)
	require.NotEqual(t, a.RPC, b.RPC)
	require.Equal(t, filepath.Join(state, "devnet", "dev.key"), a.KeyFile)
	require.Equal(t, a.KeyFile, b.KeyFile, "the same public dev key, one file")

	to := common.HexToAddress("0x00000000000000000000000000000000000e2e27")
	for _, info := range []devnetInfo{a, b} {
		id := big.NewInt(int64(info.ChainID)).String()
		usdt := info.Contracts["USDT"]
		c := startServer(t, withStateDir(t, cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID="+id, "WALLETGATE_KEY_FILE="+info.KeyFile,
			"WALLETGATE_CAP_PER_TX=ETH=0.1,"+usdt+"=50", "WALLETGATE_CAP_PER_SESSION=ETH=0.5,"+usdt+"=80", "WALLETGATE_CAP_PER_DAY=ETH=0.5,"+usdt+"=80")))
		c.initialize()
		addr := c.callTool("wallet_address", map[string]any{})["structuredContent"].(map[string]any)
		require.EqualValues(t, info.ChainID, addr["chain_id"])

		node, err := ethclient.Dial(info.RPC)
		require.NoError(t, err)
		got, err := node.ChainID(context.Background())
		require.NoError(t, err)
		require.EqualValues(t, info.ChainID, got.Uint64())
		token := common.HexToAddress(usdt)
		balance := func() *big.Int {
			out, err := node.CallContract(context.Background(), ethereum.CallMsg{To: &token, Data: append(common.FromHex("0x70a08231"), common.LeftPadBytes(to.Bytes(), 32)...)}, nil)
			require.NoError(t, err)
			return new(big.Int).SetBytes(out)
		}
		args := map[string]any{"to": to.Hex(), "amount": "12.5", "asset": usdt}
		preview := c.callTool("wallet_send", args)
		sc, ok := preview["structuredContent"].(map[string]any)
		require.True(t, ok, text(preview))
		args["confirm"] = sc["confirm_token"]
		done := c.callTool("wallet_send", args)
		require.Nil(t, done["isError"], text(done))
		require.Equal(t, "confirmed", done["structuredContent"].(map[string]any)["status"])
		require.Equal(t, big.NewInt(12_500_000), balance(), "chain %d: moved once, on this chain only", info.ChainID)
		node.Close()
	}

	cmd := exec.Command(binary)
	cmd.Env = withStateDir(t, cleanEnv("WALLETGATE_RPC="+b.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+b.KeyFile))
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "chain id mismatch")
}

// chainCaps is what wallet_policy's chains say of one chain's caps: used
// by asset (lower-case) and window.
func chainCaps(t *testing.T, c *stdioClient, chainID uint64) map[string]string {
	t.Helper()
	pol := c.callTool("wallet_policy", map[string]any{})["structuredContent"].(map[string]any)
	for _, ch := range pol["chains"].([]any) {
		m := ch.(map[string]any)
		if uint64(m["chain_id"].(float64)) != chainID {
			continue
		}
		used := map[string]string{}
		for _, cp := range m["caps"].([]any) {
			u := cp.(map[string]any)
			used[strings.ToLower(u["asset"].(string))+" "+u["window"].(string)] = u["used"].(string) + "/" + u["limit"].(string)
		}
		return used
	}
	t.Fatalf("wallet_policy lists no chain %d", chainID)
	return nil
}

// One walletgate on two dev chains (issue 27): WALLETGATE_RPC and
// WALLETGATE_CHAIN_ID list both, the cap lists name the second chain's
// items by prefix. A USDT send on each, a swap on the one with Uniswap,
// caps counted per chain, wallet_policy and wallet_address showing both, a
// confirm of one chain's preview on the other refused (and its token
// spent), each chain's journal in its own namespace, and a restart that
// keeps both chains' day windows.
func TestOneWalletgateOnTwoDevChains(t *testing.T) {
	devState := t.TempDir()
	a := startDevnetIn(t, devState)
	b := startDevnetIn(t, devState, "--chain-id", "31337")
	weth := common.HexToAddress(a.Contracts["WETH"])
	if weth == (common.Address{}) {
		t.Fatal(swapTestsNeedArtifacts)
	}
	usdtA, usdtB := common.HexToAddress(a.Contracts["USDT"]), common.HexToAddress(b.Contracts["USDT"])
	nodeA, err := ethclient.Dial(a.RPC)
	require.NoError(t, err)
	defer nodeA.Close()
	nodeB, err := ethclient.Dial(b.RPC)
	require.NoError(t, err)
	defer nodeB.Close()
	dev := common.HexToAddress(a.DevAccount)

	state := t.TempDir()
	env := cleanEnv("WALLETGATE_RPC="+a.RPC+","+b.RPC, "WALLETGATE_CHAIN_ID=dev,31337", "WALLETGATE_KEY_FILE="+a.KeyFile, "WALLETGATE_STATE_DIR="+state,
		"WALLETGATE_CAP_PER_TX=ETH=0.1,USDT=50,31337:ETH=0.1,31337:"+usdtB.Hex()+"=20",
		"WALLETGATE_CAP_PER_SESSION=ETH=0.5,USDT=80,31337:ETH=0.5,31337:"+usdtB.Hex()+"=30",
		"WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100,31337:ETH=1,31337:"+usdtB.Hex()+"=40")
	c := startServer(t, env)
	init := c.initialize()
	require.Contains(t, init["instructions"], "one wallet on several EVM chains, dev (1337, the default), 31337, inside limits")
	list := c.request("tools/list", map[string]any{})["result"].(map[string]any)["tools"].([]any)
	require.Len(t, list, 11, "every tool either chain offers (wallet_call is off)")
	for _, tl := range list {
		network := tl.(map[string]any)["inputSchema"].(map[string]any)["properties"].(map[string]any)["network"]
		require.NotNil(t, network, "%s takes a network", tl.(map[string]any)["name"])
		require.Equal(t, "the chain: dev (1337, the default), 31337 (a chain id or one of those names); default: the default chain", network.(map[string]any)["description"])
	}

	addr := c.callTool("wallet_address", map[string]any{})["structuredContent"].(map[string]any)
	require.EqualValues(t, 1337, addr["chain_id"], "the first chain is the default")
	chains := addr["chains"].([]any)
	require.Len(t, chains, 2)
	require.EqualValues(t, 1337, chains[0].(map[string]any)["chain_id"])
	require.Equal(t, true, chains[0].(map[string]any)["default"])
	require.EqualValues(t, 31337, chains[1].(map[string]any)["chain_id"])
	other := c.callTool("wallet_address", map[string]any{"network": "31337"})["structuredContent"].(map[string]any)
	require.EqualValues(t, 31337, other["chain_id"])
	require.Equal(t, addr["address"], other["address"], "one wallet on both")

	// A USDT send on each chain: each moves on its own chain only.
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e31")
	res := previewAndConfirm(t, c, "wallet_send", map[string]any{"to": to.Hex(), "amount": "12.5", "asset": "USDT"})
	require.Equal(t, "confirmed", statusOf(res), text(res))
	res = previewAndConfirm(t, c, "wallet_send", map[string]any{"to": to.Hex(), "amount": "15", "asset": usdtB.Hex(), "network": "31337"})
	require.Equal(t, "confirmed", statusOf(res), text(res))
	require.Equal(t, big.NewInt(12_500_000), tokenOf(t, nodeA, usdtA, to))
	require.Equal(t, big.NewInt(15_000_000), tokenOf(t, nodeB, usdtB, to))

	// Caps per chain: 15 of 30 used on 31337 refuses 16 more there, while
	// the default chain's 12.5 of 80 lets 16 through.
	require.Equal(t, "12.5/80", chainCaps(t, c, 1337)[strings.ToLower(usdtA.Hex())+" per session"])
	require.Equal(t, "15/30", chainCaps(t, c, 31337)[strings.ToLower(usdtB.Hex())+" per session"])
	over := c.callTool("wallet_send", map[string]any{"to": to.Hex(), "amount": "16", "asset": usdtB.Hex(), "network": "31337"})
	require.Equal(t, "CAP_EXCEEDED", refusalCode(over), text(over))

	// A confirm of the default chain's preview with network 31337: refused,
	// its token spent, nothing moved on either chain.
	args := map[string]any{"to": to.Hex(), "amount": "1", "asset": usdtA.Hex()}
	preview := c.callTool("wallet_send", args)
	token := preview["structuredContent"].(map[string]any)["confirm_token"]
	require.NotEmpty(t, token, text(preview))
	cross := map[string]any{"to": to.Hex(), "amount": "1", "asset": usdtA.Hex(), "network": "31337", "confirm": token}
	refused := c.callTool("wallet_send", cross)
	require.Equal(t, "ARGS_MISMATCH", refusalCode(refused), text(refused))
	require.Contains(t, text(refused), "this confirm_token is for a preview on walletgate dev chain (chain 1337")
	delete(cross, "network")
	again := c.callTool("wallet_send", cross)
	require.Equal(t, "TOKEN_USED", refusalCode(again), "the token was spent by the refusal: %s", text(again))
	require.Equal(t, big.NewInt(12_500_000), tokenOf(t, nodeA, usdtA, to))
	require.Equal(t, big.NewInt(15_000_000), tokenOf(t, nodeB, usdtB, to))

	// A swap on the chain with Uniswap; the other has none.
	wethBefore := tokenOf(t, nodeA, weth, dev)
	res = previewAndConfirm(t, c, "wallet_swap", map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "2"})
	require.Equal(t, "confirmed", statusOf(res), text(res))
	require.Equal(t, 1, tokenOf(t, nodeA, weth, dev).Cmp(wethBefore), "WETH arrived")
	noSwap := c.callTool("wallet_swap", map[string]any{"token_in": usdtB.Hex(), "token_out": weth.Hex(), "amount_in": "2", "network": "31337"})
	require.Equal(t, "NOT_ON_NETWORK", refusalCode(noSwap), text(noSwap))

	// A confirm with a network no chain answers to: refused, and spent.
	preview = c.callTool("wallet_send", args)
	token = preview["structuredContent"].(map[string]any)["confirm_token"]
	bad := c.callTool("wallet_send", map[string]any{"to": to.Hex(), "amount": "1", "asset": usdtA.Hex(), "network": "basee", "confirm": token})
	require.Equal(t, "BAD_NETWORK", refusalCode(bad), text(bad))
	require.Contains(t, text(bad), "Nothing was signed or sent. The confirmation token is spent")
	again = c.callTool("wallet_send", map[string]any{"to": to.Hex(), "amount": "1", "asset": usdtA.Hex(), "confirm": token})
	require.Equal(t, "TOKEN_USED", refusalCode(again), text(again))
	require.Equal(t, big.NewInt(12_500_000), tokenOf(t, nodeA, usdtA, to))

	// The network argument's refusals.
	for network, code := range map[string]string{"polygon": "NETWORK_NOT_SERVED", "nowhere": "BAD_NETWORK", "0": "BAD_NETWORK"} {
		r := c.callTool("wallet_balance", map[string]any{"network": network})
		require.Equal(t, code, refusalCode(r), text(r))
	}
	c.stop()

	// Each chain's journal is its own namespace.
	for _, id := range []string{"1337", "31337"} {
		_, err := os.Stat(filepath.Join(state, id+"-"+dev.Hex()))
		require.NoError(t, err, "chain %s's journal", id)
	}

	// `walletgate policy` reads both chains' journals.
	pol := exec.Command(binary, "policy")
	pol.Env = env
	out, err := pol.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "Chains served (a tool's network argument picks one; without it, the default):")
	require.Contains(t, string(out), "31337: Hardhat/Anvil local chain (chain id 31337).")
	require.Contains(t, string(out), "    USDT per day: 15 / 40, 25 left", "31337's day as journaled")

	// A restart keeps both chains' day windows.
	c = startServer(t, env)
	c.initialize()
	require.Equal(t, "14.5/100", chainCaps(t, c, 1337)[strings.ToLower(usdtA.Hex())+" per day"], "12.5 sent and 2 swapped")
	require.Equal(t, "15/40", chainCaps(t, c, 31337)[strings.ToLower(usdtB.Hex())+" per day"])
	require.Equal(t, "0/30", chainCaps(t, c, 31337)[strings.ToLower(usdtB.Hex())+" per session"], "a new session")
}

// A second chain adds no start-up round trip in sequence before
// initialize is answered: the chains' nodes are asked at once. Chain A's
// node holds its chain-id answer until chain B's node has been asked; a
// start that asked B only after A had answered would never answer
// initialize (and the test fails at its deadline, naming that). Each node
// then saw one round trip before the answer, as one chain alone does.
func TestASecondChainAddsNoStartUpRoundTrip(t *testing.T) {
	state := t.TempDir()
	a, _ := runDevnet(t, state)
	b, _ := runDevnet(t, state, "--chain-id", "31337")
	pa, pb := newRPCProxy(t, a.RPC), newRPCProxy(t, b.RPC)
	pa.hold("eth_chainId")
	c := startServer(t, cleanEnv("WALLETGATE_RPC="+pa.srv.URL+","+pb.srv.URL, "WALLETGATE_CHAIN_ID=1337,31337", "WALLETGATE_KEY_FILE="+a.KeyFile,
		"WALLETGATE_STATE_DIR="+t.TempDir()))
	deadline := time.Now().Add(30 * time.Second)
	for pb.arrivedCount("eth_chainId") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("chain B's node was not asked while chain A's answer was outstanding: the chains' start-up checks run one after the other; stderr:\n%s", c.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	pa.unhold()
	require.Equal(t, "walletgate", c.initialize()["serverInfo"].(map[string]any)["name"])
	require.Len(t, pa.tripsSince(0), 1, "chain A: one round trip before initialize is answered")
	require.Len(t, pb.tripsSince(0), 1, "chain B: one round trip before initialize is answered")
}

// A node in another chain's slot (the operator swapped WALLETGATE_RPC's
// entries): walletgate refuses to start and names the chain, the node and
// both ids; no chain is served from a node on another chain.
func TestSeveralChainsRefuseANodeInTheWrongSlot(t *testing.T) {
	state := t.TempDir()
	a, _ := runDevnet(t, state)
	b, _ := runDevnet(t, state, "--chain-id", "31337")
	cmd := exec.Command(binary)
	cmd.Env = withStateDir(t, cleanEnv("WALLETGATE_RPC="+b.RPC+","+a.RPC, "WALLETGATE_CHAIN_ID=1337,31337", "WALLETGATE_KEY_FILE="+a.KeyFile))
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "chain dev (1337): chain id mismatch: WALLETGATE_CHAIN_ID is 1337 (walletgate dev chain) but the node at "+strings.TrimSuffix(b.RPC, "/")+" reports 31337")
}

// An x402 payment without a network argument is for the chain its
// requirement names when that is a chain walletgate serves (USDC on Base
// paid from a walletgate whose default chain is another): here the default
// is 31337 and the requirement is for the dev chain's USDC on 1337. The
// authorization is signed for 1337, settles there, and counts against
// 1337's caps only.
func TestAnX402PaymentGoesToTheChainItsRequirementNames(t *testing.T) {
	state := t.TempDir()
	a, _ := runDevnet(t, state)
	b, _ := runDevnet(t, state, "--chain-id", "31337")
	usdc := common.HexToAddress(a.Contracts["USDC"])
	c := startServer(t, withStateDir(t, cleanEnv("WALLETGATE_RPC="+b.RPC+","+a.RPC, "WALLETGATE_CHAIN_ID=31337,1337", "WALLETGATE_KEY_FILE="+a.KeyFile,
		"WALLETGATE_CAP_PER_TX=ETH=1,1337:ETH=1,1337:USDC=5", "WALLETGATE_CAP_PER_SESSION=ETH=1,1337:ETH=1,1337:USDC=20", "WALLETGATE_CAP_PER_DAY=ETH=1,1337:ETH=1,1337:USDC=20")))
	c.initialize()
	node, err := ethclient.Dial(a.RPC)
	require.NoError(t, err)
	defer node.Close()

	args := map[string]any{"payment_required": x402Requirement(a, "http://127.0.0.1:4021/data", x402Payee, "1000000")}
	res := c.callTool("wallet_pay_x402", args)
	require.Nil(t, res["isError"], text(res))
	require.Contains(t, text(res), "walletgate dev chain", "the preview names the chain paid on")
	args["confirm"] = res["structuredContent"].(map[string]any)["confirm_token"]
	res = c.callTool("wallet_pay_x402", args)
	require.Equal(t, "signed", statusOf(res), text(res))
	require.Equal(t, "1/20", chainCaps(t, c, 1337)[strings.ToLower(usdc.Hex())+" per session"], "counted on 1337")

	raw, err := base64.StdEncoding.DecodeString(res["structuredContent"].(map[string]any)["payment_signature"].(string))
	require.NoError(t, err)
	var pl struct {
		Payload struct {
			Signature     string            `json:"signature"`
			Authorization map[string]string `json:"authorization"`
		} `json:"payload"`
	}
	require.NoError(t, json.Unmarshal(raw, &pl))
	fac := &devSender{t: t, node: node, key: signer.DevFacilitator(), from: signer.DevFacilitatorAddress}
	before := tokenOf(t, node, usdc, x402Payee)
	fac.send(&usdc, nil, transferWithAuthorization(t, pl.Payload.Authorization, pl.Payload.Signature))
	require.Equal(t, big.NewInt(1_000_000), new(big.Int).Sub(tokenOf(t, node, usdc, x402Payee), before), "settled on 1337: the payee got exactly 1 USDC")

	// A requirement for a chain not served goes to the default chain, which
	// says why nothing is payable there.
	other := x402Requirement(a, "http://127.0.0.1:4021/data", x402Payee, "1000000")
	other["accepts"].([]any)[0].(map[string]any)["network"] = "eip155:8453"
	res = c.callTool("wallet_pay_x402", map[string]any{"payment_required": other})
	require.True(t, res["isError"].(bool), text(res))
	require.Contains(t, text(res), "eip155:31337")
}

// approveForCode approves preview id on the page as the person does and
// returns the one-time code the page then shows.
func approveForCode(t *testing.T, pageURL, id string) string {
	t.Helper()
	u, err := url.Parse(pageURL)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, pageURL+"p/"+id+"/approve", strings.NewReader("csrf="+formToken(t, pageURL, id)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://"+u.Host)
	resp, err := http.DefaultClient.Do(req) // follows the redirect to the preview's page
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	m := regexp.MustCompile(`<p class="code" id="code">(\d{3}-\d{3})</p>`).FindStringSubmatch(string(body))
	require.NotNil(t, m, "the page shows the code after approving: %s", body)
	return m[1]
}

// Human mode on two chains: one approval page for both. A preview on the
// second chain is shown with its chain first; the person's code confirms it
// on that chain only: given with the other chain's network it is refused
// and nothing moves.
func TestOneApprovalPageForTwoChains(t *testing.T) {
	state := t.TempDir()
	a, _ := runDevnet(t, state)
	b, _ := runDevnet(t, state, "--chain-id", "31337")
	usdtB := common.HexToAddress(b.Contracts["USDT"])
	c := startServer(t, cleanEnv("WALLETGATE_RPC="+a.RPC+","+b.RPC, "WALLETGATE_CHAIN_ID=1337,31337", "WALLETGATE_KEY_FILE="+a.KeyFile, "WALLETGATE_STATE_DIR="+t.TempDir(),
		"WALLETGATE_CONFIRM=human", "WALLETGATE_CAP_PER_TX=ETH=1,31337:ETH=1,31337:"+usdtB.Hex()+"=50",
		"WALLETGATE_CAP_PER_SESSION=ETH=1,31337:ETH=1,31337:"+usdtB.Hex()+"=50", "WALLETGATE_CAP_PER_DAY=ETH=1,31337:ETH=1,31337:"+usdtB.Hex()+"=50"))
	c.initialize()
	pageURL := pageOf(t, c)
	nodeB, err := ethclient.Dial(b.RPC)
	require.NoError(t, err)
	defer nodeB.Close()
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e32")

	args := map[string]any{"to": to.Hex(), "amount": "3", "asset": usdtB.Hex(), "network": "31337"}
	id := previewID(t, c, args)
	resp, err := http.Get(pageURL + "p/" + id)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	badge := regexp.MustCompile(`id="network">([^<]*)<`).FindStringSubmatch(string(page))
	require.NotNil(t, badge, "the page names the chain")
	require.Contains(t, badge[1], "chain id 31337", "the preview's chain, first on its page")
	require.Less(t, strings.Index(string(page), `id="network"`), strings.Index(string(page), `id="title"`), "the chain comes before what the preview does")

	// The code given with the default chain's network: refused there.
	code := approveForCode(t, pageURL, id)
	wrong := withConfirm(args, code)
	delete(wrong, "network")
	res := c.callTool("wallet_send", wrong)
	require.Equal(t, "ARGS_MISMATCH", refusalCode(res), "the code names another preview than this chain's call: %s", text(res))
	require.Zero(t, tokenOf(t, nodeB, usdtB, to).Sign(), "nothing moved")

	// A new preview, approved, confirmed on its chain.
	id = previewID(t, c, args)
	code = approveForCode(t, pageURL, id)
	res = c.callTool("wallet_send", withConfirm(args, code))
	require.Equal(t, "confirmed", statusOf(res), text(res))
	require.Equal(t, big.NewInt(3_000_000), tokenOf(t, nodeB, usdtB, to), "moved on 31337, exactly as previewed")
}

// The service on two chains: each connection is one session on both, with
// its own session caps per chain; a send on the second chain through
// `walletgate connect` lands there.
func TestServiceServesEveryChainToEachSession(t *testing.T) {
	state := t.TempDir()
	a, _ := runDevnet(t, state)
	b, _ := runDevnet(t, state, "--chain-id", "31337")
	usdtB := common.HexToAddress(b.Contracts["USDT"])
	session, _ := startServiceRun(t, cleanEnv("WALLETGATE_RPC="+a.RPC+","+b.RPC, "WALLETGATE_CHAIN_ID=1337,31337", "WALLETGATE_KEY_FILE="+a.KeyFile, "WALLETGATE_STATE_DIR="+t.TempDir(),
		"WALLETGATE_CAP_PER_TX=ETH=1,USDT=10,31337:ETH=1,31337:"+usdtB.Hex()+"=10", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=10,31337:ETH=1,31337:"+usdtB.Hex()+"=10",
		"WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100,31337:ETH=1,31337:"+usdtB.Hex()+"=100"))
	nodeB, err := ethclient.Dial(b.RPC)
	require.NoError(t, err)
	defer nodeB.Close()
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e33")
	args := map[string]any{"to": to.Hex(), "amount": "8", "asset": usdtB.Hex(), "network": "31337"}

	s1, s2 := session(), session()
	require.Len(t, s1.callTool("wallet_policy", map[string]any{})["structuredContent"].(map[string]any)["chains"], 2)
	require.Equal(t, "confirmed", statusOf(previewAndConfirm(t, s1, "wallet_send", args)))
	refusedWith(t, s1.callTool("wallet_send", args), "CAP_EXCEEDED") // s1's session on 31337: 8 of 10
	require.Equal(t, "confirmed", statusOf(previewAndConfirm(t, s2, "wallet_send", args)), "s2's session window on 31337 is its own")
	require.Equal(t, big.NewInt(16_000_000), tokenOf(t, nodeB, usdtB, to), "what moved on 31337 is what both sessions confirmed")
	require.Equal(t, "16/100", chainCaps(t, s1, 31337)[strings.ToLower(usdtB.Hex())+" per day"], "the day window on 31337 is shared")
}
