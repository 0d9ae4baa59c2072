package policy

// Pure decisions about writes: whether one may proceed at all (writes on,
// the network allowed, every recipient on the allow-list), whether an
// allowance is too large, and whether a token alone may confirm it in human
// mode. Rules of this file: inputs in, a typed decision out, no state; a nil
// decision allows; the caller renders the words from the decision's fields.

import (
	"bytes"
	"math/big"
	"sort"

	"github.com/ethereum/go-ethereum/common"
)

// Codes of the write decisions.
const (
	CodeWritesDisabled      = "WRITES_DISABLED"
	CodeMainnetNotAllowed   = "MAINNET_NOT_ALLOWED"
	CodeRecipientNotAllowed = "RECIPIENT_NOT_ALLOWED"
	CodeApprovalTooLarge    = "APPROVAL_TOO_LARGE"
)

// WritesOff says why write tools are not offered, or "": no key (watch-only),
// the operator's read-only choice, human mode without its approval page, or
// a confirmation mode walletgate does not know.
func WritesOff(cfg Config, hasKey, hasApprovals bool) string {
	switch {
	case !hasKey:
		return "no key is configured (watch-only); set WALLETGATE_KEYSTORE and WALLETGATE_PASSWORD_FILE, or WALLETGATE_KEY_FILE"
	case cfg.Tools == "read":
		return "the operator set WALLETGATE_TOOLS=read"
	case cfg.Confirm == ConfirmHuman && !hasApprovals:
		return "confirmation mode human needs the approval page or the approvals socket, and neither could be started (see walletgate's log); writes stay off rather than fall back to token confirmation"
	case cfg.Confirm != "" && cfg.Confirm != DefaultConfirm && cfg.Confirm != ConfirmElicit && cfg.Confirm != ConfirmHuman:
		return "confirmation mode " + cfg.Confirm + " is not known; writes stay off rather than fall back to token confirmation (set WALLETGATE_CONFIRM=token, human or elicit)"
	}
	return ""
}

// WriteRules are the operator's rules every write obeys, at preview, at
// confirm and on its effects.
type WriteRules struct {
	Off          string // why writes are off (WritesOff), or ""
	Network      Network
	AllowMainnet bool
	AllowTo      []common.Address // nil: any recipient
	AllowPayTo   PayeesAllowed    // zero: any x402 payee
}

// WriteDenial is why a write may not proceed: Code, and the facts its words
// need (Off for WRITES_DISABLED, the network for MAINNET_NOT_ALLOWED, To and
// the list for RECIPIENT_NOT_ALLOWED).
type WriteDenial struct {
	Code    string
	Off     string
	Network Network
	To      common.Address
	AllowTo []common.Address
}

// WriteAllowed decides whether a write giving value to to (nil: to no one
// but the wallet, as a swap's output or a revoke) may proceed under r; nil
// allows it.
func WriteAllowed(r WriteRules, to *common.Address) *WriteDenial {
	if r.Off != "" {
		return &WriteDenial{Code: CodeWritesDisabled, Off: r.Off}
	}
	if r.Network.ValueBearing() && !r.AllowMainnet {
		return &WriteDenial{Code: CodeMainnetNotAllowed, Network: r.Network}
	}
	if len(r.AllowTo) > 0 && to != nil {
		for _, a := range r.AllowTo {
			if a == *to {
				return nil
			}
		}
		return &WriteDenial{Code: CodeRecipientNotAllowed, To: *to, AllowTo: r.AllowTo}
	}
	return nil
}

// UnlimitedAllowance is the allowance walletgate calls unlimited: 2^255 and
// above (the common "max uint256" approvals and their near relatives).
var UnlimitedAllowance = new(big.Int).Lsh(big.NewInt(1), 255)

// ExposureDenial is why an allowance may not be granted: it is unlimited,
// or above Limit, the token's per-transaction cap.
type ExposureDenial struct {
	Code      string // CodeApprovalTooLarge
	Unlimited bool
	Amount    *big.Int
	Limit     *big.Int // the per-transaction cap (not Unlimited)
}

