package approval

// Fake begin and approve posts, from anyone on the computer, while the person
// approves with their passkey: they never spend or replace the person's
// attempt, and the person is never told that their passkey was refused (nor
// to enrol again) because of them. A software authenticator stands in for
// the person's passkey (the Chromium tests use the browser's).

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/url"
	"strconv"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/stretchr/testify/require"
)

// softPasskey is a passkey held in the test: an ES256 key for localhost.
type softPasskey struct {
	id    []byte
	key   *ecdsa.PrivateKey
	count uint32
}

func newSoftPasskey(t *testing.T, id string) *softPasskey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return &softPasskey{id: []byte(id), key: k}
}

// credential is the enrolled record of the passkey.
func (s *softPasskey) credential(t *testing.T) webauthn.Credential {
	t.Helper()
	pub := webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         int64(webauthncose.P256),
		XCoord:        s.key.X.FillBytes(make([]byte, 32)),
		YCoord:        s.key.Y.FillBytes(make([]byte, 32)),
	}
	b, err := webauthncbor.Marshal(pub)
	require.NoError(t, err)
	return webauthn.Credential{ID: s.id, PublicKey: b, AttestationType: "none",
		Flags: webauthn.CredentialFlags{UserPresent: true, UserVerified: true}}
}

// answer is the passkey's assertion (PublicKeyCredential JSON) for the
// options a begin returned, made at origin.
func (s *softPasskey) answer(t *testing.T, options []byte, origin string) string {
	t.Helper()
	var opts struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			RPID      string `json:"rpId"`
		} `json:"publicKey"`
	}
	require.NoError(t, json.Unmarshal(options, &opts))
	client, err := json.Marshal(map[string]any{"type": "webauthn.get", "challenge": opts.PublicKey.Challenge, "origin": origin, "crossOrigin": false})
	require.NoError(t, err)
	rp := sha256.Sum256([]byte(opts.PublicKey.RPID))
	s.count++
	auth := append(rp[:], 0x01|0x04) // user present, user verified
	auth = binary.BigEndian.AppendUint32(auth, s.count)
	cd := sha256.Sum256(client)
	digest := sha256.Sum256(append(append([]byte(nil), auth...), cd[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, s.key, digest[:])
	require.NoError(t, err)
	b64 := base64.RawURLEncoding.EncodeToString
	out, err := json.Marshal(map[string]any{
		"id": b64(s.id), "rawId": b64(s.id), "type": "public-key",
		"response": map[string]string{"clientDataJSON": b64(client), "authenticatorData": b64(auth), "signature": b64(sig)},
	})
	require.NoError(t, err)
	return string(out)
}

func TestFakePostsNeverTouchThePersonsPasskeyAttempt(t *testing.T) {
	f := newPasskeyFixture(t)
	person := newSoftPasskey(t, "person")
	stranger := newSoftPasskey(t, "stranger")
	f.enrol(t, person.credential(t))
	origin := "http://" + f.host
	id := add(t, f.broker, "a")
	base := "/p/" + id + "/"

	// The person presses Approve: their browser begins a ceremony.
	res, options := f.request(t, "POST", base+"begin", "")
	require.Equal(t, 200, res.StatusCode, options)
	theirs := person.answer(t, []byte(options), origin)

	// Meanwhile another program on the computer posts begins and answers
	// of its own: its own passkey's, junk, and the person's passkey's
	// answer made for another origin.
	for range 3 {
		res, other := f.request(t, "POST", base+"begin", "")
		require.Equal(t, 200, res.StatusCode, other)
		_ = other // a begin of its own opens a prompt beside the person's
	}
	res, own := f.request(t, "POST", base+"begin", "")
	require.Equal(t, 200, res.StatusCode)
	for name, answer := range map[string]string{
		"junk":                 `{"id":1}`,
		"empty object":         `{}`,
		"a stranger's passkey": stranger.answer(t, []byte(own), origin),
		"a challenge it made":  stranger.answer(t, []byte(`{"publicKey":{"challenge":"`+base64.RawURLEncoding.EncodeToString([]byte("guess"))+`","rpId":"localhost"}}`), origin),
		"another origin":       stranger.answer(t, []byte(own), "http://localhost:"+strconv.Itoa(testPort+1)),
	} {
		res, body := f.request(t, "POST", base+"approve", "assertion="+url.QueryEscape(answer))
		require.Equal(t, 403, res.StatusCode, name)
		for _, says := range []string{"service enrol", "enrol a", "enrolled at install"} {
			require.NotContains(t, body, says, "%s: the page tells someone to enrol again because of a post that was not the person's", name)
		}
		require.Equal(t, Pending, state(t, f.broker, id), "%s approved", name)
	}

	// The person's passkey answers their own prompt: it approves.
	res, body := f.request(t, "POST", base+"approve", "assertion="+url.QueryEscape(theirs))
	require.Equal(t, 200, res.StatusCode, body)
	require.Equal(t, Approved, state(t, f.broker, id), "the fake posts spent or replaced the person's passkey attempt")
}

// A flood of begins is refused once maxCeremonies are open; the prompts
// already open still approve.
func TestAFloodOfBeginsLeavesThePersonsPromptOpen(t *testing.T) {
	f := newPasskeyFixture(t)
	person := newSoftPasskey(t, "person")
	f.enrol(t, person.credential(t))
	id := add(t, f.broker, "a")
	base := "/p/" + id + "/"
	res, options := f.request(t, "POST", base+"begin", "")
	require.Equal(t, 200, res.StatusCode)
	for range maxCeremonies - 1 {
		res, _ := f.request(t, "POST", base+"begin", "")
		require.Equal(t, 200, res.StatusCode)
	}
	res, body := f.request(t, "POST", base+"begin", "")
	require.Equal(t, 409, res.StatusCode, body)
	require.Contains(t, body, "passkey prompts are already open")
	res, body = f.request(t, "POST", base+"approve", "assertion="+url.QueryEscape(person.answer(t, []byte(options), "http://"+f.host)))
	require.Equal(t, 200, res.StatusCode, body)
	require.Equal(t, Approved, state(t, f.broker, id))
}

// A passkey removed from the credentials file (`walletgate service passkeys
// remove`) approves nothing from then on, in the running service too, even
// for a prompt it opened before.
func TestARemovedPasskeyApprovesNothing(t *testing.T) {
	f := newPasskeyFixture(t)
	person, other := newSoftPasskey(t, "person-passkey"), newSoftPasskey(t, "other-passkey")
	f.enrol(t, person.credential(t), other.credential(t))
	list, err := ListPasskeys(f.dir)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, base64.RawURLEncoding.EncodeToString([]byte("person-passkey")), list[0].ID)

	id := add(t, f.broker, "a")
	res, options := f.request(t, "POST", "/p/"+id+"/begin", "")
	require.Equal(t, 200, res.StatusCode)
	_, err = RemovePasskey(f.dir, list[0].ID[:4])
	require.ErrorContains(t, err, "at least 8 characters")
	gone, err := RemovePasskey(f.dir, list[0].ID[:10])
	require.NoError(t, err)
	require.Equal(t, list[0], gone)
	res, body := f.request(t, "POST", "/p/"+id+"/approve", "assertion="+url.QueryEscape(person.answer(t, []byte(options), "http://"+f.host)))
	require.Equal(t, 403, res.StatusCode, body)
	require.Equal(t, Pending, state(t, f.broker, id), "a removed passkey approved")
	list, err = ListPasskeys(f.dir)
	require.NoError(t, err)
	require.Len(t, list, 1, "the other passkey stays")

	// The one left still approves.
	res, options = f.request(t, "POST", "/p/"+id+"/begin", "")
	require.Equal(t, 200, res.StatusCode)
	res, body = f.request(t, "POST", "/p/"+id+"/approve", "assertion="+url.QueryEscape(other.answer(t, []byte(options), "http://"+f.host)))
	require.Equal(t, 200, res.StatusCode, body)
	require.Equal(t, Approved, state(t, f.broker, id))
}

