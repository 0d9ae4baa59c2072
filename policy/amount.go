package policy

// Amount rules. One grammar, ASCII only: ^[0-9]+(\.[0-9]+)?$ — digits, then
// optionally a dot and more digits. Everything else is refused with a reason:
// signs, exponents, hex, separators, a leading or trailing dot, whitespace and
// non-ASCII digits. Fractional digits beyond the asset's decimals are accepted
// only when they are all zeros ("1.500000" for a 2-decimal asset is 1.5; "1.501"
// is refused), so "0.05" and "0.050" denote the same base-unit value. Values are
// *big.Int base units and must fit in a uint256. No floats anywhere.

import (
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"
)

// MaxAmountLength is the longest amount string ParseAmount reads, in bytes.
// A uint256 has 78 decimal digits, so 100 leaves room for a fractional part.
const MaxAmountLength = 100

// AmountGrammar is the regular expression every accepted amount matches. It is
// documentation and a test oracle; the parser itself does not use regexp.
const AmountGrammar = `^[0-9]+(\.[0-9]+)?$`

// amountExample is appended to reasons so each error names the expected form.
const amountExample = "expected a decimal number like 0.05"

// maxUint256 is 2^256-1, the largest value an EVM amount can hold.
var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// AmountError reports an amount string that was refused. Input is the received
// text made safe to print (truncated, non-printable and non-ASCII characters
// escaped, no surrounding quotes); Reason says what is wrong and what is
// expected.
type AmountError struct {
	Input  string
	Reason string
}

// Error returns `amount "<input>": <reason>`.
func (e *AmountError) Error() string {
	return `amount "` + e.Input + `": ` + e.Reason
}

func amountError(s, reason string) *AmountError {
	return &AmountError{Input: display(s, maxDisplay), Reason: reason}
}

// ParseAmount converts a decimal string in human units ("0.05") to base units
// for an asset with the given number of decimals (0.05 with 6 decimals is
// 50000). Zero is accepted; callers that must refuse it use
// ParsePositiveAmount. Errors are *AmountError.
func ParseAmount(s string, decimals uint8) (*big.Int, error) {
	intPart, frac, err := splitAmount(s)
	if err != nil {
		return nil, err
	}
	if len(frac) > int(decimals) {
		if strings.Trim(frac[decimals:], "0") != "" {
			if decimals == 0 {
				return nil, amountError(s, "has a fractional part but this asset has no decimals; write a whole number")
			}
			return nil, amountError(s, fmt.Sprintf("has %d decimal places but this asset has only %d",
				len(strings.TrimRight(frac, "0")), decimals))
		}
		frac = frac[:decimals]
	}
	digits := intPart + frac + strings.Repeat("0", int(decimals)-len(frac))
	v, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		// Unreachable: splitAmount admits ASCII digits only.
		return nil, amountError(s, "is not a decimal number; "+amountExample)
	}
	if v.Cmp(maxUint256) > 0 {
		return nil, amountError(s, "is too large: in base units it exceeds 2^256-1, the largest amount a token can hold")
	}
	return v, nil
}

// ParsePositiveAmount is ParseAmount that also refuses zero ("0", "0.000").
func ParsePositiveAmount(s string, decimals uint8) (*big.Int, error) {
	v, err := ParseAmount(s, decimals)
	if err != nil {
		return nil, err
	}
	if v.Sign() == 0 {
		return nil, amountError(s, "is zero; expected an amount greater than 0")
	}
	return v, nil
}

// FormatAmount writes base units v as a plain decimal string in human units:
// no exponent, no trailing fractional zeros, no trailing dot ("0.05", "1",
// "1000000.000001"). A negative v gets a leading "-"; a nil v is "<nil>".
// For any v ≥ 0 that fits in a uint256, ParseAmount(FormatAmount(v, d), d)
// returns v.
func FormatAmount(v *big.Int, decimals uint8) string {
	if v == nil {
		return "<nil>"
	}
	digits := new(big.Int).Abs(v).String()
	if d := int(decimals); d > 0 {
		if len(digits) <= d {
			digits = strings.Repeat("0", d-len(digits)+1) + digits
		}
		whole, frac := digits[:len(digits)-d], strings.TrimRight(digits[len(digits)-d:], "0")
		digits = whole
		if frac != "" {
			digits += "." + frac
		}
	}
	if v.Sign() < 0 {
		return "-" + digits
	}
	return digits
}

// checkAmountSyntax reports whether s matches the amount grammar, without
// regard to any asset's decimals or to magnitude. Cap lists use it to refuse a
// malformed amount before the asset's decimals are known.
func checkAmountSyntax(s string) error {
	_, _, err := splitAmount(s)
	return err
}

// splitAmount checks s against the grammar and returns its integer and
// fractional digit strings. The checks run in a fixed order so that each
// refused input gets the most specific reason.
func splitAmount(s string) (intPart, frac string, err error) {
	if s == "" {
		return "", "", amountError(s, "is empty; "+amountExample)
	}
	if len(s) > MaxAmountLength {
		return "", "", amountError(s, fmt.Sprintf("is %d characters long; the limit is %d", len(s), MaxAmountLength))
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return "", "", amountError(s, fmt.Sprintf("contains the byte 0x%02x, which is not valid UTF-8; %s", c, amountExample))
			}
			return "", "", amountError(s, fmt.Sprintf("contains the non-ASCII character U+%04X; write the ASCII digits 0-9 only", r))
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			return "", "", amountError(s, "contains whitespace; "+amountExample+" with no spaces")
		case c < ' ' || c == 0x7f:
			return "", "", amountError(s, "contains a control character; "+amountExample)
		}
		i++
	}
	switch {
	case s[0] == '+' || s[0] == '-':
		return "", "", amountError(s, "has a sign; write the amount without + or -, "+amountExample)
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		return "", "", amountError(s, "is hexadecimal; "+amountExample)
	case onlyBytes(s, "0123456789._") && strings.Contains(s, "_"):
		return "", "", amountError(s, "contains an underscore; write the digits without separators, "+amountExample)
	case onlyBytes(s, "0123456789.,") && strings.Contains(s, ","):
		return "", "", amountError(s, "contains a comma; use a dot for the decimal point and no thousands separators, "+amountExample)
	case onlyBytes(s, "0123456789.eE+-") && strings.ContainsAny(s, "eE"):
		return "", "", amountError(s, "uses exponent notation; write all the digits, like 1000000 instead of 1e6")
	}
	dot := strings.IndexByte(s, '.')
	switch {
	case dot == 0:
		return "", "", amountError(s, "starts with a dot; write a leading zero, like 0.5")
	case dot == len(s)-1:
		return "", "", amountError(s, "ends with a dot; write digits after the dot or drop it, like 5 or 5.0")
	case dot < 0:
		intPart = s
	default:
		intPart, frac = s[:dot], s[dot+1:]
	}
	if !onlyBytes(intPart, "0123456789") || !onlyBytes(frac, "0123456789") {
		return "", "", amountError(s, "is not a decimal number; "+amountExample)
	}
	return intPart, frac, nil
}

// onlyBytes reports whether every byte of s is one of the ASCII bytes in set.
func onlyBytes(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}
