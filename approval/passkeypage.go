package approval

// The approval page in passkey mode (service mode). Rules:
//   - It answers only at localhost:port (WebAuthn refuses IP-address
//     origins); anyone may look: GETs show previews and change nothing.
//   - Every POST must come from the page's own origin (Origin header,
//     Sec-Fetch-Site), and is bounded in size.
//   - Approve needs a passkey assertion for that preview's challenge (see
//     passkey.go); an approval without one, or with a passkey that was not
//     enrolled, approves nothing. The code is shown only on the answer to the
//     approval, never on a later GET (anyone may look).
//   - Reject and withdraw need no passkey: they can only stop a write.
//   - Enrolment is under /enrol/<secret>/, answered only while that secret
//     is the valid one; anything else is 404.

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxAssertionBytes bounds a passkey's answer.
const maxAssertionBytes = 16 << 10

func (p *Page) servePasskey(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if path == "/passkey.js" && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		_, _ = io.WriteString(w, passkeyJS())
		return
	}
	if rest, ok := strings.CutPrefix(path, "/enrol/"); ok {
		p.serveEnrol(w, r, rest)
		return
	}
	if rest, ok := strings.CutPrefix(path, "/enrolments/"); ok {
		p.serveEnrolmentApproval(w, r, rest)
		return
	}
	rest := strings.TrimPrefix(path, "/")
	parts := strings.Split(rest, "/")
	switch {
	case rest == "" && r.Method == http.MethodGet:
		keys, err := ListPasskeys(p.passkeys.dir)
		if err != nil {
			http.Error(w, "walletgate: the enrolled passkeys cannot be read", http.StatusInternalServerError)
			return
		}
		p.render(w, http.StatusOK, pageData{List: p.broker.List(), Refresh: listRefresh, Passkeys: keys})
	case len(parts) == 2 && parts[0] == "p" && r.Method == http.MethodGet:
		v, ok := p.broker.Get(parts[1])
		if !ok {
			http.NotFound(w, r)
			return
		}
		refresh := detailRefresh(v)
		if v.State == Pending {
			refresh = 0 // a reload would cut the passkey prompt short
		}
		p.render(w, http.StatusOK, pageData{One: &v, Refresh: refresh})
	case len(parts) == 3 && parts[0] == "p" && (parts[2] == "begin" || parts[2] == "approve" || parts[2] == "reject"):
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "walletgate: approve and reject are POSTs from the approval page", http.StatusMethodNotAllowed)
			return
		}
		if msg := p.sameOrigin(r); msg != "" {
			http.Error(w, "walletgate: refused: "+msg+". Nothing was approved or rejected.", http.StatusForbidden)
			return
		}
		switch parts[2] {
		case "begin":
			p.beginApproval(w, parts[1])
		case "approve":
			p.passkeyApprove(w, r, parts[1])
		default:
			p.passkeyReject(w, r, parts[1])
		}
	default:
		http.NotFound(w, r)
	}
}

// beginApproval answers the options for navigator.credentials.get.
func (p *Page) beginApproval(w http.ResponseWriter, id string) {
	v, ok := p.broker.Get(id)
	fp, fok := p.broker.fingerprintOf(id)
	if !ok || !fok {
		http.Error(w, "walletgate: no preview with that id is listed", http.StatusNotFound)
		return
	}
	if v.State != Pending {
		http.Error(w, "walletgate: preview "+v.ID+" is "+string(v.State)+": it cannot be approved now", http.StatusConflict)
		return
	}
	opts, err := p.passkeys.BeginApproval(id, fp)
	if err != nil {
		http.Error(w, "walletgate: "+err.Error(), http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(opts)
}

// passkeyApprove checks the assertion in the form and approves the preview.
func (p *Page) passkeyApprove(w http.ResponseWriter, r *http.Request, id string) {
	r.Body = http.MaxBytesReader(w, r.Body, maxAssertionBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "walletgate: the form could not be read", http.StatusBadRequest)
		return
	}
	v, ok := p.broker.Get(id)
	fp, fok := p.broker.fingerprintOf(id)
	if !ok || !fok {
		http.NotFound(w, r)
		return
	}
	answer := r.PostForm.Get("assertion")
	var err error
	if answer == "" {
		err = errors.New("approving needs your passkey: the form carried no passkey answer (is JavaScript on, and is a passkey or security key at hand?). Nothing was approved")
	} else if by, ferr := p.passkeys.FinishApproval(id, fp, []byte(answer)); ferr != nil {
		err = ferr
	} else {
		_, _, err = p.broker.ApproveWith(id, by)
		if e, ok := err.(*Error); ok {
			err = errors.New(e.Message)
		}
	}
	if err != nil {
		if v, ok = p.broker.Get(id); !ok {
			http.NotFound(w, r)
			return
		}
		p.render(w, http.StatusForbidden, pageData{One: &v, Problem: "Not approved: " + err.Error()})
		return
	}
	v, _ = p.broker.Get(id)
	// This answer alone shows the code; it does not reload itself (a reload
	// is a look, and looks never show a code).
	p.render(w, http.StatusOK, pageData{One: &v, ShowCode: true})
}

// passkeyReject rejects (or withdraws) without a passkey: it only stops.
func (p *Page) passkeyReject(w http.ResponseWriter, r *http.Request, id string) {
	err := p.broker.Reject(id)
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
		p.render(w, http.StatusConflict, pageData{One: &v, Problem: msg})
		return
	}
	http.Redirect(w, r, "/p/"+id, http.StatusSeeOther)
}

