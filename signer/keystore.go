package signer

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
)

// Size limits for the secret files behind FromKeystore. A geth v3 keystore is about 500 bytes.
const (
	maxKeystoreSize = 64 << 10
	maxPasswordSize = 4 << 10
)

// FromKeystore returns a Signer for the key in the go-ethereum keystore file (v3, or v1) at
// keystorePath, decrypted with the password held in the file at passwordFile. Both files must
// pass CheckPrivateFile; the keystore may be at most 64 KiB and the password file 4 KiB. The
// password is the password file's content with one trailing "\n" or "\r\n" removed and no
// other trimming; an empty password is refused. If the keystore names an address, it must be
// the decrypted key's. Errors never contain the password, key material or file contents.
func FromKeystore(keystorePath, passwordFile string) (Signer, error) {
	keyJSON, err := readPrivateFile("keystore file", keystorePath, maxKeystoreSize)
	if err != nil {
		return nil, err
	}
	pw, err := readPrivateFile("password file", passwordFile, maxPasswordSize)
	if err != nil {
		return nil, err
	}
	defer clear(pw)
	password := stripOneNewline(pw)
	if len(password) == 0 {
		return nil, fmt.Errorf("password file %s is empty; it must hold the keystore's password (one trailing newline is ignored)", passwordFile)
	}

	var header struct {
		Address string `json:"address"`
	}
	if err := json.Unmarshal(keyJSON, &header); err != nil {
		// json's error can quote content; say only what kind of file is expected.
		return nil, fmt.Errorf("keystore file %s is not a JSON keystore; it must be a go-ethereum v3 keystore file", keystorePath)
	}
	key, err := keystore.DecryptKey(keyJSON, string(password))
	if errors.Is(err, keystore.ErrDecrypt) {
		return nil, fmt.Errorf("password file %s does not decrypt keystore file %s: the password is wrong for this keystore", passwordFile, keystorePath)
	}
	if err != nil {
		// DecryptKey's errors can quote fields of the file; keep them out.
		return nil, fmt.Errorf("keystore file %s could not be decrypted: it is not a usable go-ethereum v3 keystore (unsupported version, cipher or KDF, or a corrupt field)", keystorePath)
	}
	s := newKeySigner(KindKeystore, key.PrivateKey)
	// A keystore's address field is what operators read to know which account they run;
	// a file whose field names another account is corrupt or misleading.
	if header.Address != "" {
		named, err := parseKeystoreAddress(header.Address)
		if err != nil {
			return nil, fmt.Errorf("keystore file %s has an address field that is not 40 hex digits; refusing a corrupt keystore", keystorePath)
		}
		if named != s.addr {
			return nil, fmt.Errorf("keystore file %s names address %s, but its key is for %s; refusing a keystore whose address field does not match its key",
				keystorePath, named.Hex(), s.addr.Hex())
		}
	}
	return s, nil
}

// parseKeystoreAddress parses a keystore's address field: 40 hex digits, 0x prefix optional.
func parseKeystoreAddress(s string) (common.Address, error) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	var a common.Address
	if len(s) != 2*common.AddressLength {
		return a, errors.New("bad address length")
	}
	if err := a.UnmarshalText([]byte("0x" + s)); err != nil {
		return a, err
	}
	return a, nil
}