// Each approval on the page names the passkey that gave it, for the journal.
func TestAnApprovalNamesItsPasskey(t *testing.T) {
	f := newPasskeyFixture(t)
	var got []Decision
	f.broker = NewBroker(Options{Now: f.clock.now, Decided: func(d Decision) { got = append(got, d) }})
	f.page = NewPasskeyPage(f.broker, f.keys, testPort)
	person := newSoftPasskey(t, "person-passkey")
	f.enrol(t, person.credential(t))
	id := add(t, f.broker, "a")
	res, options := f.request(t, "POST", "/p/"+id+"/begin", "")
	require.Equal(t, 200, res.StatusCode)
	res, body := f.request(t, "POST", "/p/"+id+"/approve", "assertion="+url.QueryEscape(person.answer(t, []byte(options), "http://"+f.host)))
	require.Equal(t, 200, res.StatusCode, body)
	require.Len(t, got, 1)
	require.Equal(t, Approved, got[0].State)
	require.Equal(t, base64.RawURLEncoding.EncodeToString([]byte("person-passkey")), got[0].Passkey)
}

// The page lists the passkeys that approve.
func TestThePageListsTheEnrolledPasskeys(t *testing.T) {
	f := newPasskeyFixture(t)
	f.enrol(t, newSoftPasskey(t, "person-passkey").credential(t), newSoftPasskey(t, "other-passkey").credential(t))
	res, body := f.request(t, "GET", "/", "")
	require.Equal(t, 200, res.StatusCode)
	for _, id := range []string{"person-passkey", "other-passkey"} {
		require.Contains(t, body, base64.RawURLEncoding.EncodeToString([]byte(id)))
	}
	require.Contains(t, body, "sudo walletgate service passkeys remove ID")
	f.enrol(t)
	_, body = f.request(t, "GET", "/", "")
	require.Contains(t, body, `id="no-passkeys"`)
}

