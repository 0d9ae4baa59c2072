package main_test

// walletgate driven by the official Go MCP SDK's client
// (github.com/modelcontextprotocol/go-sdk), at its default protocol version
// (2026-07-28: server/discover, no initialize, input_required for asking the
// person) and at 2025-11-25 (initialize, server-sent elicitation/create).
// Every structuredContent is checked against the tool's listed outputSchema
// (the Go SDK does not check it; the TypeScript and Python SDKs do), and
// every write against the dev chain's balances.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/tools/schemacheck"
)

// sdkClient is one walletgate process and a Go SDK client session to it.
type sdkClient struct {
	t       *testing.T
	session *gosdk.ClientSession
	stderr  *syncBuffer
	schemas *schemacheck.Set
}

// startSDK starts walletgate with env and connects the Go SDK client at
// version ("" = the SDK's default), with elicit as its elicitation handler
// (nil: none) and caps as its declared capabilities (nil: the SDK's).
func startSDK(t *testing.T, env []string, version string, caps *gosdk.ClientCapabilities,
	elicit func(context.Context, *gosdk.ElicitRequest) (*gosdk.ElicitResult, error)) *sdkClient {
	t.Helper()
	ctx := context.Background()
	cmd := exec.Command(binary)
	cmd.Env = withStateDir(t, env)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	client := gosdk.NewClient(&gosdk.Implementation{Name: "walletgate-e2e-gosdk", Version: "0"},
		&gosdk.ClientOptions{ElicitationHandler: elicit, Capabilities: caps})
	session, err := client.Connect(ctx, &gosdk.CommandTransport{Command: cmd}, &gosdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err, "stderr:\n%s", stderr.String())
	t.Cleanup(func() { session.Close() })
	want := version
	if want == "" {
		want = "2026-07-28" // the SDK's default, and walletgate offers it
	}
	require.Equal(t, want, session.InitializeResult().ProtocolVersion)
	list, err := session.ListTools(ctx, nil)
	require.NoError(t, err)
	schemas := map[string]json.RawMessage{}
	for _, tool := range list.Tools {
		raw, err := json.Marshal(tool.OutputSchema)
		require.NoError(t, err)
		schemas[tool.Name] = raw
	}
	set, err := schemacheck.Compile(schemas)
	require.NoError(t, err)
	return &sdkClient{t: t, session: session, stderr: stderr, schemas: set}
}