// CheckExposure decides whether an allowance of amount may be granted when
// the token's per-transaction cap is perTx (nil: none applies): never
// unlimited, never above what walletgate would send in one transaction.
func CheckExposure(amount, perTx *big.Int) *ExposureDenial {
	if amount.Cmp(UnlimitedAllowance) >= 0 {
		return &ExposureDenial{Code: CodeApprovalTooLarge, Unlimited: true, Amount: amount}
	}
	if perTx != nil && amount.Cmp(perTx) > 0 {
		return &ExposureDenial{Code: CodeApprovalTooLarge, Amount: amount, Limit: perTx}
	}
	return nil
}

// Why a tier decision went the way it did.
const (
	TierNone         = ""              // no threshold is configured: the person approves every write
	TierUnknownTyped = "unknown_typed" // typed data of an unknown kind: above every threshold
	TierUncapped     = "uncapped"      // no cap applies to Asset: above every threshold
	TierNotNamed     = "not_named"     // the threshold does not name Asset
	TierAbove        = "above"         // Spend alone is above Limit
	TierAboveDay     = "above_day"     // Used plus Spend is above Limit
	TierWithin       = "within"        // every asset stays at or below its threshold: a token suffices
	TierDayUnknown   = "day_unknown"   // what token-confirmed writes spent today could not be read: the person approves
)

// TierInput is what the tier decision needs.
type TierInput struct {
	// HumanAbove is WALLETGATE_HUMAN_ABOVE resolved; nil: no tiers.
	HumanAbove map[common.Address]*big.Int
	// UnknownTyped: the write signs typed data of an unknown kind.
	UnknownTyped bool
	// Spend is what the write spends, per asset (ETH: value plus the
	// maximum fees, as the caps count it).
	Spend map[common.Address]*big.Int
	// Day is what writes confirmed by a token alone spent in the rolling
	// day, per asset.
	Day map[common.Address]*big.Int
	// Uncapped are the assets no cap applies to (the operator allowed
	// uncapped tokens).
	Uncapped map[common.Address]bool
}

// TierWithinAsset is one asset of a write a token may confirm: Total (the
// day's token-confirmed spend with this write) is at or below Limit.
type TierWithinAsset struct {
	Asset        common.Address
	Total, Limit *big.Int
}

// TierDecision is Tier's answer: ByToken when a token suffices; otherwise
// Why, with the asset and amounts it concerns.
type TierDecision struct {
	ByToken bool
	Why     string
	Asset   common.Address
	Spend   *big.Int
	Used    *big.Int
	Limit   *big.Int
	Within  []TierWithinAsset // TierWithin: each asset, in Tier's order
}

// Tier decides, in human mode, whether a token may confirm a write
// (WALLETGATE_HUMAN_ABOVE): only when every asset it spends is capped and
// named by the threshold, and what it spends with what token-confirmed
// writes spent in the rolling day stays at or below it. Assets are judged
// ETH first, then tokens by address.
func Tier(in TierInput) TierDecision {
	if in.HumanAbove == nil {
		return TierDecision{Why: TierNone}
	}
	if in.UnknownTyped {
		return TierDecision{Why: TierUnknownTyped}
	}
	var d TierDecision
	for _, a := range tierOrder(in.Spend) {
		spend := in.Spend[a]
		used := in.Day[a]
		if used == nil {
			used = new(big.Int)
		}
		if in.Uncapped[a] {
			return TierDecision{Why: TierUncapped, Asset: a, Spend: spend, Used: used}
		}
		limit, ok := in.HumanAbove[a]
		if !ok {
			return TierDecision{Why: TierNotNamed, Asset: a, Spend: spend, Used: used}
		}
		if spend.Cmp(limit) > 0 {
			return TierDecision{Why: TierAbove, Asset: a, Spend: spend, Used: used, Limit: limit}
		}
		total := new(big.Int).Add(used, spend)
		if total.Cmp(limit) > 0 {
			return TierDecision{Why: TierAboveDay, Asset: a, Spend: spend, Used: used, Limit: limit}
		}
		d.Within = append(d.Within, TierWithinAsset{Asset: a, Total: total, Limit: limit})
	}
	d.ByToken, d.Why = true, TierWithin
	return d
}

// tierOrder is ETH first, then tokens by address.
func tierOrder(spend map[common.Address]*big.Int) []common.Address {
	out := make([]common.Address, 0, len(spend))
	for a := range spend {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i] == NativeAsset) != (out[j] == NativeAsset) {
			return out[i] == NativeAsset
		}
		return bytes.Compare(out[i].Bytes(), out[j].Bytes()) < 0
	})
	return out
}