// serveEnrolmentApproval serves /enrolments/<id> (a pending enrolment, with
// every other one pending) and its POSTs begin and approve, which need an
// enrolled passkey.
func (p *Page) serveEnrolmentApproval(w http.ResponseWriter, r *http.Request, rest string) {
	id, action, _ := strings.Cut(rest, "/")
	keys, err := ListPasskeys(p.passkeys.dir)
	if err != nil {
		http.Error(w, "walletgate: the enrolled passkeys cannot be read", http.StatusInternalServerError)
		return
	}
	var one *PasskeyInfo
	var pending []PasskeyInfo
	for _, k := range keys {
		if k.Pending {
			pending = append(pending, k)
			if k.ID == id {
				one = &k
			}
		}
	}
	if one == nil {
		http.NotFound(w, r)
		return
	}
	base := "/enrolments/" + id + "/"
	data := pageData{EnrolApproval: one, PendingKeys: pending, Enrol: base}
	switch {
	case action == "" && r.Method == http.MethodGet:
		p.render(w, http.StatusOK, data)
	case (action == "begin" || action == "approve") && r.Method == http.MethodPost:
		form, ok := p.enrolmentStep(w, r, action == "begin", func() ([]byte, error) { return p.passkeys.BeginEnrolmentApproval(id) })
		if !ok {
			return
		}
		if _, err := p.passkeys.FinishEnrolmentApproval(id, []byte(form.Get("assertion"))); err != nil {
			data.Problem = "Not enrolled: " + err.Error()
			p.render(w, http.StatusForbidden, data)
			return
		}
		data.Enrolled = true
		p.render(w, http.StatusOK, data)
	default:
		http.NotFound(w, r)
	}
}

// enrolmentStep is what the two enrolment ceremonies' POSTs (an enrolment,
// and an enrolled passkey's approval of one) share: the page's own origin,
// then either the ceremony's options from begin (answered as JSON) or the
// finishing form, read within maxAssertionBytes. ok is false when it has
// answered the request itself.
func (p *Page) enrolmentStep(w http.ResponseWriter, r *http.Request, begin bool, options func() ([]byte, error)) (form url.Values, ok bool) {
	if msg := p.sameOrigin(r); msg != "" {
		http.Error(w, "walletgate: refused: "+msg+". Nothing was enrolled.", http.StatusForbidden)
		return nil, false
	}
	if begin {
		opts, err := options()
		if err != nil {
			http.Error(w, "walletgate: "+err.Error(), http.StatusConflict)
			return nil, false
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(opts)
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxAssertionBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "walletgate: the form could not be read", http.StatusBadRequest)
		return nil, false
	}
	return r.PostForm, true
}

// serveEnrol serves /enrol/<secret>/ (rest is what follows /enrol/).
func (p *Page) serveEnrol(w http.ResponseWriter, r *http.Request, rest string) {
	secret, action, _ := strings.Cut(rest, "/")
	if len(secret) < 32 || !p.passkeys.enrolmentValid(secret) {
		http.NotFound(w, r)
		return
	}
	base := "/enrol/" + secret + "/"
	switch {
	case action == "" && r.Method == http.MethodGet:
		p.render(w, http.StatusOK, pageData{Enrol: base})
	case (action == "begin" || action == "finish") && r.Method == http.MethodPost:
		form, ok := p.enrolmentStep(w, r, action == "begin", func() ([]byte, error) { return p.passkeys.BeginEnrolment(secret) })
		if !ok {
			return
		}
		pending, err := p.passkeys.FinishEnrolment(secret, []byte(form.Get("credential")))
		if err != nil {
			p.render(w, http.StatusForbidden, pageData{Enrol: base, Problem: "Not enrolled: " + err.Error()})
			return
		}
		p.render(w, http.StatusOK, pageData{Enrol: "/", Enrolled: true, EnrolPending: pending})
	default:
		http.NotFound(w, r)
	}
}
