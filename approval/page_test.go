package approval

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	testPort  = 48123
	otherPort = 48124
)

type pageFixture struct {
	page   *Page
	broker *Broker
	clock  *fakeClock
	rv     *revokes
	secret string
	host   string // 127.0.0.1:testPort
}

func newTestPage(t testing.TB) *pageFixture {
	t.Helper()
	b, c, rv := newTestBroker(t)
	secret, err := NewSecret()
	require.NoError(t, err)
	return &pageFixture{page: NewPage(b, secret, testPort), broker: b, clock: c, rv: rv, secret: secret,
		host: "127.0.0.1:" + strconv.Itoa(testPort)}
}

func (f *pageFixture) base() string { return "/a/" + f.secret + "/" }

// get serves a GET of path with this page's Host; edit may change the
// request.
func (f *pageFixture) get(t testing.TB, path string, edit ...func(*http.Request)) (*http.Response, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.URL = &url.URL{Path: path}
	r.RequestURI = path
	r.Host = f.host
	for _, e := range edit {
		e(r)
	}
	return serve(t, f.page, r)
}

// post serves a form POST of body to path as the page's own form sends it:
// same Host, same Origin, Sec-Fetch-Site same-origin. edit may change it.
func (f *pageFixture) post(t testing.TB, path, body string, edit ...func(*http.Request)) (*http.Response, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.URL = &url.URL{Path: path}
	r.RequestURI = path
	r.Host = f.host
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", "http://"+f.host)
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	for _, e := range edit {
		e(r)
	}
	return serve(t, f.page, r)
}

// decide POSTs approve or reject for id with its real CSRF token.
func (f *pageFixture) decide(t testing.TB, id, action string, edit ...func(*http.Request)) (*http.Response, string) {
	t.Helper()
	return f.post(t, f.base()+"p/"+id+"/"+action, form(f.page.csrf(id)), edit...)
}

func form(csrf string) string { return url.Values{"csrf": {csrf}}.Encode() }

func serve(t testing.TB, h http.Handler, r *http.Request) (*http.Response, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	res := w.Result()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(body)
}

func header(k, v string) func(*http.Request) {
	return func(r *http.Request) {
		if v == "" {
			r.Header.Del(k)
			return
		}
		r.Header.Set(k, v)
	}
}

func withHost(h string) func(*http.Request) { return func(r *http.Request) { r.Host = h } }

var styleRE = regexp.MustCompile(`(?s)<style>(.*?)</style>`)

// requireSecurityHeaders checks the headers every answer carries, and on an
// HTML page that the inline style is exactly the one the CSP allows.
func requireSecurityHeaders(t testing.TB, res *http.Response, body string) {
	t.Helper()
	h := res.Header
	csp := h.Get("Content-Security-Policy")
	require.Contains(t, csp, "default-src 'none'")
	require.Contains(t, csp, "frame-ancestors 'none'")
	require.Contains(t, csp, "form-action 'self'")
	require.Contains(t, csp, "base-uri 'none'")
	require.NotContains(t, csp, "unsafe-inline")
	require.NotContains(t, csp, "script-src")
	require.Equal(t, "DENY", h.Get("X-Frame-Options"))
	require.Equal(t, "same-origin", h.Get("Referrer-Policy"), "no-referrer would make the browser send Origin: null on the page's own POSTs")
	require.Equal(t, "no-store", h.Get("Cache-Control"))
	require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	require.Equal(t, "same-origin", h.Get("Cross-Origin-Opener-Policy"))
	require.Equal(t, "same-origin", h.Get("Cross-Origin-Resource-Policy"))
	if !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		return
	}
	m := styleRE.FindAllStringSubmatch(body, -1)
	require.Len(t, m, 1, "one inline style block")
	sum := sha256.Sum256([]byte(m[0][1]))
	require.Contains(t, csp, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'",
		"the CSP allows the style actually inlined")
	require.Equal(t, 1, strings.Count(csp, "sha256-"))
	require.NotContains(t, body, "<script")
}

// ---------------------------------------------------------------------------

func TestNewSecret(t *testing.T) {
	a, err := NewSecret()
	require.NoError(t, err)
	b, err := NewSecret()
	require.NoError(t, err)
	require.Regexp(t, `^[0-9a-f]{64}$`, a)
	require.NotEqual(t, a, b)
}

