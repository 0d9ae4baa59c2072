package caps

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/walletgate/walletgate/policy"
)

// Stable error codes, for callers to branch on and to show to tools.
const (
	// CodeExceeded: the spend would take an asset over its cap in a window.
	CodeExceeded = "CAP_EXCEEDED"
	// CodeUncapped: the spend includes an asset with no cap in any window,
	// and the ledger does not allow uncapped assets.
	CodeUncapped = "UNCAPPED_TOKEN"
	// CodeNoLedger: the ledger is the zero value (or nil), so nothing may be
	// spent.
	CodeNoLedger = "LEDGER_UNAVAILABLE"
	// CodeInvalidSpend: the spend has a negative amount, which is a caller
	// bug; counting it would free cap.
	CodeInvalidSpend = "INVALID_SPEND"
)

// Error reports a spend the ledger refused. Amounts are base units of Asset;
// the caller renders them in human units with the asset's own decimals. The
// fields a code does not use are zero (nil for amounts):
//
//   - CodeExceeded sets every field.
//   - CodeUncapped and CodeInvalidSpend set Asset and Requested.
//   - CodeNoLedger sets Code, and Cause when the day store failed.
//
// The amounts are copies; changing them does not touch the ledger.
type Error struct {
	Code   string
	Asset  common.Address
	Window Window
	// Limit is the cap of Asset in Window.
	Limit *big.Int
	// Used is what Window already holds of Asset (settled plus reserved),
	// without this spend; always 0 for PerTx.
	Used *big.Int
	// Remaining is Limit - Used, never below 0: the most this spend could
	// have asked for.
	Remaining *big.Int
	// Requested is what this spend asked for of Asset.
	Requested *big.Int
	// Fits is the most of Asset a spend could ask for now and pass every
	// window: the least left in any window that caps Asset (for PerTx, its
	// cap). For ETH it counts the network fee too: the value that fits is
	// Fits minus the request's max fee. CodeExceeded only.
	Fits *big.Int
	// Cause is why the ledger is unavailable (CodeNoLedger from a DayStore).
	Cause error
}

// Error returns a plain sentence in base units, like "spend of 101 base units
// of ETH exceeds its per day cap of 100 base units: 40 already used (settled
// or reserved), 60 remaining".
func (e *Error) Error() string {
	switch e.Code {
	case CodeExceeded:
		if e.Window == PerTx {
			return fmt.Sprintf("spend of %s base units of %s exceeds its %s cap of %s base units",
				e.Requested, assetName(e.Asset), e.Window, e.Limit)
		}
		return fmt.Sprintf("spend of %s base units of %s exceeds its %s cap of %s base units: %s already used (settled or reserved), %s remaining",
			e.Requested, assetName(e.Asset), e.Window, e.Limit, e.Used, e.Remaining)
	case CodeUncapped:
		return fmt.Sprintf("spend of %s base units of %s is refused: it has no cap in any window, and uncapped assets are not allowed",
			e.Requested, assetName(e.Asset))
	case CodeInvalidSpend:
		return fmt.Sprintf("spend of %s base units of %s is refused: an amount must not be negative",
			e.Requested, assetName(e.Asset))
	case CodeNoLedger:
		if e.Cause != nil {
			return "spend refused: the spend journal is unavailable (" + e.Cause.Error() + "), so nothing may be spent"
		}
		return "spend refused: no spend ledger is configured, so nothing may be spent"
	default:
		return "spend refused: " + e.Code
	}
}

// assetName names an asset in messages: "ETH" or "token 0x…" (EIP-55).
// Symbols are the caller's business.
func assetName(a common.Address) string {
	if a == policy.NativeAsset {
		return policy.NativeSymbol
	}
	return "token " + a.Hex()
}

func errNoLedger() error { return &Error{Code: CodeNoLedger} }
