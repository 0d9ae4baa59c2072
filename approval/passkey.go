package approval

// Passkeys: in service mode the approval page has no secret address (anyone
// may look) and approves a preview only with a WebAuthn assertion from the
// passkey the person enrolled at install. Rules:
//   - One relying party: ID "localhost", one origin http://localhost:PORT.
//     WebAuthn refuses IP-address origins, so the page is served under that
//     name; an assertion made for any other origin (a look-alike page on
//     another port) is refused by go-webauthn's origin check.
//   - User verification is required at enrolment and at every approval.
//   - A challenge is SHA-256 over the preview's id, its fingerprint and 32
//     random bytes. It is kept server-side with the preview it was made for,
//     is taken on the first answer that carries it (right or wrong), and
//     completes only that preview: an assertion for preview A approves A
//     once and nothing else.
//   - Anyone on the computer can post to the page. A begin adds a ceremony
//     beside the ones under way (at most maxCeremonies per preview; beyond,
//     begins are refused, never the older ceremonies dropped), and an answer
//     that carries no live challenge of that preview is refused touching
//     nothing: no one else's post spends or replaces the person's attempt, and
//     none is told to the person as their passkey's refusal.
//   - The enrolment secret is 256 random bits printed once to the installing
//     terminal; the service keeps only its SHA-256 and expiry (0600, its
//     own), and a successful enrolment deletes it: the link works once.
//   - The credentials file is the service user's, 0600, written through a
//     temporary file beside it.

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/walletgate/walletgate/atomicfile"
)

// Files in the passkey directory.
const (
	passkeysFile  = "passkeys.json"
	enrolmentFile = "passkey-enrolment.json"
)

// EnrolmentTTL is how long an enrolment link works.
const EnrolmentTTL = 30 * time.Minute

// ceremonyTimeout is how long a passkey prompt, and its ceremony, lasts.
const ceremonyTimeout = 3 * time.Minute

// maxCeremonies bounds the ceremonies under way for one preview.
const maxCeremonies = 16

// maxPasskeyFile bounds what is read of the files above.
const maxPasskeyFile = 1 << 20

// Passkeys holds the enrolled credentials and the ceremonies under way. Its
// methods are safe for concurrent use. A Passkeys with no credential
// approves nothing.
type Passkeys struct {
	wa     *webauthn.WebAuthn
	dir    string
	origin string
	now    func() time.Time

	mu     sync.Mutex
	store  passkeyStore
	logins map[string]map[string]passkeyLogin // by preview id, then challenge
	enrol  *webauthn.SessionData              // the registration under way
}

// passkeyLogin is an assertion ceremony begun for one preview.
type passkeyLogin struct {
	fingerprint [32]byte
	session     webauthn.SessionData
}

// passkeyStore is the credentials file.
type passkeyStore struct {
	UserID      []byte                `json:"user_id"`
	Credentials []webauthn.Credential `json:"credentials"`
	// Pending are passkeys enrolled after the first, which approve nothing
	// until an enrolled passkey approves their enrolment on the page.
	Pending []pendingPasskey `json:"pending,omitempty"`
}

// pendingPasskey is an enrolment awaiting an enrolled passkey's approval.
type pendingPasskey struct {
	Credential webauthn.Credential `json:"credential"`
	Created    time.Time           `json:"created"`
}

// passkeyEnrolment is the enrolment file: the secret's hash, until when.
type passkeyEnrolment struct {
	SecretSHA256 string    `json:"secret_sha256"`
	Expires      time.Time `json:"expires"`
}

// person is the one WebAuthn user: the person who approves.
type person struct{ s *passkeyStore }

func (p person) WebAuthnID() []byte                         { return p.s.UserID }
func (p person) WebAuthnName() string                       { return "walletgate" }
func (p person) WebAuthnDisplayName() string                { return "walletgate approvals" }
func (p person) WebAuthnCredentials() []webauthn.Credential { return p.s.Credentials }

// PasskeyOrigin is the one origin the page is served at for port.
func PasskeyOrigin(port int) string { return fmt.Sprintf("http://localhost:%d", port) }