func TestPageURL(t *testing.T) {
	f := newTestPage(t)
	require.Equal(t, "http://127.0.0.1:48123/a/"+f.secret+"/", f.page.URL())
}

func TestPageNeedsSecret(t *testing.T) {
	f := newTestPage(t)
	id := add(t, f.broker, "a")
	s := f.secret

	res, _ := f.get(t, f.base())
	require.Equal(t, http.StatusOK, res.StatusCode, "control: the real secret works")

	for _, path := range []string{
		"/",
		"/a/",
		"/a//",
		"/a/" + s,
		"/a/" + s[:len(s)-1] + "/",
		"/a/" + s[:32] + "/",
		"/a/" + s + "0/",
		"/a/" + strings.ToUpper(s) + "/",
		"/a/" + s + "/../",
		"/a/" + s + "/p/" + id + "/../../",
		"/a/x/../" + s + "/",
		"/a/./" + s + "/",
		"//a/" + s + "/",
		"/b/" + s + "/",
		"/A/" + s + "/",
		"/a/" + s + "/p/",
		"/a/" + s + "/p/" + id + "/",
		"/a/" + s + "/p/ZZZZ",
		"/a/" + s + "/p/" + id + "/approve/x",
		"/a/" + s + "/x",
		"/a/" + s + "/" + s + "/",
	} {
		t.Run(path, func(t *testing.T) {
			res, body := f.get(t, path)
			require.Equal(t, http.StatusNotFound, res.StatusCode)
			require.NotContains(t, body, id)
			require.NotContains(t, body, "Send 1 ETH")
			requireSecurityHeaders(t, res, body)
		})
	}

	// A POST with a wrong secret changes nothing, even with a valid form.
	for _, secret := range []string{s[:len(s)-1], s[1:], "", strings.Repeat("0", len(s))} {
		res, _ := f.post(t, "/a/"+secret+"/p/"+id+"/approve", form(f.page.csrf(id)))
		require.Equal(t, http.StatusNotFound, res.StatusCode)
	}
	require.Equal(t, Pending, state(t, f.broker, id))
}

func TestPageHostCheck(t *testing.T) {
	f := newTestPage(t)
	id := add(t, f.broker, "a")
	p := strconv.Itoa(testPort)

	for _, ok := range []string{"127.0.0.1:" + p, "localhost:" + p} {
		res, _ := f.get(t, f.base(), withHost(ok))
		require.Equal(t, http.StatusOK, res.StatusCode, ok)
	}
	for _, host := range []string{
		"evil.example:" + p,
		"127.0.0.1:" + strconv.Itoa(otherPort),
		"localhost:" + strconv.Itoa(otherPort),
		"127.0.0.1",
		"localhost",
		"",
		"[::1]:" + p,
		"0.0.0.0:" + p,
		"127.0.0.2:" + p,
		"127.0.0.1:" + p + ".evil.example",
		"evil.example",
		"127.0.0.1:" + p + ":" + p,
	} {
		t.Run(host, func(t *testing.T) {
			res, body := f.get(t, f.base(), withHost(host))
			require.Equal(t, http.StatusMisdirectedRequest, res.StatusCode)
			require.NotContains(t, body, id)
			requireSecurityHeaders(t, res, body)

			res, body = f.get(t, f.base()+"p/"+id, withHost(host))
			require.Equal(t, http.StatusMisdirectedRequest, res.StatusCode)
			require.NotContains(t, body, f.page.csrf(id))

			// A rebinding page's form: its own Host, its own Origin.
			for _, action := range []string{"approve", "reject"} {
				res, _ = f.decide(t, id, action, withHost(host), header("Origin", "http://"+host))
				require.Equal(t, http.StatusMisdirectedRequest, res.StatusCode)
			}
			require.Equal(t, Pending, state(t, f.broker, id))
			require.Empty(t, f.rv.got())
		})
	}
}

