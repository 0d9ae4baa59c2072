package main_test

// The service's approval page in passkey mode, in real headless Chromium with
// the WebAuthn domain's virtual authenticators: enrol once through the
// one-time link; then a page visit with no passkey, and a passkey that was
// not enrolled, approve nothing; an assertion made for one preview does not
// approve another; the enrolled passkey approves, and the send lands on the
// dev chain exactly as previewed.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// freeLocalPort is a port nothing listens on now, for a page whose origin
// must be known before it starts.
func freeLocalPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// addAuthenticator gives tab a virtual platform passkey authenticator that
// verifies its user, and returns its id.
func (tb *browserTab) addAuthenticator() webauthn.AuthenticatorID {
	return tb.addAuthenticatorWith(false)
}

// addAuthenticatorWith is addAuthenticator; cmtg is for one that is given a
// passkey by hand (Chromium's AddCredential sends the CMTG field, which an
// authenticator without that extension refuses).
func (tb *browserTab) addAuthenticatorWith(cmtg bool) webauthn.AuthenticatorID {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserStep)
	defer cancel()
	_, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{})
	require.NoError(tb.t, err)
	res, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21,
		Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true,
		HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true, HasCmtgKey: cmtg,
	}})
	require.NoError(tb.t, err)
	return res.AuthenticatorID
}

// addForeignPasskey puts into authenticator id a passkey for localhost that
// walletgate never enrolled: the authenticator will answer with it.
func (tb *browserTab) addForeignPasskey(id webauthn.AuthenticatorID) {
	tb.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(tb.t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(tb.t, err)
	credID, handle := make([]byte, 16), make([]byte, 32)
	rand.Read(credID)
	rand.Read(handle)
	ctx, cancel := context.WithTimeout(tb.ctx, browserStep)
	defer cancel()
	_, err = chromedp.Call(ctx, webauthn.AddCredential, webauthn.AddCredentialParams{AuthenticatorID: id, Credential: &webauthn.Credential{
		CredentialID: credID, IsResidentCredential: true, RpID: "localhost", PrivateKey: der, UserHandle: handle, SignCount: 0,
	}})
	require.NoError(tb.t, err)
}

// credentials is how many passkeys authenticator id holds.
func (tb *browserTab) credentials(id webauthn.AuthenticatorID) int {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserStep)
	defer cancel()
	res, err := chromedp.Call(ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: id})
	require.NoError(tb.t, err)
	return len(res.Credentials)
}

// submit submits the form of the element with id as it is, without the
// page's script (a visit with no passkey to answer), and returns the answer.
func (tb *browserTab) submit(id string) int64 {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserStep)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Submit(chromedp.ID(id)))
	require.NoError(tb.t, err, "submit the form of #%s", id)
	return resp.Status
}

