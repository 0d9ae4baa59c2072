package policy

// Cap list rules. A cap list is comma-separated ASSET=AMOUNT items, like
// "ETH=0.01,USDC=25,0xdAC17F958D2ee523a2206206994597C13D831ec7=25". ASCII
// spaces and tabs around an item and around its '=' are ignored; an empty item
// (",," or a trailing comma) is refused. ASSET is ETH (any case), a token
// symbol of 1-16 ASCII letters and digits (upper-cased), or a token address
// (0x + 40 hex digits, EIP-55 if mixed case; the zero address is refused
// because it stands for ETH), or USD (any case): the sum of every asset's
// outflows valued at its Chainlink price (pricefeeds.go). AMOUNT is a decimal in the amount grammar; zero
// is a valid cap meaning "nothing may be spent". AMOUNT may also be
// "unlimited" (any case), which says explicitly that the asset has no limit
// in that list's window (see capwindows.go: every capped asset has every
// window). An asset may appear once.
//
// With several chains (WALLETGATE_CHAIN_ID lists more than one), an item may
// start with a chain and a colon: "base:USDC=25" or "8453:USDC=25" (a chain
// id, or a name ParseNetwork knows). An item without one is the default
// chain's (the first listed). An asset may appear once per chain.
//
// ParseCapList checks syntax only. ResolveCapList then binds each asset to an
// address on one chain and converts the amount to base units.

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// NativeAsset is the key under which ResolveCapList stores the ETH (native
// coin) cap: the zero address, which no ERC-20 token can have. Never reassign
// it.
var NativeAsset = common.Address{}

// NativeSymbol is the canonical asset name of the chain's native coin in cap
// lists and tool arguments.
const NativeSymbol = "ETH"

// nativeDecimals is the number of decimals of ETH (wei per ether = 10^18).
const nativeDecimals = 18

// MaxCapEntries is the most items a cap list may have.
const MaxCapEntries = 64

// maxSymbolLength is the longest token symbol a cap list accepts.
const maxSymbolLength = 16

// capListExample is appended to reasons so each error names the expected form.
const capListExample = "expected comma-separated ASSET=AMOUNT items, like ETH=0.01,USDC=25"

// CapEntry is one syntactically valid cap list item. Asset is "ETH", an
// upper-cased token symbol, or a token address in EIP-55 form; Amount is the
// decimal string as written (trimmed), not yet checked against the asset's
// decimals.
type CapEntry struct {
	Asset  string
	Amount string
	Chain  uint64 // the chain the item names ("base:USDC=25"); 0: unprefixed, the default chain's
}

// CapListError reports a cap list, or one item of it, that was refused. Item
// is the offending item made safe to print (empty when the problem is the list
// as a whole); Reason says what is wrong and what is expected; Err is the
// underlying cause, if any (an *AmountError, an *AddressError, or the error
// of ResolveCapList's decimalsOf). Err is not part of the message, because an
// error from a node can carry the RPC URL.
type CapListError struct {
	Item   string
	Reason string
	Err    error
}

// Error returns `cap list item "<item>": <reason>` or `cap list: <reason>`.
func (e *CapListError) Error() string {
	if e.Item == "" {
		return "cap list: " + e.Reason
	}
	return `cap list item "` + e.Item + `": ` + e.Reason
}

// Unwrap returns the underlying amount or address error, if any.
func (e *CapListError) Unwrap() error { return e.Err }

func capItemError(item, reason string, err error) *CapListError {
	return &CapListError{Item: display(item, maxDisplay), Reason: reason, Err: err}
}