// OpenPasskeys reads the credentials in dir (none yet is fine) for a page
// served at http://localhost:port.
func OpenPasskeys(dir string, port int) (*Passkeys, error) {
	origin := PasskeyOrigin(port)
	wa, err := webauthn.New(&webauthn.Config{
		RPID:          "localhost",
		RPDisplayName: "walletgate",
		RPOrigins:     []string{origin},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementRequired,
			UserVerification: protocol.VerificationRequired,
		},
		// A ceremony left unanswered expires (the browser's prompt too).
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Enforce: true, Timeout: ceremonyTimeout, TimeoutUVD: ceremonyTimeout},
			Registration: webauthn.TimeoutConfig{Enforce: true, Timeout: ceremonyTimeout, TimeoutUVD: ceremonyTimeout},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("passkeys: %w", err)
	}
	p := &Passkeys{wa: wa, dir: dir, origin: origin, now: time.Now, logins: map[string]map[string]passkeyLogin{}}
	b, err := readBounded(filepath.Join(dir, passkeysFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		var id [32]byte
		if _, err := rand.Read(id[:]); err != nil {
			return nil, fmt.Errorf("passkeys: no randomness: %w", err)
		}
		p.store.UserID = id[:]
	case err != nil:
		return nil, fmt.Errorf("passkeys: %w", err)
	default:
		if err := json.Unmarshal(b, &p.store); err != nil || len(p.store.UserID) == 0 {
			return nil, fmt.Errorf("passkeys: %s is not a credentials file: %v", filepath.Join(dir, passkeysFile), err)
		}
	}
	return p, nil
}

// Enrolled is how many passkeys can approve.
func (p *Passkeys) Enrolled() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.store.Credentials)
}

// Origin is the page's one origin.
func (p *Passkeys) Origin() string { return p.origin }

// NewEnrolment writes a fresh enrolment secret's hash to dir, owned by
// uid:gid (-1: unchanged), valid for ttl, and returns the secret, for the
// terminal that asked and nobody else.
func NewEnrolment(dir string, ttl time.Duration, uid, gid int) (string, error) {
	return newEnrolmentUntil(dir, time.Now().Add(ttl), uid, gid)
}

func newEnrolmentUntil(dir string, expires time.Time, uid, gid int) (string, error) {
	secret, err := NewSecret()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(secret))
	b, _ := json.Marshal(passkeyEnrolment{SecretSHA256: hex.EncodeToString(sum[:]), Expires: expires.UTC()})
	if err := atomicfile.Write(filepath.Join(dir, enrolmentFile), b, 0o600, uid, gid); err != nil {
		return "", fmt.Errorf("passkey enrolment: %w", err)
	}
	return secret, nil
}

// enrolmentValid says whether secret is the enrolment secret and still valid.
func (p *Passkeys) enrolmentValid(secret string) bool {
	b, err := readBounded(filepath.Join(p.dir, enrolmentFile))
	if err != nil {
		return false
	}
	var e passkeyEnrolment
	if json.Unmarshal(b, &e) != nil || !p.now().Before(e.Expires) {
		return false
	}
	sum := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(e.SecretSHA256)) == 1
}

