package approval

// Managing the enrolled passkeys from the service's own terminal (root):
// list them, remove one. Rules: a passkey is named by its credential id,
// base64url, or a prefix of it of at least minIDPrefix characters that names
// exactly one; the file is rewritten through a temporary file with its owner
// and mode kept; the running service reads the file again at every begin and
// answer, so that a removed passkey approves nothing from then on.

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/walletgate/walletgate/atomicfile"
)

// minIDPrefix is the shortest prefix of a credential id that names it.
const minIDPrefix = 8

// PasskeyInfo is an enrolled passkey as `walletgate service status` lists it.
type PasskeyInfo struct {
	ID        string // the credential id, base64url
	AAGUID    string // the authenticator's model, hex ("" when it gave none)
	SignCount uint32 // the signature counter last seen
	// Pending: enrolled after the first, awaiting an enrolled passkey's
	// approval on the page (it approves nothing yet); Created is when.
	Pending bool
	Created time.Time
}

func infoOf(c webauthn.Credential) PasskeyInfo {
	info := PasskeyInfo{ID: base64.RawURLEncoding.EncodeToString(c.ID), SignCount: c.Authenticator.SignCount}
	if a := c.Authenticator.AAGUID; len(a) > 0 && strings.Trim(hex.EncodeToString(a), "0") != "" {
		info.AAGUID = hex.EncodeToString(a)
	}
	return info
}

// ListPasskeys lists the passkeys enrolled in dir (none: an empty list).
func ListPasskeys(dir string) ([]PasskeyInfo, error) {
	s, err := readStore(dir)
	if err != nil {
		return nil, err
	}
	var out []PasskeyInfo
	for _, c := range s.Credentials {
		out = append(out, infoOf(c))
	}
	for _, pp := range s.Pending {
		info := infoOf(pp.Credential)
		info.Pending, info.Created = true, pp.Created
		out = append(out, info)
	}
	return out, nil
}

// RemovePasskey removes the passkey named id (see the rules) from dir and
// returns it.
func RemovePasskey(dir, id string) (PasskeyInfo, error) {
	s, err := readStore(dir)
	if err != nil {
		return PasskeyInfo{}, err
	}
	if len(id) < minIDPrefix {
		return PasskeyInfo{}, fmt.Errorf("passkey %q: give its id as `walletgate service status` lists it (at least %d characters)", clip(id, 20), minIDPrefix)
	}
	found := -1
	for i, c := range s.Credentials {
		if strings.HasPrefix(infoOf(c).ID, id) {
			if found >= 0 {
				return PasskeyInfo{}, fmt.Errorf("passkey %q names more than one enrolled passkey: give more of its id", clip(id, 40))
			}
			found = i
		}
	}
	var gone PasskeyInfo
	for i, pp := range s.Pending {
		if strings.HasPrefix(infoOf(pp.Credential).ID, id) {
			if found >= 0 {
				return PasskeyInfo{}, fmt.Errorf("passkey %q names more than one enrolled passkey: give more of its id", clip(id, 40))
			}
			found = len(s.Credentials) + i
		}
	}
	switch {
	case found < 0:
		return PasskeyInfo{}, fmt.Errorf("no enrolled passkey has the id %q (`walletgate service status` lists them)", clip(id, 40))
	case found < len(s.Credentials):
		gone = infoOf(s.Credentials[found])
		s.Credentials = append(s.Credentials[:found:found], s.Credentials[found+1:]...)
	default:
		i := found - len(s.Credentials)
		gone = infoOf(s.Pending[i].Credential)
		gone.Pending, gone.Created = true, s.Pending[i].Created
		s.Pending = append(s.Pending[:i:i], s.Pending[i+1:]...)
	}
	path := filepath.Join(dir, passkeysFile)
	uid, gid := -1, -1
	if fi, err := os.Stat(path); err == nil {
		uid, gid = fileOwner(fi)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return PasskeyInfo{}, err
	}
	if err := atomicfile.Write(path, b, 0o600, uid, gid); err != nil {
		return PasskeyInfo{}, fmt.Errorf("remove passkey: %w", err)
	}
	return gone, nil
}

// readStore reads dir's credentials file; none yet is an empty store.
func readStore(dir string) (passkeyStore, error) {
	var s passkeyStore
	path := filepath.Join(dir, passkeysFile)
	b, err := readBounded(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return s, nil
	case err != nil:
		return s, fmt.Errorf("passkeys: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil || len(s.UserID) == 0 {
		return s, fmt.Errorf("passkeys: %s is not a credentials file: %v", path, err)
	}
	return s, nil
}