func TestPageRendersList(t *testing.T) {
	f := newTestPage(t)
	res, body := f.get(t, f.base())
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	require.Contains(t, body, `id="empty"`)
	requireSecurityHeaders(t, res, body)

	a := addDisplay(t, f.broker, "a", Display{Title: "Send 25 USDT to 0xabc", Marker: "testnet"})
	b := addDisplay(t, f.broker, "b", Display{Title: "Swap 1 ETH for DAI", Marker: "testnet"})
	approve(t, f.broker, a)
	res, body = f.get(t, f.base())
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NotContains(t, body, `id="empty"`)
	require.Contains(t, body, "Send 25 USDT to 0xabc")
	require.Contains(t, body, "Swap 1 ETH for DAI")
	require.Contains(t, body, `href="/a/`+f.secret+`/p/`+a+`"`)
	require.Contains(t, body, `href="/a/`+f.secret+`/p/`+b+`"`)
	require.Less(t, strings.Index(body, "Swap 1 ETH"), strings.Index(body, "Send 25 USDT"), "pending first")
	require.Contains(t, body, `<meta http-equiv="refresh" content="5">`)
	code := view(t, f.broker, a)
	require.NotContains(t, body, code.Code, "the list never shows a code")
	requireSecurityHeaders(t, res, body)
}

func TestPageRendersDetail(t *testing.T) {
	f := newTestPage(t)
	id := addDisplay(t, f.broker, "a", Display{
		Title: "Send 25 USDT to 0x00000000000000000000000000000000000000aa", Network: "Sepolia, chain id 11155111", Marker: "testnet",
		Action:   "Send 25.123456 USDT",
		Party:    &Party{Role: "Recipient", Address: "0x252F548BFEA5C0A7b9E1d56F4E2a3e0b7c1d9A43", Kind: "an account without code", Checksum: "EIP-55 checksum verified"},
		Amounts:  []Amount{{Label: "Send", Rounded: "≈ 25.123 USDT", Exact: "25.123456 USDT (25123456 base units)"}, {Label: "Also", Rounded: "1 ETH", Exact: "1 ETH"}},
		FeeMax:   &Amount{Label: "Network fee", Rounded: "at most 0.0004 ETH", Exact: "0.000391 ETH"},
		CapsLeft: []string{"USDT per transaction: 74.876544 of 100 left after this"}, Simulation: "succeeds against block 7",
		Warnings: []string{"first send to this address"},
		Text:     "the whole preview\nsecond line",
	})
	res, body := f.get(t, f.base()+"p/"+id)
	require.Equal(t, http.StatusOK, res.StatusCode)
	requireSecurityHeaders(t, res, body)
	for _, want := range []string{
		`<h1 id="title">Send 25.123456 USDT</h1>`,
		`testnet — Sepolia, chain id 11155111`,
		`<div class="addr" id="recipient"><span>0x252F</span><wbr><span>548B</span><wbr><span>FEA5</span>`, `<wbr><span>9A43</span></div>`,
		`an account without code · EIP-55 checksum verified`,
		`<dt>Send</dt><dd class="big"><details class="exact"><summary>≈ 25.123 USDT</summary>exactly 25.123456 USDT (25123456 base units)</details></dd>`,
		`<dt>Also</dt><dd class="big">1 ETH</dd>`, // nothing to unfold when the rounded text is exact
		`<summary>at most 0.0004 ETH</summary>exactly 0.000391 ETH`,
		`<li>USDT per transaction: 74.876544 of 100 left after this</li>`,
		`<strong>Simulation:</strong> succeeds against block 7`,
		`<strong>Warning:</strong> first send to this address`,
		`<strong id="preview-id">` + id + `</strong>`,
		`<span class="state state-pending" id="state">pending</span>`,
		`action="/a/` + f.secret + `/p/` + id + `/approve"`,
		`action="/a/` + f.secret + `/p/` + id + `/reject"`,
		`name="csrf" value="` + f.page.csrf(id) + `"`,
		"<pre id=\"text\">the whole preview\nsecond line</pre>",
		`<span id="countdown">5 min 00 s left</span> (until `,
		`<meta http-equiv="refresh" content="10">`, // a GET: it counts down, it never resubmits
	} {
		require.Contains(t, body, want)
	}
	for _, order := range [][2]string{{`id="network"`, `id="title"`}, {`id="title"`, `id="recipient"`}, {`id="recipient"`, `id="amounts"`},
		{`id="amounts"`, `id="caps"`}, {`id="caps"`, `id="simulation"`}, {`id="simulation"`, `class="warning"`}, {`class="warning"`, `id="approve"`}, {`id="approve"`, `id="text"`}} {
		require.Less(t, strings.Index(body, order[0]), strings.Index(body, order[1]), "%s comes before %s", order[0], order[1])
	}
	require.NotContains(t, body, "UNVERIFIED")
	require.NotContains(t, body, `id="code"`)

	f.clock.advance(ttl - 4*time.Second)
	_, body = f.get(t, f.base()+"p/"+id)
	require.Contains(t, body, `<span id="countdown">4 s left</span>`)
	require.Contains(t, body, `<meta http-equiv="refresh" content="5">`, "it reloads at its expiry")
}