// BeginEnrolment starts a registration for the holder of secret; it returns
// the options for navigator.credentials.create, as JSON.
func (p *Passkeys) BeginEnrolment(secret string) ([]byte, error) {
	if !p.enrolmentValid(secret) {
		return nil, errEnrolmentGone
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.reloadLocked(); err != nil {
		return nil, err
	}
	var exclude []protocol.CredentialDescriptor
	for _, c := range p.store.Credentials {
		exclude = append(exclude, c.Descriptor())
	}
	for _, pp := range p.store.Pending {
		exclude = append(exclude, pp.Credential.Descriptor())
	}
	creation, session, err := p.wa.BeginRegistration(person{&p.store}, webauthn.WithExclusions(exclude))
	if err != nil {
		return nil, fmt.Errorf("passkey enrolment: %w", err)
	}
	p.enrol = session
	return json.Marshal(creation)
}

var errEnrolmentGone = errors.New("this enrolment link is not valid: it was used, it expired, or it was never issued. Ask for a fresh one: sudo walletgate service enrol")

// FinishEnrolment checks the authenticator's answer (PublicKeyCredential
// JSON) and, if it is good, stores the credential and burns the secret. The
// first passkey approves from then on; a later one is pending (it approves
// nothing until an enrolled passkey approves its enrolment on the page).
func (p *Passkeys) FinishEnrolment(secret string, answer []byte) (pending bool, err error) {
	return p.finishEnrolment(secret, answer)
}

func (p *Passkeys) finishEnrolment(secret string, answer []byte) (bool, error) {
	if !p.enrolmentValid(secret) {
		return false, errEnrolmentGone
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	session := p.enrol
	p.enrol = nil
	if session == nil {
		return false, errors.New("no enrolment is under way: reload the enrolment page and try again")
	}
	if err := p.reloadLocked(); err != nil { // a removal since must stay one
		return false, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(answer)
	if err != nil {
		return false, fmt.Errorf("the authenticator's answer could not be read: %w", err)
	}
	cred, err := p.wa.CreateCredential(person{&p.store}, *session, parsed)
	if err != nil {
		return false, fmt.Errorf("the authenticator's answer was refused: %w", err)
	}
	next := p.store
	pending := len(p.store.Credentials) > 0
	if pending {
		next.Pending = append(append([]pendingPasskey(nil), p.store.Pending...), pendingPasskey{Credential: *cred, Created: p.now().UTC()})
	} else {
		next.Credentials = append(append([]webauthn.Credential(nil), p.store.Credentials...), *cred)
	}
	if err := p.saveLocked(next); err != nil {
		return false, fmt.Errorf("the passkey could not be saved: %w", err)
	}
	if err := os.Remove(filepath.Join(p.dir, enrolmentFile)); err != nil {
		return pending, fmt.Errorf("the passkey is saved, but the enrolment link could not be burnt: %w", err)
	}
	return pending, nil
}

// saveLocked writes next to the credentials file and makes it the store.
func (p *Passkeys) saveLocked(next passkeyStore) error {
	b, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(p.dir, passkeysFile), b, 0o600, -1, -1); err != nil {
		return err
	}
	p.store = next
	return nil
}

// pendingDigest binds an enrolment approval to every enrolment pending.
func pendingDigest(s passkeyStore) [32]byte {
	h := sha256.New()
	h.Write([]byte("walletgate pending enrolments\x00"))
	for _, pp := range s.Pending {
		h.Write(pp.Credential.ID)
		h.Write([]byte{0})
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// enrolmentCeremony is the ceremony key of the approval of pending
// enrolment id (base64url credential id).
func enrolmentCeremony(id string) string { return "enrolment\x00" + id }

// BeginEnrolmentApproval starts an enrolled passkey's approval of pending
// enrolment id (its credential id, base64url), bound to every enrolment
// pending now.
func (p *Passkeys) BeginEnrolmentApproval(id string) ([]byte, error) {
	s, err := readStore(p.dir)
	if err != nil {
		return nil, err
	}
	if findPending(s, id) < 0 {
		return nil, errors.New("no enrolment with that id is waiting for approval")
	}
	return p.BeginApproval(enrolmentCeremony(id), pendingDigest(s))
}

// FinishEnrolmentApproval checks an enrolled passkey's answer for pending
// enrolment id and, if good and the pending enrolments are still the ones
// it was asked for, makes that passkey one that approves. It returns the
// credential id of the passkey that approved.
func (p *Passkeys) FinishEnrolmentApproval(id string, answer []byte) (string, error) {
	s, err := readStore(p.dir)
	if err != nil {
		return "", err
	}
	by, err := p.FinishApproval(enrolmentCeremony(id), pendingDigest(s), answer)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.reloadLocked(); err != nil {
		return "", err
	}
	i := findPending(p.store, id)
	if i < 0 {
		return "", errors.New("that enrolment is no longer waiting for approval: nothing was enrolled")
	}
	next := p.store
	next.Credentials = append(append([]webauthn.Credential(nil), p.store.Credentials...), p.store.Pending[i].Credential)
	next.Pending = append(append([]pendingPasskey(nil), p.store.Pending[:i]...), p.store.Pending[i+1:]...)
	if err := p.saveLocked(next); err != nil {
		return "", fmt.Errorf("the enrolment could not be saved (%v): nothing was enrolled", err)
	}
	return by, nil
}

func findPending(s passkeyStore, id string) int {
	for i, pp := range s.Pending {
		if base64.RawURLEncoding.EncodeToString(pp.Credential.ID) == id {
			return i
		}
	}
	return -1
}

// challengeFor is the challenge for preview id with fingerprint fp.
func challengeFor(id string, fp [32]byte, nonce []byte) []byte {
	h := sha256.New()
	h.Write([]byte("walletgate passkey approval\x00"))
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write(fp[:])
	h.Write(nonce)
	return h.Sum(nil)
}

// BeginApproval starts an assertion for preview id (fingerprint fp); it
// returns the options for navigator.credentials.get, as JSON. A new begin
// for the same preview is a ceremony beside the ones under way.
func (p *Passkeys) BeginApproval(id string, fp [32]byte) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.reloadLocked(); err != nil {
		return nil, err
	}
	if len(p.store.Credentials) == 0 {
		return nil, errors.New("no passkey is enrolled: enrol one with the link `sudo walletgate service enrol` prints")
	}
	// Ceremonies that ran out are dropped: the map holds only live ones.
	now := time.Now()
	for other, ls := range p.logins {
		for c, l := range ls {
			if !l.session.Expires.IsZero() && now.After(l.session.Expires) {
				delete(ls, c)
			}
		}
		if len(ls) == 0 {
			delete(p.logins, other)
		}
	}
	if len(p.logins[id]) >= maxCeremonies {
		return nil, fmt.Errorf("%d passkey prompts are already open for this preview (a program on this computer may be sending them); the ones open still work. Finish one, or wait %d minutes and press Approve again", maxCeremonies, int(ceremonyTimeout/time.Minute))
	}
	nonce := make([]byte, 32)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("passkeys: no randomness: %w", err)
	}
	// No allow list: the authenticator offers its passkeys for localhost,
	// and the server accepts only an enrolled one (a passkey that was not
	// enrolled is refused here, not merely hidden by the browser).
	assertion, session, err := p.wa.BeginLogin(person{&p.store},
		webauthn.WithChallenge(challengeFor(id, fp, nonce)),
		webauthn.WithAllowedCredentials(nil),
		webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, fmt.Errorf("passkeys: %w", err)
	}
	if p.logins[id] == nil {
		p.logins[id] = map[string]passkeyLogin{}
	}
	p.logins[id][session.Challenge] = passkeyLogin{fingerprint: fp, session: *session}
	return json.Marshal(assertion)
}

// FinishApproval checks an assertion (PublicKeyCredential JSON) for preview
// id, whose fingerprint is now fp. The ceremony whose challenge the answer
// carries is spent whatever the result; an answer that carries none of this
// preview's live challenges spends nothing.
//
// It returns the credential id (base64url) of the passkey that approved.
func (p *Passkeys) FinishApproval(id string, fp [32]byte, answer []byte) (string, error) {
	err := p.finishApproval(id, fp, answer)
	if err != nil {
		return "", err
	}
	parsed, _ := protocol.ParseCredentialRequestResponseBytes(answer)
	return base64.RawURLEncoding.EncodeToString(parsed.RawID), nil
}

func (p *Passkeys) finishApproval(id string, fp [32]byte, answer []byte) error {
	parsed, err := protocol.ParseCredentialRequestResponseBytes(answer)
	if err != nil {
		return fmt.Errorf("the answer could not be read as a passkey's (%v); no passkey prompt was touched", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	challenge := parsed.Response.CollectedClientData.Challenge
	login, ok := p.logins[id][challenge]
	if !ok {
		return errors.New("no passkey approval is under way for this preview with the answer's challenge (an expired prompt, another preview's, or a post from outside this page); no passkey prompt was touched: press Approve again")
	}
	delete(p.logins[id], challenge)
	if err := p.reloadLocked(); err != nil {
		return fmt.Errorf("%v: nothing was approved", err)
	}
	if login.fingerprint != fp {
		return errors.New("what the passkey was asked to approve changed since (the preview, or the enrolments waiting): nothing was approved; press Approve again")
	}
	// The challenge must be this preview's: go-webauthn compares it with the
	// session's, and the session is this preview's alone.
	cred, err := p.wa.ValidateLogin(person{&p.store}, login.session, parsed)
	if err != nil {
		return fmt.Errorf("the passkey was refused (%v): only a passkey enrolled for this service approves", err)
	}
	if cred.Authenticator.CloneWarning {
		return errors.New("the passkey's signature counter went backwards: it may have been copied. Nothing was approved; enrol a fresh passkey (sudo walletgate service enrol)")
	}
	// The signature counter is kept, so that a copied passkey shows.
	next := p.store
	next.Credentials = append([]webauthn.Credential(nil), p.store.Credentials...)
	for i := range next.Credentials {
		if bytes.Equal(next.Credentials[i].ID, cred.ID) {
			next.Credentials[i].Authenticator = cred.Authenticator
		}
	}
	b, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(p.dir, passkeysFile), b, 0o600, -1, -1); err != nil {
		return fmt.Errorf("the passkey's counter could not be saved (%v): nothing was approved", err)
	}
	p.store = next
	return nil
}

// reloadLocked reads the credentials file again: a passkey removed with
// `walletgate service passkeys remove` approves nothing from then on. A file
// that cannot be read approves nothing.
func (p *Passkeys) reloadLocked() error {
	s, err := readStore(p.dir)
	if err != nil {
		return err
	}
	if len(s.UserID) == 0 { // no file: nothing enrolled (yet, or any more)
		s.UserID = p.store.UserID
	}
	p.store = s
	return nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPasskeyFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxPasskeyFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxPasskeyFile)
	}
	return b, nil
}