// ParseCapList parses a cap list (see the rules at the top of this file). The
// empty string is the empty list. Errors are *CapListError.
func ParseCapList(s string) ([]CapEntry, error) {
	if s == "" {
		return nil, nil
	}
	items := strings.Split(s, ",")
	if len(items) > MaxCapEntries {
		return nil, &CapListError{Reason: fmt.Sprintf("has %d items; the limit is %d", len(items), MaxCapEntries)}
	}
	entries := make([]CapEntry, 0, len(items))
	seen := make(map[string]bool, len(items))
	for _, raw := range items {
		item := trimSpaceTab(raw)
		if item == "" {
			return nil, capItemError(raw, "is empty (two commas in a row, or a comma at an end); "+capListExample, nil)
		}
		asset, amount, ok := strings.Cut(item, "=")
		if !ok {
			return nil, capItemError(item, "has no '='; "+capListExample, nil)
		}
		asset, amount = trimSpaceTab(asset), trimSpaceTab(amount)
		var chainID uint64
		if prefix, rest, ok := strings.Cut(asset, ":"); ok {
			id, known := ParseNetwork(trimSpaceTab(prefix))
			if !known {
				return nil, capItemError(item, fmt.Sprintf("names the chain \"%s\", which is neither a chain id nor a known name (%s); write CHAIN:ASSET=AMOUNT, like base:USDC=25",
					display(trimSpaceTab(prefix), maxDisplay), strings.Join(NetworkNames(), ", ")), nil)
			}
			chainID, asset = id, trimSpaceTab(rest)
		}
		canonical, err := parseCapAsset(item, asset)
		if err != nil {
			return nil, err
		}
		if asciiEqualFold(amount, Unlimited) {
			amount = Unlimited
		} else if err := checkAmountSyntax(amount); err != nil {
			return nil, capItemError(item, "has a bad amount: "+err.(*AmountError).Reason, err)
		}
		key := fmt.Sprintf("%d:%s", chainID, canonical)
		if seen[key] {
			return nil, capItemError(item, fmt.Sprintf("repeats the asset %s; give each asset one cap", canonical), nil)
		}
		seen[key] = true
		entries = append(entries, CapEntry{Asset: canonical, Amount: amount, Chain: chainID})
	}
	return entries, nil
}