func TestPageUsedShowsTheOutcome(t *testing.T) {
	f := newTestPage(t)
	id := addDisplay(t, f.broker, "a", Display{Title: "Send 5 USDT", Marker: "testnet", Text: "t"})
	code := approve(t, f.broker, id)
	_, err := f.broker.Redeem(code, fp("a"))
	require.NoError(t, err)

	_, body := f.get(t, f.base()+"p/"+id)
	require.Contains(t, body, `<span class="state state-used" id="state">used</span>`)
	require.Contains(t, body, "Waiting for walletgate to say how the write ended")
	require.Contains(t, body, `<meta http-equiv="refresh" content="2">`)
	require.NotContains(t, body, `id="countdown"`, "a decided preview does not count down")
	require.NotContains(t, body, "expires")

	hash := "0x" + strings.Repeat("ab", 32)
	f.broker.Finish(code, fp("b"), Outcome{Status: "confirmed", Summary: "wrong preview"})
	f.broker.Finish("000-000", fp("a"), Outcome{Status: "confirmed", Summary: "wrong code"})
	_, body = f.get(t, f.base()+"p/"+id)
	require.NotContains(t, body, "wrong", "an outcome is only taken for the code and the preview it confirmed")

	f.broker.Finish(code, fp("a"), Outcome{Status: "confirmed", Summary: "Sent and verified.", TxHashes: []string{hash}, Block: 42,
		Effects: []string{"5 USDT from 0x01 to 0x02"}, Fee: "0.00004 ETH"})
	f.broker.Finish(code, fp("a"), Outcome{Status: "reverted", Summary: "second"})
	_, body = f.get(t, f.base()+"p/"+id)
	for _, want := range []string{`<section class="outcome outcome-confirmed" id="outcome">`, `<p class="headline">Sent and verified</p>`,
		`<p class="hash">` + hash + `</p>`, "Included in block 42.", "<li>5 USDT from 0x01 to 0x02</li>", "Network fees paid: 0.00004 ETH."} {
		require.Contains(t, body, want)
	}
	require.NotContains(t, body, "second", "the first outcome stays")
	require.NotContains(t, body, `http-equiv="refresh"`, "nothing more to wait for")
	require.NotContains(t, body, "PREVIEW")

	_, body = f.get(t, f.base())
	require.Contains(t, body, `<h2 id="history">History</h2>`)
	require.NotContains(t, body, `id="pending"`, "nothing is waiting")
	require.Contains(t, body, "used</span> · Sent and verified")
}

var csrfRE = regexp.MustCompile(`action="([^"]+)/approve"><input type="hidden" name="csrf" value="([0-9a-f]+)"`)