// call calls tool and returns its structured content, checked against the
// tool's output schema, and its text.
func (c *sdkClient) call(tool string, args map[string]any) (map[string]any, string, bool) {
	c.t.Helper()
	res, err := c.session.CallTool(context.Background(), &gosdk.CallToolParams{Name: tool, Arguments: args})
	require.NoError(c.t, err, "%s: stderr:\n%s", tool, c.stderr.String())
	var text []string
	for _, ct := range res.Content {
		if tc, ok := ct.(*gosdk.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	joined := strings.Join(text, "\n")
	require.NotContains(c.t, joined, "InputRequests", "advice for server developers never reaches a client")
	var sc map[string]any
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		require.NoError(c.t, err)
		require.NoError(c.t, json.Unmarshal(raw, &sc))
		require.NoError(c.t, c.schemas.Check(tool, sc, res.IsError), "%s: %s", tool, joined)
	}
	return sc, joined, res.IsError
}

// ok calls tool and requires success.
func (c *sdkClient) ok(tool string, args map[string]any) map[string]any {
	c.t.Helper()
	sc, text, isErr := c.call(tool, args)
	require.False(c.t, isErr, "%s %v: %s", tool, args, text)
	return sc
}

// write previews tool with args and confirms the preview with confirm(its
// structured content); it requires a confirmed outcome.
func (c *sdkClient) write(tool string, args map[string]any, confirm func(map[string]any) string) map[string]any {
	c.t.Helper()
	pv := c.ok(tool, args)
	require.Equal(c.t, "confirmation_required", pv["status"])
	out := c.ok(tool, withConfirm(args, confirm(pv)))
	require.Equal(c.t, "confirmed", out["status"], "%v", out)
	return out
}

func byToken(pv map[string]any) string { return pv["confirm_token"].(string) }

// allowanceOf is token's on-chain allowance from owner to spender.
func allowanceOf(t *testing.T, v *chainView, token, owner, spender common.Address) *big.Int {
	t.Helper()
	data := append(common.FromHex("0xdd62ed3e"), append(common.LeftPadBytes(owner.Bytes(), 32), common.LeftPadBytes(spender.Bytes(), 32)...)...)
	out, err := v.node.CallContract(context.Background(), ethereum.CallMsg{To: &token, Data: data}, nil)
	require.NoError(t, err)
	return new(big.Int).SetBytes(out)
}

// approveOnPage does what the person does on a preview's approval page,
// opened at page: read its form token, press approve (from the page's own
// origin).
func approveOnPage(page string) error {
	resp, err := http.Get(page)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`).FindStringSubmatch(string(body))
	if m == nil {
		return fmt.Errorf("no form token on %s (status %d)", page, resp.StatusCode)
	}
	u, err := url.Parse(page)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, page+"/approve", strings.NewReader("csrf="+m[1]))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://"+u.Host)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 5 * time.Second}
	resp, err = noRedirect.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return fmt.Errorf("approve on %s: status %d", page, resp.StatusCode)
	}
	return nil
}

// person answers the client's elicitations as a person would and keeps what
// they were asked.
type person struct {
	t       *testing.T
	view    *chainView
	decline bool // answer the next form with "decline"
	mu      sync.Mutex
	asked   []*gosdk.ElicitParams
	errs    []error
}

func (p *person) elicit(_ context.Context, req *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req.Params)
	if req.Params.Mode == "url" {
		// They open the page, see the preview and approve it there.
		if err := approveOnPage(req.Params.URL); err != nil {
			p.errs = append(p.errs, err)
			return &gosdk.ElicitResult{Action: "decline"}, nil
		}
		return &gosdk.ElicitResult{Action: "accept"}, nil
	}
	if p.decline {
		p.decline = false
		return &gosdk.ElicitResult{Action: "decline"}, nil
	}
	return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
}

func (p *person) questions() []*gosdk.ElicitParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	require.Empty(p.t, p.errs)
	return append([]*gosdk.ElicitParams(nil), p.asked...)
}

// The Go SDK client at 2026-07-28 (its default) and at 2025-11-25: a send, a
// swap and an approval confirmed by token; a send confirmed in elicit mode
// (form elicitation); a send approved by the person on the approval page the
// client opened (human mode, URL elicitation). Each moves exactly what it
// previewed on the dev chain.
func TestGoSDKClientWritesAtEachProtocolVersion(t *testing.T) {
	info := startDevnet(t)
	view := newChainView(t, info)
	usdt := common.HexToAddress(info.Contracts["USDT"])
	weth := common.HexToAddress(info.Contracts["WETH"])
	if weth == (common.Address{}) {
		t.Fatal(swapTestsNeedArtifacts)
	}
	capsOf := func(state string, extra ...string) []string {
		return append(capsEnv(info, state), append([]string{"WALLETGATE_CAP_PER_TX=ETH=1,USDT=100,WETH=1",
			"WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=1000,WETH=1", "WALLETGATE_CAP_PER_DAY=ETH=1,USDT=1000,WETH=1"}, extra...)...)
	}
	form := &gosdk.ClientCapabilities{Elicitation: &gosdk.ElicitationCapabilities{Form: &gosdk.FormElicitationCapabilities{}}}
	urlMode := &gosdk.ClientCapabilities{Elicitation: &gosdk.ElicitationCapabilities{URL: &gosdk.URLElicitationCapabilities{}}}

	for i, version := range []string{"", "2025-11-25"} {
		name := "default (2026-07-28)"
		if version != "" {
			name = version
		}
		recipient := common.BigToAddress(big.NewInt(int64(0x5d4000 + 16*i)))
		t.Run(name+"/send, swap, approve by token", func(t *testing.T) {
			c := startSDK(t, capsOf(t.TempDir()), version, nil, nil)
			c.write("wallet_send", map[string]any{"to": recipient.Hex(), "amount": "1.5", "asset": "USDT"}, byToken)
			require.Equal(t, big.NewInt(1_500_000), view.usdtOf(recipient))

			usdtBefore, wethBefore := view.usdtOf(view.dev), tokenOf(t, view.node, weth, view.dev)
			c.write("wallet_swap", map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "2"}, byToken)
			require.Equal(t, new(big.Int).Sub(usdtBefore, big.NewInt(2_000_000)), view.usdtOf(view.dev))
			require.Equal(t, 1, tokenOf(t, view.node, weth, view.dev).Cmp(wethBefore), "WETH arrived")

			spender := common.BigToAddress(big.NewInt(int64(0x5d4001 + 16*i)))
			c.write("wallet_approve", map[string]any{"token": "USDT", "spender": spender.Hex(), "amount": "7"}, byToken)
			require.Equal(t, big.NewInt(7_000_000), allowanceOf(t, view, usdt, view.dev, spender))
		})

		t.Run(name+"/elicited confirm (form)", func(t *testing.T) {
			p := &person{t: t, view: view, decline: true}
			c := startSDK(t, capsOf(t.TempDir(), "WALLETGATE_CONFIRM=elicit"), version, form, p.elicit)
			to := common.BigToAddress(big.NewInt(int64(0x5d4002 + 16*i)))
			// The person says no first: nothing moves.
			args := map[string]any{"to": to.Hex(), "amount": "2.25", "asset": "USDT"}
			pv := c.ok("wallet_send", args)
			nonce := view.nonce()
			_, text, isErr := c.call("wallet_send", withConfirm(args, byToken(pv)))
			require.True(t, isErr)
			require.True(t, strings.HasPrefix(text, "HUMAN_DECLINED: "), text)
			require.Equal(t, nonce, view.nonce(), "nothing signed or sent")
			require.Equal(t, 0, view.usdtOf(to).Sign())
			c.write("wallet_send", map[string]any{"to": to.Hex(), "amount": "2.25", "asset": "USDT"}, byToken)
			require.Equal(t, big.NewInt(2_250_000), view.usdtOf(to))
			asked := p.questions()
			require.Len(t, asked, 2, "the person was asked once per confirm")
			require.Contains(t, asked[1].Message, "send 2.25 USDT")
			require.Contains(t, asked[1].Message, to.Hex())
		})

		t.Run(name+"/human approval on the page the client opened (URL)", func(t *testing.T) {
			p := &person{t: t, view: view}
			c := startSDK(t, capsOf(t.TempDir(), "WALLETGATE_CONFIRM=human"), version, urlMode, p.elicit)
			to := common.BigToAddress(big.NewInt(int64(0x5d4003 + 16*i)))
			nonce := view.nonce()
			c.write("wallet_send", map[string]any{"to": to.Hex(), "amount": "3", "asset": "USDT"}, func(pv map[string]any) string {
				require.NotContains(t, pv, "confirm_token", "no token reaches the model in human mode")
				require.Equal(t, nonce, view.nonce())
				return pv["approval"].(map[string]any)["id"].(string)
			})
			require.Equal(t, big.NewInt(3_000_000), view.usdtOf(to))
			asked := p.questions()
			require.Len(t, asked, 1)
			require.Equal(t, "url", asked[0].Mode)
			require.Regexp(t, `^http://127\.0\.0\.1:\d+/a/[0-9a-f]{64}/p/[A-Z2-9]{4}$`, asked[0].URL)
		})
	}
}