// parseCapAsset returns the canonical form of a cap list asset.
func parseCapAsset(item, asset string) (string, error) {
	switch {
	case asset == "":
		return "", capItemError(item, "has no asset before '='; "+capListExample, nil)
	case asciiEqualFold(asset, NativeSymbol):
		return NativeSymbol, nil
	case asciiEqualFold(asset, USDSymbol):
		return USDSymbol, nil // every outflow valued in USD (pricefeeds.go)
	case len(asset) >= 2 && (asset[:2] == "0x" || asset[:2] == "0X"):
		a, err := ParseAddress(asset)
		if err != nil {
			return "", capItemError(item, "has a bad token address: "+err.(*AddressError).Reason, err)
		}
		if a == NativeAsset {
			return "", capItemError(item, "names the zero address, which is not a token; write ETH for the native coin", nil)
		}
		if a == USDAsset {
			return "", capItemError(item, "names "+USDAsset.Hex()+", which stands for USD here; write USD", nil)
		}
		return a.Hex(), nil
	case len(asset) <= maxSymbolLength && onlyBytes(asset, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"):
		return asciiUpper(asset), nil
	default:
		return "", capItemError(item, fmt.Sprintf("has the asset \"%s\"; expected ETH, a token symbol of 1-%d ASCII letters and digits, or a token address (0x + 40 hex digits)",
			display(asset, maxDisplay), maxSymbolLength), nil)
	}
}

// ResolveCapList binds parsed cap entries to assets on a chain and converts
// their amounts to base units. ETH is keyed by NativeAsset with 18 decimals; a
// symbol must be a known token of the chain (KnownTokens); an address uses the
// known-token table's decimals when it is listed there and otherwise asks
// decimalsOf (typically an on-chain decimals() read; nil refuses unknown
// addresses). Two entries that resolve to the same address are refused. Zero
// caps are kept; an entry whose amount is Unlimited is left out of the map
// (an asset absent from a window's caps is unlimited there). Errors are
// *CapListError.
func ResolveCapList(entries []CapEntry, chainID uint64, decimalsOf func(common.Address) (uint8, error)) (map[common.Address]*big.Int, error) {
	out, _, err := resolveCapList(entries, chainID, decimalsOf)
	return out, err
}

// resolveCapList is ResolveCapList that also returns, by address, the
// entries that named each asset (limited or Unlimited), for the window rules.
func resolveCapList(entries []CapEntry, chainID uint64, decimalsOf func(common.Address) (uint8, error)) (map[common.Address]*big.Int, map[common.Address]CapEntry, error) {
	out := make(map[common.Address]*big.Int, len(entries))
	named := make(map[common.Address]CapEntry, len(entries))
	for _, e := range entries {
		item := e.Asset + "=" + e.Amount
		var (
			addr     common.Address
			decimals uint8
		)
		switch {
		case e.Asset == NativeSymbol:
			addr, decimals = NativeAsset, nativeDecimals
		case e.Asset == USDSymbol:
			addr, decimals = USDAsset, USDDecimals
		case strings.HasPrefix(e.Asset, "0x"):
			a, err := ParseAddress(e.Asset)
			if err != nil {
				return nil, nil, capItemError(item, "has a bad token address: "+err.(*AddressError).Reason, err)
			}
			if a == NativeAsset {
				return nil, nil, capItemError(item, "names the zero address, which is not a token; write ETH for the native coin", nil)
			}
			addr = a
			if t, ok := TokenByAddress(chainID, a); ok {
				decimals = t.Decimals
			} else {
				if decimalsOf == nil {
					return nil, nil, capItemError(item, fmt.Sprintf("names token %s, whose decimals are not known here", a.Hex()), nil)
				}
				d, err := decimalsOf(a)
				if err != nil {
					// err stays out of the message: a node error can carry the RPC URL.
					return nil, nil, capItemError(item, fmt.Sprintf("names token %s, whose decimals could not be read", a.Hex()), err)
				}
				decimals = d
			}
		default:
			t, ok := TokenBySymbol(chainID, e.Asset)
			if !ok {
				return nil, nil, capItemError(item, unknownSymbolReason(e.Asset, chainID), nil)
			}
			addr, decimals = t.Address, t.Decimals
		}
		if _, dup := named[addr]; dup {
			return nil, nil, capItemError(item, fmt.Sprintf("caps asset %s a second time (a symbol and its address name the same token); give each asset one cap", assetLabel(addr, chainID)), nil)
		}
		named[addr] = e
		if e.Amount == Unlimited {
			continue
		}
		v, err := ParseAmount(e.Amount, decimals)
		if err != nil {
			return nil, nil, capItemError(item, "has a bad amount: "+err.(*AmountError).Reason, err)
		}
		out[addr] = v
	}
	return out, named, nil
}

// unknownSymbolReason explains an unknown symbol: which symbols the chain
// knows, and that a token address works for any token.
func unknownSymbolReason(symbol string, chainID uint64) string {
	n := LookupNetwork(chainID)
	known := KnownTokens(chainID)
	var b strings.Builder
	fmt.Fprintf(&b, "names the token symbol %s, which is not a known token on %s (chain %d); ", display(symbol, maxDisplay), n.Name, chainID)
	if len(known) == 0 {
		b.WriteString("no token symbols are known on this chain")
	} else {
		syms := make([]string, len(known))
		for i, t := range known {
			syms[i] = t.Symbol
		}
		b.WriteString("known symbols are ETH, " + strings.Join(syms, ", "))
	}
	b.WriteString("; for any other token write its address instead, like 0x…=25")
	return b.String()
}

// assetLabel names an address for messages: ETH, a known symbol with its
// address, or the address.
func assetLabel(a common.Address, chainID uint64) string {
	if a == NativeAsset {
		return NativeSymbol
	}
	if a == USDAsset {
		return USDSymbol
	}
	if t, ok := TokenByAddress(chainID, a); ok {
		return t.Symbol + " (" + a.Hex() + ")"
	}
	return a.Hex()
}

// trimSpaceTab removes ASCII spaces and tabs at both ends of s.
func trimSpaceTab(s string) string {
	return strings.Trim(s, " \t")
}