func TestPageApprove(t *testing.T) {
	for _, host := range []string{"127.0.0.1:" + strconv.Itoa(testPort), "localhost:" + strconv.Itoa(testPort)} {
		t.Run(host, func(t *testing.T) {
			f := newTestPage(t)
			f.host = host
			id := add(t, f.broker, "a")
			other := add(t, f.broker, "b")

			// The form as the page renders it.
			_, body := f.get(t, f.base()+"p/"+id)
			m := csrfRE.FindStringSubmatch(body)
			require.NotNil(t, m, body)
			ch := f.broker.Changed()
			res, body := f.post(t, m[1]+"/approve", form(m[2]))
			require.Equal(t, http.StatusSeeOther, res.StatusCode, body)
			require.Equal(t, "/a/"+f.secret+"/p/"+id, res.Header.Get("Location"))
			requireSecurityHeaders(t, res, body)
			requireClosed(t, ch)

			v := view(t, f.broker, id)
			require.Equal(t, Approved, v.State)
			require.Regexp(t, codeRE, v.Code)
			require.Equal(t, Pending, state(t, f.broker, other), "only the posted preview is approved")

			res, body = f.get(t, res.Header.Get("Location"))
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Contains(t, body, `<p class="code" id="code">`+v.Code+`</p>`)
			require.Contains(t, body, `<span class="state state-approved" id="state">approved</span>`)
			require.NotContains(t, body, `id="approve"`, "no form once decided")
			requireSecurityHeaders(t, res, body)

			tok, err := f.broker.Redeem(v.Code, fp("a"))
			require.NoError(t, err)
			require.Equal(t, "tok-a", tok)
			_, body = f.get(t, f.base()+"p/"+id)
			require.NotContains(t, body, v.Code)
			require.Contains(t, body, `<span class="state state-used" id="state">used</span>`)
		})
	}
}

func TestPageReject(t *testing.T) {
	f := newTestPage(t)
	id := add(t, f.broker, "a")
	res, body := f.decide(t, id, "reject")
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body)
	require.Equal(t, "/a/"+f.secret+"/p/"+id, res.Header.Get("Location"))
	require.Equal(t, Rejected, state(t, f.broker, id))
	require.Equal(t, []string{"tok-a"}, f.rv.got())

	_, body = f.get(t, f.base()+"p/"+id)
	require.Contains(t, body, `<span class="state state-rejected" id="state">rejected</span>`)
	require.Contains(t, body, `id="outcome"`)
	require.NotContains(t, body, `id="code"`)

	// Deciding again is a conflict and changes nothing.
	for _, action := range []string{"approve", "reject"} {
		res, body = f.decide(t, id, action)
		require.Equal(t, http.StatusConflict, res.StatusCode)
		require.Contains(t, body, `id="problem"`)
		require.Contains(t, body, "already rejected")
		requireSecurityHeaders(t, res, body)
	}
	require.Equal(t, Rejected, state(t, f.broker, id))
	require.Equal(t, []string{"tok-a"}, f.rv.got())
}

func TestPageRejectAfterApproveWithdraws(t *testing.T) {
	f := newTestPage(t)
	id := add(t, f.broker, "a")
	approve(t, f.broker, id)
	_, body := f.get(t, f.base()+"p/"+id)
	require.Contains(t, body, `id="withdraw"`, "an approved preview offers to take the approval back")
	res, _ := f.decide(t, id, "reject")
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, Withdrawn, state(t, f.broker, id))
	require.Equal(t, []string{"tok-a"}, f.rv.got())
	_, body = f.get(t, f.base()+"p/"+id)
	require.NotContains(t, body, `id="code"`)
	require.Contains(t, body, "Withdrawn")
}

