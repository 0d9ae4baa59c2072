package approval

// The approval page: a local web page on which the person approves or
// rejects previews. Rules:
//   - It listens on 127.0.0.1 only, on a random port, and answers only under
//     /a/<secret>/, where secret is 256 random bits known to the operator
//     (stderr and a 0600 file), never to the model. Anything else is 404.
//   - The Host header must name this listener (127.0.0.1:port or
//     localhost:port): a DNS-rebinding page cannot reach it under its own
//     name.
//   - Approve and reject are POSTs whose Origin must be this listener's own
//     origin (Sec-Fetch-Site, when sent, must be same-origin) and which carry
//     a CSRF token bound to the secret and the preview. GETs change nothing.
//   - Every answer forbids framing, caching and scripts, and referrers to
//     other origins (the address holds the secret; "same-origin", not
//     "no-referrer", under which a browser sends Origin: null on the page's
//     own POSTs and the Origin check would refuse them); the only
//     style is one inline block allowed by its hash. All text goes through
//     html/template, so on-chain names are escaped.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed page.css page.html passkey.js
var pageFiles embed.FS

// The page's parts are read and parsed on first use: a walletgate that never
// serves the page (token mode, most starts) does not pay for them.
var (
	pageCSS  = sync.OnceValue(func() string { return mustRead("page.css") })
	pageTmpl = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("page.html").Funcs(template.FuncMap{
			"clock":       func(t time.Time) string { return t.UTC().Format("15:04:05") + " UTC" },
			"left":        func(v View) string { return LeftText(v.Left()) },
			"groups":      AddressGroups,
			"live":        func(vs []View) []View { return filterViews(vs, true) },
			"past":        func(vs []View) []View { return filterViews(vs, false) },
			"outcomeWord": OutcomeHeadline,
		}).ParseFS(pageFiles, "page.html"))
	})
	cspHeader = sync.OnceValue(func() string {
		return "default-src 'none'; style-src 'sha256-" + cssHash() + "'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	})
	// In passkey mode the page runs one script, its own (passkey.js), which
	// asks the browser for the passkey and talks only to this origin.
	passkeyCSP = sync.OnceValue(func() string {
		return "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'sha256-" + cssHash() + "'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	})
	passkeyJS = sync.OnceValue(func() string { return mustRead("passkey.js") })
)

func mustRead(name string) string {
	b, err := pageFiles.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func cssHash() string {
	sum := sha256.Sum256([]byte(pageCSS()))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Page serves the approval page for a broker.
type Page struct {
	broker *Broker
	secret string
	port   int
	now    func() time.Time
	// passkeys, when set (service mode), replace the secret address and the
	// form token: the page is at http://localhost:port/ for anyone to look
	// at, and only an enrolled passkey approves (see passkey.go).
	passkeys *Passkeys
}

// NewSecret returns 256 random bits, hex-encoded, for a page's URL.
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("approval: no randomness for the page secret: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// NewPage returns the page for broker, served under /a/<secret>/ by a
// listener on 127.0.0.1:port.
func NewPage(broker *Broker, secret string, port int) *Page {
	return &Page{broker: broker, secret: secret, port: port, now: broker.now}
}

// NewPasskeyPage returns the page for broker in passkey mode: served at
// http://localhost:port/ with no secret, approving only with keys.
func NewPasskeyPage(broker *Broker, keys *Passkeys, port int) *Page {
	return &Page{broker: broker, port: port, now: broker.now, passkeys: keys}
}

// URL is the page's address, secret included (in passkey mode there is none).
func (p *Page) URL() string {
	if p.passkeys != nil {
		return p.passkeys.Origin() + "/"
	}
	return fmt.Sprintf("http://127.0.0.1:%d/a/%s/", p.port, p.secret)
}

// ListenLocal listens on a random loopback port.
func ListenLocal() (net.Listener, int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, 0, fmt.Errorf("approval page: listen on 127.0.0.1: %w", err)
	}
	return ln, ln.Addr().(*net.TCPAddr).Port, nil
}

// MaxPageConns bounds the page's connections open at once (a browser opens
// six at most to one origin); whoever serves the page bounds its listener
// with it.
const MaxPageConns = 32

// Server wraps the page in an http.Server with tight limits.
func (p *Page) Server() *http.Server {
	return &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
}

// ServeHTTP routes /a/<secret>/, /a/<secret>/p/<id>, and the POSTs
// /a/<secret>/p/<id>/approve and /reject.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if p.passkeys != nil {
		h.Set("Content-Security-Policy", passkeyCSP())
	} else {
		h.Set("Content-Security-Policy", cspHeader())
	}
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")

	if !p.hostAllowed(r.Host) {
		http.Error(w, "walletgate: this page answers only at 127.0.0.1:"+strconv.Itoa(p.port)+" or localhost:"+strconv.Itoa(p.port)+" (the Host header names another site)", http.StatusMisdirectedRequest)
		return
	}
	if p.passkeys != nil {
		p.servePasskey(w, r)
		return
	}
	rest, ok := p.underSecret(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	parts := strings.Split(rest, "/")
	switch {
	case rest == "" && r.Method == http.MethodGet:
		p.render(w, http.StatusOK, pageData{List: p.broker.List(), Refresh: listRefresh})
	case len(parts) == 2 && parts[0] == "p" && r.Method == http.MethodGet:
		v, ok := p.broker.Get(parts[1])
		if !ok {
			http.NotFound(w, r)
			return
		}
		p.render(w, http.StatusOK, pageData{One: &v, CSRF: p.csrf(v.ID), Refresh: detailRefresh(v)})
	case len(parts) == 3 && parts[0] == "p" && (parts[2] == "approve" || parts[2] == "reject"):
		if r.Method != http.MethodPost {
			h.Set("Allow", http.MethodPost)
			http.Error(w, "walletgate: approve and reject are POSTs from the approval page", http.StatusMethodNotAllowed)
			return
		}
		p.decide(w, r, parts[1], parts[2])
	default:
		http.NotFound(w, r)
	}
}

// decide handles an approve or reject POST.
func (p *Page) decide(w http.ResponseWriter, r *http.Request, id, action string) {
	if msg := p.sameOrigin(r); msg != "" {
		http.Error(w, "walletgate: refused: "+msg+". Nothing was approved or rejected.", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "walletgate: the form could not be read", http.StatusBadRequest)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(p.csrf(id))) != 1 {
		http.Error(w, "walletgate: refused: the form did not come from this preview's page. Nothing was approved or rejected.", http.StatusForbidden)
		return
	}
	var err error
	if action == "approve" {
		_, _, err = p.broker.Approve(id)
	} else {
		err = p.broker.Reject(id)
	}
	v, ok := p.broker.Get(id)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		msg := err.Error()
		if e, ok := err.(*Error); ok {
			msg = e.Message
		}
		status := http.StatusConflict
		if v.State == Expired {
			status = http.StatusGone
		}
		p.render(w, status, pageData{One: &v, Problem: msg})
		return
	}
	// Post/redirect/get: a reload shows the outcome, it does not resubmit.
	http.Redirect(w, r, "/a/"+p.secret+"/p/"+id, http.StatusSeeOther)
}

// hostAllowed accepts only this listener's own names (in passkey mode only
// localhost:port, the one origin a passkey works at).
func (p *Page) hostAllowed(host string) bool {
	port := strconv.Itoa(p.port)
	if p.passkeys != nil {
		return host == "localhost:"+port
	}
	return host == "127.0.0.1:"+port || host == "localhost:"+port
}

// sameOrigin says why a POST is not from this page, or "".
func (p *Page) sameOrigin(r *http.Request) string {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return "the request carries no Origin header"
	}
	if origin != "http://"+r.Host {
		return "the request comes from another site (Origin " + strconv.Quote(clip(origin, 80)) + ")"
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return "the browser says the request is " + strconv.Quote(clip(site, 20)) + ", not same-origin"
	}
	return ""
}

// underSecret strips /a/<secret>/ from path.
func (p *Page) underSecret(path string) (string, bool) {
	const prefix = "/a/"
	if !strings.HasPrefix(path, prefix) || len(p.secret) < 32 {
		return "", false // a page without a real secret serves nothing
	}
	rest := path[len(prefix):]
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "", false
	}
	if subtle.ConstantTimeCompare([]byte(rest[:i]), []byte(p.secret)) != 1 {
		return "", false
	}
	return rest[i+1:], true
}

// csrf binds a form to the secret and the preview.
func (p *Page) csrf(id string) string {
	m := hmac.New(sha256.New, []byte(p.secret))
	m.Write([]byte("walletgate approval form\x00" + id))
	return hex.EncodeToString(m.Sum(nil))
}

type pageData struct {
	List []View
	One  *View
	CSRF string
	// Passkey is passkey mode: approve with a passkey, no form token.
	Passkey bool
	// ShowCode shows an approved preview's code (in passkey mode only on
	// the answer to the approval itself, never on a later look).
	ShowCode bool
	// Enrol is the enrolment page's base ("/enrol/<secret>/"), Enrolled
	// says it just succeeded.
	Enrol    string
	Enrolled bool
	// Passkeys are the enrolled passkeys (pending ones too), listed on the
	// passkey page's list view.
	Passkeys []PasskeyInfo
	// EnrolPending: the enrolment just made waits for an enrolled
	// passkey's approval. EnrolApproval is the pending enrolment whose
	// approval page this is, PendingKeys every one pending.
	EnrolPending  bool
	EnrolApproval *PasskeyInfo
	PendingKeys   []PasskeyInfo
	Problem       string
	Refresh       int // seconds until the browser reloads the page; 0: never
	Base          string
	CSS           template.CSS
	Now           func() time.Time
}

func (p *Page) render(w http.ResponseWriter, status int, d pageData) {
	d.Base = "/a/" + p.secret + "/"
	if p.passkeys != nil {
		d.Base, d.Passkey = "/", true
	} else {
		d.ShowCode = true
	}
	d.CSS = template.CSS(pageCSS())
	d.Now = p.now
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	if err := pageTmpl().Execute(&b, d); err != nil {
		http.Error(w, "walletgate: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// listRefresh is how often the list reloads (seconds): new previews appear
// without the person doing anything.
const listRefresh = 5

// detailRefresh is when a preview's page reloads itself (seconds; 0: never):
// while it is live, so that the time left counts down and a decision made
// elsewhere shows (at its expiry at the latest); while a used code awaits
// its outcome, soon. A reload is a GET: it never resubmits a form.
func detailRefresh(v View) int {
	switch v.State {
	case Pending, Approved:
		left := int(v.Left()/time.Second) + 1
		return min(10, left)
	case Used:
		if v.Outcome == nil {
			return 2
		}
	}
	return 0
}

// LeftText is the time left as a person reads it: "4 min 32 s", "9 s".
func LeftText(d time.Duration) string {
	d = max(d, 0)
	s := int(d / time.Second)
	if s >= 60 {
		return fmt.Sprintf("%d min %02d s", s/60, s%60)
	}
	return fmt.Sprintf("%d s", s)
}

// AddressGroups splits an address into groups of four hex digits after the
// 0x ("0x252F", "548b", …), the way people compare addresses; anything
// else is one group.
func AddressGroups(a string) []string {
	if len(a) != 42 || !strings.HasPrefix(a, "0x") {
		return []string{a}
	}
	out := []string{a[:6]}
	for i := 6; i < len(a); i += 4 {
		out = append(out, a[i:i+4])
	}
	return out
}

// filterViews keeps the live entries (awaiting a decision or the
// assistant's confirm), or the others (the history).
func filterViews(vs []View, live bool) []View {
	var out []View
	for _, v := range vs {
		if (v.State == Pending || v.State == Approved) == live {
			out = append(out, v)
		}
	}
	return out
}

// OutcomeHeadline heads an outcome: what happened, in a few words.
func OutcomeHeadline(status string) string {
	switch status {
	case "confirmed":
		return "Sent and verified"
	case "reverted":
		return "Reverted"
	case "pending":
		return "Sent, not yet seen included"
	case "mismatch":
		return "Included, but not as previewed"
	case "refused":
		return "Not sent"
	case "partial":
		return "Stopped part-way"
	case "signed":
		return "Signed, nothing sent"
	default:
		return "Outcome unknown"
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
