package policy

// Address rules: exactly "0x" (lowercase x) followed by 40 hex digits, nothing
// before or after. All-lowercase and all-uppercase hex carry no checksum and are
// accepted as written; mixed case is an EIP-55 checksum and must be correct.
// common.HexToAddress is never used on input: it silently crops long input and
// stops at a bad character.

import (
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
)

// addressExample is appended to reasons so each error names the expected form.
const addressExample = "expected 0x followed by 40 hex digits"

// AddressError reports an address string that was refused. Input is the
// received text made safe to print (truncated, non-printable and non-ASCII
// characters escaped, no surrounding quotes); Reason says what is wrong and
// what is expected.
type AddressError struct {
	Input  string
	Reason string
}

// Error returns `address "<input>": <reason>`.
func (e *AddressError) Error() string {
	return `address "` + e.Input + `": ` + e.Reason
}

func addressError(s, reason string) *AddressError {
	return &AddressError{Input: display(s, maxDisplay), Reason: reason}
}

// ParseAddress parses an EVM address written as 0x + 40 hex digits. A
// mixed-case address must match its EIP-55 checksum; the zero address is
// accepted (see ParseRecipient). Errors are *AddressError.
func ParseAddress(s string) (common.Address, error) {
	if s == "" {
		return common.Address{}, addressError(s, "is empty; "+addressExample)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return common.Address{}, addressError(s, fmt.Sprintf("contains the byte 0x%02x, which is not valid UTF-8; %s", c, addressExample))
			}
			return common.Address{}, addressError(s, fmt.Sprintf("contains the non-ASCII character U+%04X; %s", r, addressExample))
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			return common.Address{}, addressError(s, "contains whitespace; "+addressExample+" and nothing else")
		case c < ' ' || c == 0x7f:
			return common.Address{}, addressError(s, "contains a control character; "+addressExample)
		}
	}
	if len(s) >= 2 && s[:2] == "0X" {
		return common.Address{}, addressError(s, "starts with 0X; write the prefix as lowercase 0x")
	}
	if len(s) < 2 || s[:2] != "0x" {
		return common.Address{}, addressError(s, "does not start with 0x; "+addressExample)
	}
	digits := s[2:]
	if len(digits) != 2*common.AddressLength {
		return common.Address{}, addressError(s, fmt.Sprintf("has %d characters after 0x; %s", len(digits), addressExample))
	}
	hasUpper, hasLower := false, false
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'f':
			hasLower = true
		case c >= 'A' && c <= 'F':
			hasUpper = true
		default:
			return common.Address{}, addressError(s, fmt.Sprintf("contains %q, which is not a hex digit; %s", c, addressExample))
		}
	}
	var a common.Address
	if _, err := hex.Decode(a[:], []byte(digits)); err != nil {
		// Unreachable: every byte was checked above.
		return common.Address{}, addressError(s, addressExample)
	}
	if hasUpper && hasLower && a.Hex()[2:] != digits {
		return common.Address{}, addressError(s, "has a wrong EIP-55 checksum: its mix of upper- and lower-case letters "+
			"does not match the address, so it may contain a typo; copy it again from its source")
	}
	return a, nil
}

// ParseRecipient is ParseAddress that also refuses the zero address, to which
// sent funds are lost for good.
func ParseRecipient(s string) (common.Address, error) {
	a, err := ParseAddress(s)
	if err != nil {
		return common.Address{}, err
	}
	if a == (common.Address{}) {
		return common.Address{}, addressError(s, "is the zero address; funds sent there can never be recovered")
	}
	return a, nil
}