// register is the passkey's answer to a begin of enrolment (a "none"
// attestation), made at origin.
func (s *softPasskey) register(t *testing.T, options []byte, origin string) string {
	t.Helper()
	var opts struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			RP        struct {
				ID string `json:"id"`
			} `json:"rp"`
		} `json:"publicKey"`
	}
	require.NoError(t, json.Unmarshal(options, &opts))
	client, err := json.Marshal(map[string]any{"type": "webauthn.create", "challenge": opts.PublicKey.Challenge, "origin": origin, "crossOrigin": false})
	require.NoError(t, err)
	rp := sha256.Sum256([]byte(opts.PublicKey.RP.ID))
	auth := append(rp[:], 0x01|0x04|0x40) // user present, user verified, attested credential data
	auth = binary.BigEndian.AppendUint32(auth, 0)
	auth = append(auth, make([]byte, 16)...) // AAGUID
	auth = binary.BigEndian.AppendUint16(auth, uint16(len(s.id)))
	auth = append(auth, s.id...)
	auth = append(auth, s.credential(t).PublicKey...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": auth})
	require.NoError(t, err)
	b64 := base64.RawURLEncoding.EncodeToString
	out, err := json.Marshal(map[string]any{
		"id": b64(s.id), "rawId": b64(s.id), "type": "public-key",
		"response": map[string]string{"clientDataJSON": b64(client), "attestationObject": b64(att)},
	})
	require.NoError(t, err)
	return string(out)
}

// enrolThroughTheLink enrols s through a fresh one-time link, as the
// person (or whoever opened the link) would; it says whether the passkey
// waits for approval.
func (f *passkeyFixture) enrolThroughTheLink(t *testing.T, s *softPasskey) string {
	t.Helper()
	secret, err := newEnrolmentUntil(f.dir, f.clock.now().Add(EnrolmentTTL), -1, -1)
	require.NoError(t, err)
	res, options := f.request(t, "POST", "/enrol/"+secret+"/begin", "")
	require.Equal(t, 200, res.StatusCode, options)
	res, body := f.request(t, "POST", "/enrol/"+secret+"/finish", "credential="+url.QueryEscape(s.register(t, []byte(options), "http://"+f.host)))
	require.Equal(t, 200, res.StatusCode, body)
	return body
}