// eval runs an async expression in the tab and returns its string value.
func (tb *browserTab) eval(expr string) string {
	tb.t.Helper()
	return runIn(tb, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
}

func TestPasskeyServicePageApprovesOnlyWithTheEnrolledPasskey(t *testing.T) {
	browser := startBrowser(t)
	info := startDevnet(t)
	view := newChainView(t, info)
	state := t.TempDir()
	sock := filepath.Join(t.TempDir(), "mcp.sock")
	port := freeLocalPort(t)
	origin := "http://localhost:" + strconv.Itoa(port)
	svc := exec.Command(binary, "service", "run", "--env", "--socket", sock, "--page-port", strconv.Itoa(port))
	svc.Env = cleanEnv("WALLETGATE_RPC="+info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE="+info.KeyFile,
		"WALLETGATE_STATE_DIR="+state, "WALLETGATE_CONFIRM=human", "WALLETGATE_HUMAN_ABOVE=USDT=1",
		"WALLETGATE_CAP_PER_TX=ETH=1,USDT=100", "WALLETGATE_CAP_PER_SESSION=ETH=1,USDT=100", "WALLETGATE_CAP_PER_DAY=ETH=1,USDT=100")
	log := &syncBuffer{}
	svc.Stderr = log
	require.NoError(t, svc.Start())
	t.Cleanup(func() { svc.Process.Signal(os.Interrupt); svc.Wait() })
	waitForOr(t, "the service's socket", func() bool { return strings.Contains(log.String(), "serving MCP on the service socket") }, log.String)
	require.Contains(t, log.String(), "approves writes on "+origin+"/ with a passkey (0 enrolled")

	// (a) Enrol, through the one-time link the enrol command prints.
	enrolCmd := exec.Command(binary, "service", "enrol", "--state-dir", state, "--page-port", strconv.Itoa(port))
	enrolCmd.Env = cleanEnv()
	out, err := enrolCmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	link := regexp.MustCompile(`http://localhost:\d+/enrol/[0-9a-f]{64}`).FindString(string(out))
	require.NotEmpty(t, link, "the enrol command prints the link: %s", out)
	require.True(t, strings.HasPrefix(link, origin+"/enrol/"))
	secret := link[strings.LastIndex(link, "/")+1:]

	person := newTab(t, browser)
	enrolled := person.addAuthenticator()
	resp := person.navigate(link)
	person.requireStatus(resp, http.StatusOK, "the enrolment page")
	resp = person.click("enrol")
	person.requireStatus(resp, http.StatusOK, "the enrolment")
	require.True(t, person.has("enrolled"), person.body())
	require.Equal(t, 1, person.credentials(enrolled), "the authenticator made one passkey")
	fi, err := os.Stat(filepath.Join(state, "passkeys.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the credentials are the service's alone")
	// (f) The link works once.
	resp = person.navigate(link)
	require.EqualValues(t, http.StatusNotFound, resp.Status, "a used enrolment link is gone")
	for _, f := range []string{filepath.Join(state, "passkeys.json")} {
		b, _ := os.ReadFile(f)
		require.NotContains(t, string(b), secret)
	}
	require.NotContains(t, log.String(), secret, "the enrolment secret is in no log")

	// The assistant's previews: A (7.25 USDT) and B (3.5 USDT).
	client := startCommand(t, exec.Command(binary, "connect", "--socket", sock))
	client.initialize()
	to := common.HexToAddress("0x00000000000000000000000000000000000e2e28")
	preview := func(amount string) (string, map[string]any) {
		args := map[string]any{"to": to.Hex(), "amount": amount, "asset": "USDT"}
		res := client.callTool("wallet_send", args)
		require.Nil(t, res["isError"], text(res))
		return res["structuredContent"].(map[string]any)["approval"].(map[string]any)["id"].(string), args
	}
	before, nonce := view.usdtOf(to), view.nonce()
	idA, argsA := preview("7.25")
	idB, argsB := preview("3.5")
	nothingMoved := func(why string) {
		t.Helper()
		require.Equal(t, before, view.usdtOf(to), why)
		require.Equal(t, nonce, view.nonce(), why)
	}

	// (b) A visit with no passkey: the page shows the preview, and its
	// approve form, sent without a passkey's answer, approves nothing.
	nobody := newTab(t, browser)
	resp = nobody.navigate(origin + "/p/" + idA)
	nobody.requireStatus(resp, http.StatusOK, "anyone may look")
	require.Equal(t, "Send 7.25 USDT", nobody.text("title"))
	require.Equal(t, "pending", nobody.text("state"))
	require.EqualValues(t, http.StatusForbidden, nobody.submit("approve"))
	require.Contains(t, nobody.text("problem"), "needs your passkey")
	require.Equal(t, "pending", nobody.text("state"))
	require.False(t, nobody.has("code"))
	// The page answers only at localhost:PORT, the passkey's origin.
	resp = nobody.navigate("http://127.0.0.1:" + strconv.Itoa(port) + "/p/" + idA)
	require.EqualValues(t, http.StatusMisdirectedRequest, resp.Status)

	// (c) A passkey that was not enrolled: the authenticator answers, the
	// service refuses.
	stranger := newTab(t, browser)
	foreign := stranger.addAuthenticatorWith(true)
	stranger.addForeignPasskey(foreign)
	stranger.navigate(origin + "/p/" + idA)
	resp = stranger.click("approve")
	stranger.requireStatus(resp, http.StatusForbidden, "a passkey that was not enrolled")
	require.Contains(t, stranger.text("problem"), "only a passkey enrolled for this service approves")
	require.Equal(t, "pending", stranger.text("state"))
	require.False(t, stranger.has("code"))
	refusedWith(t, client.callTool("wallet_send", withConfirm(argsA, "123-456")), "APPROVAL_PENDING")
	nothingMoved("no passkey, or a stranger's, moved nothing")

	// (e) An assertion made for A, handed to B, does not approve B (and
	// spends none of B's ceremonies); it approves A only.
	person.navigate(origin + "/p/" + idB)
	assertionA := person.eval(`(async () => {
		const begin = async (id) => (await (await fetch("/p/" + id + "/begin", {method: "POST"})).json()).publicKey;
		const a = await begin(` + strconv.Quote(idA) + `);
		await begin(` + strconv.Quote(idB) + `);
		const cred = await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(a)});
		return JSON.stringify(cred.toJSON());
	})()`)
	runIn(person, chromedp.SetValue(chromedp.CSS(`form[action$="/approve"] input[name="assertion"]`), assertionA))
	require.EqualValues(t, http.StatusForbidden, person.submit("approve"), person.body())
	require.Contains(t, person.text("problem"), "no passkey prompt was touched", "A's assertion carries none of B's challenges: it spends nothing of B's")
	require.Equal(t, "pending", person.text("state"), "A's assertion does not approve B")
	// The same assertion, on A's page, approves A: it was a good one.
	person.navigate(origin + "/p/" + idA)
	runIn(person, chromedp.SetValue(chromedp.CSS(`form[action$="/approve"] input[name="assertion"]`), assertionA))
	require.EqualValues(t, http.StatusOK, person.submit("approve"), person.body())
	require.Equal(t, "approved", person.text("state"))
	codeA := person.text("code")
	require.Regexp(t, codePattern, codeA)
	// A later look shows no code: anyone may look.
	nobody.navigate(origin + "/p/" + idA)
	require.Equal(t, "approved", nobody.text("state"))
	require.False(t, nobody.has("code"), "a look never shows the code")
	nothingMoved("approving signs nothing")

	// (d) The assistant confirms A with the code: the send lands as
	// previewed.
	done := client.callTool("wallet_send", withConfirm(argsA, codeA))
	require.Nil(t, done["isError"], text(done))
	require.Equal(t, "confirmed", done["structuredContent"].(map[string]any)["status"], text(done))
	require.Equal(t, new(big.Int).Add(before, big.NewInt(7_250_000)), view.usdtOf(to), "A landed exactly as previewed")
	require.Equal(t, nonce+1, view.nonce())

	// B, approved the person's way: press Approve, the passkey answers.
	person.navigate(origin + "/p/" + idB)
	resp = person.click("approve")
	person.requireStatus(resp, http.StatusOK, "the enrolled passkey approves")
	codeB := person.text("code")
	require.Regexp(t, codePattern, codeB)
	done = client.callTool("wallet_send", withConfirm(argsB, codeB))
	require.Equal(t, "confirmed", done["structuredContent"].(map[string]any)["status"], text(done))
	require.Equal(t, new(big.Int).Add(before, big.NewInt(10_750_000)), view.usdtOf(to), "B landed exactly as previewed")
	require.Equal(t, nonce+2, view.nonce())
}