func TestPageRefusesForeignPosts(t *testing.T) {
	f := newTestPage(t)
	p := strconv.Itoa(testPort)
	otherID := add(t, f.broker, "other")
	otherSecret, err := NewSecret()
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		body func(id string) string
		edit []func(*http.Request)
	}{
		{name: "no Origin", edit: []func(*http.Request){header("Origin", "")}},
		{name: "no Origin, same-origin fetch", edit: []func(*http.Request){header("Origin", ""), header("Sec-Fetch-Site", "same-origin")}},
		{name: "foreign Origin", edit: []func(*http.Request){header("Origin", "http://evil.example")}},
		{name: "other port", edit: []func(*http.Request){header("Origin", "http://127.0.0.1:"+strconv.Itoa(otherPort))}},
		{name: "https", edit: []func(*http.Request){header("Origin", "https://127.0.0.1:"+p)}},
		{name: "other loopback name", edit: []func(*http.Request){header("Origin", "http://localhost:"+p)}},
		{name: "null Origin", edit: []func(*http.Request){header("Origin", "null")}},
		{name: "Origin with a path", edit: []func(*http.Request){header("Origin", "http://127.0.0.1:"+p+"/")}},
		{name: "cross-site", edit: []func(*http.Request){header("Sec-Fetch-Site", "cross-site")}},
		{name: "same-site", edit: []func(*http.Request){header("Sec-Fetch-Site", "same-site")}},
		{name: "none", edit: []func(*http.Request){header("Sec-Fetch-Site", "none")}},
		{name: "no csrf", body: func(string) string { return "" }},
		{name: "empty csrf", body: func(string) string { return form("") }},
		{name: "wrong csrf", body: func(string) string { return form(strings.Repeat("0", 64)) }},
		{name: "csrf of another preview", body: func(string) string { return form(f.page.csrf(otherID)) }},
		{name: "csrf of another page", body: func(id string) string {
			return form(NewPage(f.broker, otherSecret, testPort).csrf(id))
		}},
		{name: "csrf upper case", body: func(id string) string { return form(strings.ToUpper(f.page.csrf(id))) }},
		{name: "csrf truncated", body: func(id string) string { return form(f.page.csrf(id)[:32]) }},
		{name: "csrf as text/plain", body: func(id string) string { return "csrf=" + f.page.csrf(id) },
			edit: []func(*http.Request){header("Content-Type", "text/plain")}},
		{name: "csrf in the query", body: func(string) string { return "" },
			edit: []func(*http.Request){func(r *http.Request) {
				r.URL.RawQuery = "csrf=" + f.page.csrf(r.URL.Path[len(f.base())+2:len(f.base())+2+idLength])
			}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := add(t, f.broker, "a")
			for _, action := range []string{"approve", "reject"} {
				body := form(f.page.csrf(id))
				if tc.body != nil {
					body = tc.body(id)
				}
				ch := f.broker.Changed()
				res, text := f.post(t, f.base()+"p/"+id+"/"+action, body, tc.edit...)
				require.Equal(t, http.StatusForbidden, res.StatusCode, text)
				require.Contains(t, text, "Nothing was approved or rejected")
				requireSecurityHeaders(t, res, text)
				requireOpen(t, ch)
				require.Equal(t, Pending, state(t, f.broker, id))
			}
			require.Empty(t, f.rv.got())

			// Control: the same preview, posted properly, is approvable.
			res, _ := f.decide(t, id, "approve")
			require.Equal(t, http.StatusSeeOther, res.StatusCode)
			require.Equal(t, Approved, state(t, f.broker, id))
		})
	}
	require.Equal(t, Pending, state(t, f.broker, otherID))
}

func TestPageGetChangesNothing(t *testing.T) {
	f := newTestPage(t)
	id := add(t, f.broker, "a")
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		for _, action := range []string{"approve", "reject"} {
			path := f.base() + "p/" + id + "/" + action + "?csrf=" + f.page.csrf(id)
			r := httptest.NewRequest(method, path, strings.NewReader(form(f.page.csrf(id))))
			r.Host = f.host
			r.Header.Set("Origin", "http://"+f.host)
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, body := serve(t, f.page, r)
			require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode, method+" "+action)
			require.Equal(t, http.MethodPost, res.Header.Get("Allow"))
			requireSecurityHeaders(t, res, body)
		}
	}
	require.Equal(t, Pending, state(t, f.broker, id))
	require.Empty(t, f.rv.got())

	// POST is only for approve and reject.
	for _, path := range []string{f.base(), f.base() + "p/" + id} {
		res, _ := f.post(t, path, form(f.page.csrf(id)))
		require.Equal(t, http.StatusNotFound, res.StatusCode, path)
	}
	require.Equal(t, Pending, state(t, f.broker, id))
}

func TestPageExpired(t *testing.T) {
	f := newTestPage(t)
	a, r := add(t, f.broker, "a"), add(t, f.broker, "r")
	f.clock.advance(ttl)

	for _, id := range []string{a, r} {
		action := map[string]string{a: "approve", r: "reject"}[id]
		res, body := f.decide(t, id, action)
		require.Equal(t, http.StatusGone, res.StatusCode, action)
		require.Contains(t, body, "expired")
		require.NotContains(t, body, `id="code"`)
		require.NotContains(t, body, `id="approve"`)
		requireSecurityHeaders(t, res, body)
		v := view(t, f.broker, id)
		require.Equal(t, Expired, v.State)
		require.Empty(t, v.Code)
	}
	require.Empty(t, f.rv.got())
	_, err := f.broker.Redeem("123456", fp("a"))
	requireCode(t, err, CodeExpired)

	_, body := f.get(t, f.base()+"p/"+a)
	require.Contains(t, body, `<span class="state state-expired" id="state">expired</span>`)
	require.NotContains(t, body, `id="countdown"`)
	require.NotContains(t, body, `http-equiv="refresh"`)
}

