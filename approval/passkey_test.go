package approval

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/stretchr/testify/require"
)

// passkeyFixture is a passkey-mode page with one enrolled (made-up)
// credential, so that ceremonies can begin; no real authenticator answers
// here (the Chromium test has those).
type passkeyFixture struct {
	page   *Page
	keys   *Passkeys
	broker *Broker
	clock  *fakeClock
	dir    string
	host   string
}

func newPasskeyFixture(t *testing.T) *passkeyFixture {
	t.Helper()
	b, c, _ := newTestBroker(t)
	dir := t.TempDir()
	keys, err := OpenPasskeys(dir, testPort)
	require.NoError(t, err)
	keys.now = c.now
	f := &passkeyFixture{page: NewPasskeyPage(b, keys, testPort), keys: keys, broker: b, clock: c, dir: dir,
		host: "localhost:" + strconv.Itoa(testPort)}
	f.enrol(t, webauthn.Credential{ID: []byte("enrolled-credential"), PublicKey: []byte{1}})
	return f
}

// enrol makes cs the enrolled passkeys, in the credentials file as an
// enrolment leaves them (the page reads it at every ceremony).
func (f *passkeyFixture) enrol(t *testing.T, cs ...webauthn.Credential) {
	t.Helper()
	s := passkeyStore{UserID: f.keys.store.UserID, Credentials: cs}
	b, err := json.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, passkeysFile), b, 0o600))
	f.keys.store = s
}

func (f *passkeyFixture) request(t *testing.T, method, path, body string, edit ...func(*http.Request)) (*http.Response, string) {
	t.Helper()
	r := httptest.NewRequest(method, "/", strings.NewReader(body))
	r.URL = &url.URL{Path: path}
	r.RequestURI = path
	r.Host = f.host
	if method == http.MethodPost {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", "http://"+f.host)
		r.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	for _, e := range edit {
		e(r)
	}
	return serve(t, f.page, r)
}

// Every way to approve on the passkey page without the enrolled passkey's
// assertion for that very preview approves nothing, and says why.
func TestPasskeyPageRefusesEveryApprovalWithoutThePasskey(t *testing.T) {
	f := newPasskeyFixture(t)
	id := add(t, f.broker, "a")
	other := add(t, f.broker, "b")
	base := "/p/" + id + "/"
	for _, c := range []struct {
		name   string
		method string
		path   string
		body   string
		edit   []func(*http.Request)
		begin  bool // begin a ceremony for id first
		status int
		says   string
	}{
		{name: "NoAssertion", method: "POST", path: base + "approve", body: "assertion=", status: 403, says: "needs your passkey"},
		{name: "NoCeremony", method: "POST", path: base + "approve", body: "assertion=%7B%7D", status: 403, says: "no passkey prompt was touched"},
		{name: "JunkAssertion", method: "POST", path: base + "approve", body: "assertion=%7B%22id%22%3A1%7D", begin: true, status: 403, says: "could not be read"},
		{name: "AnotherPreviewsCeremony", method: "POST", path: "/p/" + other + "/approve", body: "assertion=%7B%7D", begin: true, status: 403, says: "no passkey prompt was touched"},
		{name: "OtherOrigin", method: "POST", path: base + "approve", body: "assertion=x", edit: []func(*http.Request){header("Origin", "http://localhost:1")}, status: 403, says: "another site"},
		{name: "OtherOriginBegin", method: "POST", path: base + "begin", edit: []func(*http.Request){header("Origin", "http://evil.example")}, status: 403, says: "another site"},
		{name: "CrossSite", method: "POST", path: base + "approve", body: "assertion=x", edit: []func(*http.Request){header("Sec-Fetch-Site", "cross-site")}, status: 403, says: "not same-origin"},
		{name: "IPAddressHost", method: "GET", path: base, edit: []func(*http.Request){func(r *http.Request) { r.Host = "127.0.0.1:" + strconv.Itoa(testPort) }}, status: 421},
		{name: "GetApprove", method: "GET", path: base + "approve", status: 405},
		{name: "SecretAddressOfStdioMode", method: "GET", path: "/a/" + strings.Repeat("0", 64) + "/", status: 404},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.begin {
				res, body := f.request(t, "POST", base+"begin", "")
				require.Equal(t, 200, res.StatusCode, body)
				require.Contains(t, body, `"userVerification":"required"`)
				require.Contains(t, body, `"rpId":"localhost"`)
			}
			res, body := f.request(t, c.method, c.path, c.body, c.edit...)
			require.Equal(t, c.status, res.StatusCode, body)
			require.Contains(t, body, c.says)
			for _, p := range []string{id, other} {
				v, _ := f.broker.Get(p)
				require.Equal(t, Pending, v.State, "nothing was approved")
			}
		})
	}
}

// A look at an approved preview never shows its code: anyone may look.
func TestPasskeyPageLooksNeverShowTheCode(t *testing.T) {
	f := newPasskeyFixture(t)
	id := add(t, f.broker, "a")
	code := approve(t, f.broker, id)
	for _, path := range []string{"/", "/p/" + id} {
		res, body := f.request(t, "GET", path, "")
		require.Equal(t, 200, res.StatusCode)
		require.NotContains(t, body, code, path)
		require.NotContains(t, body, strings.ReplaceAll(code, "-", ""), path)
	}
	res, _ := f.request(t, "GET", "/p/"+id, "")
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "script-src 'self'")
}

// The enrolment link answers only with its secret, until it expires; its
// secret is not kept, only its hash, in a file of the service's alone.
func TestPasskeyEnrolmentLinkAnswersOnlyWithItsSecretUntilItExpires(t *testing.T) {
	f := newPasskeyFixture(t)
	secret, err := newEnrolmentUntil(f.dir, f.clock.now().Add(EnrolmentTTL), -1, -1)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(f.dir, enrolmentFile))
	require.NoError(t, err)
	require.NotContains(t, string(b), secret, "only the secret's hash is kept")
	fi, err := os.Stat(filepath.Join(f.dir, enrolmentFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	res, _ := f.request(t, "GET", "/enrol/"+secret+"/", "")
	require.Equal(t, 200, res.StatusCode)
	wrong := strings.Repeat("a", len(secret))
	res, _ = f.request(t, "GET", "/enrol/"+wrong+"/", "")
	require.Equal(t, 404, res.StatusCode)
	res, body := f.request(t, "POST", "/enrol/"+secret+"/begin", "", header("Origin", "http://localhost:1"))
	require.Equal(t, 403, res.StatusCode, body)
	res, body = f.request(t, "POST", "/enrol/"+secret+"/finish", "credential=%7B%7D")
	require.Equal(t, 403, res.StatusCode, body)
	require.Contains(t, body, "no enrolment is under way")
	require.Len(t, f.keys.store.Credentials, 1, "nothing was enrolled")

	f.clock.advance(EnrolmentTTL + time.Second)
	res, _ = f.request(t, "GET", "/enrol/"+secret+"/", "")
	require.Equal(t, 404, res.StatusCode, "an expired link is gone")
}
