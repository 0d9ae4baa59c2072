package signer

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/crypto"
)

// maxKeyFileSize bounds the read of a key file; a valid one is at most 68 bytes.
const maxKeyFileSize = 1 << 10

// keyFileForm is the accepted key file format, quoted in errors.
const keyFileForm = "64 hex digits, optionally prefixed with 0x and followed by one newline"

// FromKeyFile returns a Signer for the secp256k1 private key held in the file at path:
// 64 hex digits, optionally 0x-prefixed, optionally followed by one "\n" or "\r\n", nothing
// else. The file must pass CheckPrivateFile and be at most 1 KiB. Errors never echo the
// file's content.
func FromKeyFile(path string) (Signer, error) {
	data, err := readPrivateFile("key file", path, maxKeyFileSize)
	if err != nil {
		return nil, err
	}
	defer clear(data)
	key, err := parseHexKey(data)
	if err != nil {
		return nil, fmt.Errorf("key file %s %w", path, err)
	}
	return newKeySigner(KindKeyFile, key), nil
}

// parseHexKey parses a key file's content. Its errors complete the sentence "key file <path> …"
// and describe the content only by its shape, never by its bytes.
func parseHexKey(data []byte) (*ecdsa.PrivateKey, error) {
	body := stripOneNewline(data)
	if len(body) >= 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		body = body[2:]
	}
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return nil, errors.New("is empty; it must hold " + keyFileForm)
	case bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")):
		return nil, errors.New("holds JSON (a keystore?), not a hex private key; a keystore is used together with a password file")
	case len(body) != 2*32:
		return nil, fmt.Errorf("holds %d characters besides an optional 0x prefix and one trailing newline; it must hold %s", len(body), keyFileForm)
	}
	var raw [32]byte
	defer clear(raw[:])
	if _, err := hex.Decode(raw[:], body); err != nil {
		// hex's error quotes the offending byte; do not pass it on.
		return nil, errors.New("holds a character that is not a hex digit (or extra whitespace); it must hold " + keyFileForm)
	}
	key, err := crypto.ToECDSA(raw[:])
	if err != nil {
		return nil, errors.New("does not hold a valid secp256k1 private key (it is zero or not below the curve order)")
	}
	return key, nil
}

// stripOneNewline removes one trailing "\r\n" or "\n", nothing else.
func stripOneNewline(b []byte) []byte {
	if bytes.HasSuffix(b, []byte("\r\n")) {
		return b[:len(b)-2]
	}
	if bytes.HasSuffix(b, []byte("\n")) {
		return b[:len(b)-1]
	}
	return b
}