// A passkey enrolled after the first approves nothing until an enrolled
// passkey approves its enrolment, on a page that shows it and every
// enrolment waiting; a pending one cannot approve another's.
func TestALaterEnrolmentNeedsAnEnrolledPasskeysApproval(t *testing.T) {
	f := newPasskeyFixture(t)
	f.enrol(t)
	person := newSoftPasskey(t, "person-passkey")
	body := f.enrolThroughTheLink(t, person)
	require.Contains(t, body, `id="enrolled"`, "the first passkey (at install) approves at once")

	// Someone else who got a fresh link enrols two of its own.
	intruder, second := newSoftPasskey(t, "intruder-passkey"), newSoftPasskey(t, "second-intruder")
	require.Contains(t, f.enrolThroughTheLink(t, intruder), `id="enrolled-pending"`)
	require.Contains(t, f.enrolThroughTheLink(t, second), `id="enrolled-pending"`)
	list, err := ListPasskeys(f.dir)
	require.NoError(t, err)
	require.Len(t, list, 3)
	intruderID, secondID := base64.RawURLEncoding.EncodeToString(intruder.id), base64.RawURLEncoding.EncodeToString(second.id)

	// A pending passkey approves no preview.
	id := add(t, f.broker, "a")
	res, options := f.request(t, "POST", "/p/"+id+"/begin", "")
	require.Equal(t, 200, res.StatusCode)
	res, _ = f.request(t, "POST", "/p/"+id+"/approve", "assertion="+url.QueryEscape(intruder.answer(t, []byte(options), "http://"+f.host)))
	require.Equal(t, 403, res.StatusCode)
	require.Equal(t, Pending, state(t, f.broker, id), "a pending passkey approved a preview")

	// Nor its own enrolment, nor the other's.
	page := "/enrolments/" + intruderID + "/"
	res, body = f.request(t, "GET", "/enrolments/"+intruderID, "")
	require.Equal(t, 200, res.StatusCode)
	require.Contains(t, body, "Every enrolment waiting (2)", "the approval shows every pending enrolment")
	require.Contains(t, body, intruderID)
	require.Contains(t, body, secondID)
	for _, by := range []*softPasskey{intruder, second} {
		res, options = f.request(t, "POST", page+"begin", "")
		require.Equal(t, 200, res.StatusCode, options)
		res, body = f.request(t, "POST", page+"approve", "assertion="+url.QueryEscape(by.answer(t, []byte(options), "http://"+f.host)))
		require.Equal(t, 403, res.StatusCode, body)
	}
	// The enrolled passkey approves it.
	res, options = f.request(t, "POST", page+"begin", "")
	require.Equal(t, 200, res.StatusCode)
	res, body = f.request(t, "POST", page+"approve", "assertion="+url.QueryEscape(person.answer(t, []byte(options), "http://"+f.host)))
	require.Equal(t, 200, res.StatusCode, body)
	list, err = ListPasskeys(f.dir)
	require.NoError(t, err)
	active := 0
	for _, k := range list {
		if !k.Pending {
			active++
		}
	}
	require.Equal(t, 2, active)
	// An approval asked while two were waiting does not hold once the set
	// changed: begin with two pending, a third arrives, then answer.
	third := newSoftPasskey(t, "third-passkey")
	res, options = f.request(t, "POST", "/enrolments/"+secondID+"/begin", "")
	require.Equal(t, 200, res.StatusCode)
	f.enrolThroughTheLink(t, third)
	res, body = f.request(t, "POST", "/enrolments/"+secondID+"/approve", "assertion="+url.QueryEscape(person.answer(t, []byte(options), "http://"+f.host)))
	require.Equal(t, 403, res.StatusCode, body)
	require.Contains(t, body, "changed")
}