func TestPageUnknownPreview(t *testing.T) {
	f := newTestPage(t)
	res, body := f.post(t, f.base()+"p/ZZZZ/approve", form(f.page.csrf("ZZZZ")))
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	requireSecurityHeaders(t, res, body)
	require.Empty(t, f.broker.List())
}

func TestPageOversizedBody(t *testing.T) {
	f := newTestPage(t)
	big := add(t, f.broker, "big")
	small := add(t, f.broker, "small")

	// The csrf comes first, so only the limit stands between this and an
	// approval.
	res, body := f.post(t, f.base()+"p/"+big+"/approve", form(f.page.csrf(big))+"&pad="+strings.Repeat("x", 5000))
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	requireSecurityHeaders(t, res, body)
	require.Equal(t, Pending, state(t, f.broker, big))

	res, body = f.post(t, f.base()+"p/"+small+"/approve", form(f.page.csrf(small))+"&pad="+strings.Repeat("x", 3500))
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body)
	require.Equal(t, Approved, state(t, f.broker, small))
}

var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	`</style><script>alert(2)</script>`,
	`javascript:alert(3)`,
	`{{.CSS}}`,
}

func TestPageEscapesHostileDisplay(t *testing.T) {
	f := newTestPage(t)
	all := strings.Join(hostile, " ")
	id := addDisplay(t, f.broker, "a", Display{
		Title: all, Network: all, Marker: all, Amounts: hostileAmounts(), Unverified: hostile, Warnings: hostile,
		Text: strings.Join(hostile, "\n"),
	})
	approved := addDisplay(t, f.broker, "b", Display{Title: all, Marker: "testnet", Text: all})
	approve(t, f.broker, approved)

	for _, path := range []string{f.base(), f.base() + "p/" + id, f.base() + "p/" + approved} {
		t.Run(path, func(t *testing.T) {
			res, body := f.get(t, path)
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.NotContains(t, body, "<script")
			require.NotContains(t, body, "<img")
			require.Equal(t, 1, strings.Count(body, "</style>"), "only the page's own style block closes")
			require.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;")
			require.Contains(t, body, "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;")
			require.Contains(t, body, "&lt;/style&gt;")
			require.Contains(t, body, "{{.CSS}}", "display text is data, never template")
			require.NotContains(t, body, `href="javascript`)
			requireSecurityHeaders(t, res, body)
		})
	}
	_, body := f.get(t, f.base()+"p/"+id)
	require.Equal(t, len(hostile), strings.Count(body, "<strong>UNVERIFIED TOKEN:</strong> "))
	require.Equal(t, len(hostile), strings.Count(body, "<strong>Warning:</strong> "))
	require.Contains(t, body, `class="marker dev"`, "the marker's text does not choose the class")
}

func hostileAmounts() []Amount {
	var out []Amount
	for _, h := range hostile {
		out = append(out, Amount{Label: h, Rounded: h, Exact: h + h})
	}
	return out
}

func TestPageUnverified(t *testing.T) {
	f := newTestPage(t)
	id := addDisplay(t, f.broker, "a", Display{Title: "Send 5 FOO", Marker: "testnet",
		Unverified: []string{"FOO (0x00000000000000000000000000000000000000f0)"}})

	_, body := f.get(t, f.base())
	require.Contains(t, body, "<strong>UNVERIFIED TOKEN</strong>")
	_, body = f.get(t, f.base()+"p/"+id)
	require.Contains(t, body, `<div class="unverified"><strong>UNVERIFIED TOKEN:</strong> FOO (0x00000000000000000000000000000000000000f0)`)

	g := newTestPage(t)
	id = addDisplay(t, g.broker, "a", Display{Title: "Send 5 USDC", Marker: "testnet"})
	for _, path := range []string{g.base(), g.base() + "p/" + id} {
		_, body = g.get(t, path)
		require.NotContains(t, body, "UNVERIFIED TOKEN", "control: a known token is not flagged")
	}
}

