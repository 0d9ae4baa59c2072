package tools

// Amounts as a person reads them on the approval page and in the terminal:
// a few significant digits, rounded in the direction that keeps the words
// around them true ("at most" rounds up, "at least" rounds down, a plain
// amount to the nearest with "≈"), the exact value kept beside it. Display
// only: nothing here is ever parsed back into an amount that moves money.

import (
	"math/big"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/policy"
)

// readableDigits is how many significant digits a rounded amount keeps
// (every digit before the decimal point is always kept).
const readableDigits = 5

// rounding is the direction a rounded amount goes.
type rounding int

const (
	nearest   rounding = iota // "≈ 25.123"
	roundUp                   // for an upper bound: "at most"
	roundDown                 // for a lower bound: "at least", what is left
)

// readableDecimal rounds d to readableDigits significant digits in
// direction mode and groups its thousands; exact reports whether nothing was
// lost.
func readableDecimal(d decimal.Decimal, mode rounding) (text string, exact bool) {
	places := int32(0)
	abs := d.Abs()
	if abs.GreaterThanOrEqual(decimal.NewFromInt(1)) {
		intDigits := int32(len(abs.Truncate(0).String()))
		places = max(readableDigits-intDigits, 0)
	} else if !abs.IsZero() {
		// 0.000123…: the first significant digit is at -floor(log10).
		s := abs.String()
		frac := s[strings.IndexByte(s, '.')+1:]
		zeros := int32(len(frac) - len(strings.TrimLeft(frac, "0")))
		places = zeros + readableDigits
	}
	var r decimal.Decimal
	switch mode {
	case roundUp:
		r = d.RoundCeil(places)
	case roundDown:
		r = d.RoundFloor(places)
	default:
		r = d.Round(places)
	}
	return groupThousands(r.String()), r.Equal(d)
}

// groupThousands writes 1234567.5 as 1,234,567.5.
func groupThousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		whole, frac = s[:i], s[i:]
	}
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String() + frac
}

// readableAmount is base units v of an asset with decimals, rounded.
func readableAmount(v *big.Int, decimals uint8, mode rounding) (string, bool) {
	return readableDecimal(decimal.NewFromBigInt(v, -int32(decimals)), mode)
}

// shownAmount is a sum for the person: label, the rounded text (with the
// word its rounding needs) and the exact value with its base units. symbol
// is how the asset is named (see shownAsset).
func shownAmount(label string, v *big.Int, decimals uint8, symbol string, mode rounding) approval.Amount {
	text, exact := readableAmount(v, decimals, mode)
	prefix := ""
	switch {
	case mode == roundUp:
		prefix = "at most "
	case mode == roundDown:
		prefix = "at least "
	case !exact:
		prefix = "≈ "
	}
	a := approval.Amount{Label: label, Rounded: prefix + text + " " + symbol}
	if !exact {
		// Nothing to unfold when nothing was rounded away.
		a.Exact = policy.FormatAmount(v, decimals) + " " + symbol + " (" + v.String() + " base units)"
	}
	return a
}

// feeAmount is the most the network fees can be, in wei.
func feeAmount(wei *big.Int) *approval.Amount {
	a := shownAmount("Network fee", wei, 18, "ETH", roundUp)
	a.Exact = policy.FormatAmount(wei, 18) + " ETH; the actual fee is usually lower"
	return &a
}

// readableLeft is a cap's remaining amount, rounded down so that it never
// promises more room than there is.
func readableLeft(formatted string) string {
	d, err := decimal.NewFromString(formatted)
	if err != nil {
		return formatted // walletgate's own formatting; shown as it is
	}
	text, _ := readableDecimal(d, roundDown)
	return text
}

// shortAddress is an address for a one-line title: 0x252F…9A43. The full
// address is always shown beside it.
func shortAddress(hex string) string {
	if len(hex) != 42 {
		return hex
	}
	return hex[:6] + "…" + hex[38:]
}