func TestPageNetworkMarker(t *testing.T) {
	for _, tc := range []struct {
		d     Display
		class string
	}{
		{Display{Mainnet: true, Marker: "MAINNET (real funds)", Network: "Ethereum, chain id 1"}, "mainnet"},
		{Display{Mainnet: true, Marker: "testnet", Network: "odd"}, "mainnet"}, // the flag wins: loudest when in doubt
		{Display{Marker: "testnet", Network: "Sepolia, chain id 11155111"}, "testnet"},
		{Display{Marker: "local dev chain", Network: "dev, chain id 1337"}, "dev"},
	} {
		t.Run(tc.class+" "+tc.d.Marker, func(t *testing.T) {
			f := newTestPage(t)
			id := addDisplay(t, f.broker, "a", tc.d)
			_, body := f.get(t, f.base()+"p/"+id)
			require.Contains(t, body, `<div class="marker `+tc.class+`" id="network">`+tc.d.Marker+` — `+tc.d.Network+`</div>`)
			_, body = f.get(t, f.base())
			require.Contains(t, body, `<div class="marker `+tc.class+`">`+tc.d.Marker+`</div>`)
			for _, other := range []string{"mainnet", "testnet", "dev"} {
				if other != tc.class {
					require.NotContains(t, body, `class="marker `+other+`"`)
				}
			}
		})
	}
}

func TestPageCSSInlinedVerbatim(t *testing.T) {
	f := newTestPage(t)
	_, body := f.get(t, f.base())
	m := styleRE.FindStringSubmatch(body)
	require.NotNil(t, m)
	require.Equal(t, pageCSS(), m[1])
	require.NotEmpty(t, strings.TrimSpace(pageCSS()))
}

// TestPageOverHTTP drives the page through a real loopback listener and
// client, as a browser would reach it.
func TestPageOverHTTP(t *testing.T) {
	b, _, rv := newTestBroker(t)
	ln, port, err := ListenLocal()
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:"+strconv.Itoa(port), ln.Addr().String())
	secret, err := NewSecret()
	require.NoError(t, err)
	page := NewPage(b, secret, port)
	srv := page.Server()
	require.Positive(t, srv.ReadHeaderTimeout)
	require.Positive(t, srv.MaxHeaderBytes)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	id := add(t, b, "a")

	res, err := client.Get(page.URL() + "p/" + id)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	m := csrfRE.FindStringSubmatch(string(body))
	require.NotNil(t, m)

	post := func(origin string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(port)+m[1]+"/approve", strings.NewReader(form(m[2])))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := client.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res
	}
	require.Equal(t, http.StatusForbidden, post("").StatusCode)
	require.Equal(t, http.StatusForbidden, post("http://evil.example").StatusCode)
	require.Equal(t, Pending, state(t, b, id))

	res = post("http://127.0.0.1:" + strconv.Itoa(port))
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, Approved, state(t, b, id))
	require.Empty(t, rv.got())

	res, err = client.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}

func TestPageWithoutARealSecretServesNothing(t *testing.T) {
	b, _, _ := newTestBroker(t)
	for _, secret := range []string{"", "short"} {
		p := NewPage(b, secret, testPort)
		r := httptest.NewRequest(http.MethodGet, "/a/"+secret+"/", nil)
		r.Host = "127.0.0.1:" + strconv.Itoa(testPort)
		res, _ := serve(t, p, r)
		require.Equal(t, http.StatusNotFound, res.StatusCode, "secret %q", secret)
	}
}

// Every status the tools report has a headline of its own.
func TestOutcomeHeadlines(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range []string{"confirmed", "reverted", "pending", "mismatch", "refused", "partial", "signed"} {
		h := OutcomeHeadline(s)
		require.NotEqual(t, "Outcome unknown", h, s)
		require.False(t, seen[h], "%s shares its headline", s)
		seen[h] = true
	}
	require.Equal(t, "Outcome unknown", OutcomeHeadline("something else"))
}
