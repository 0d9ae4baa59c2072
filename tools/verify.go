package tools

import (
	"context"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/policy"
)

var txHashRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(hashPattern) })

// Transaction statuses reported by wallet_verify_tx.
const (
	statusSuccess  = "success"
	statusReverted = "reverted"
	statusPending  = "pending"   // known to the node, not mined yet
	statusNotFound = "not_found" // unknown to the node
)

// transferJSON is one decoded ERC-20 transfer.
type transferJSON struct {
	Token  string `json:"token" pattern:"address" jsonschema:"token contract"`
	Symbol string `json:"symbol" jsonschema:"symbol: from walletgate's table when known, else as the contract reports it (untrusted)"`
	Known  bool   `json:"known" jsonschema:"the token is in walletgate's known-token table"`
	From   string `json:"from" pattern:"address" jsonschema:"sender"`
	To     string `json:"to" pattern:"address" jsonschema:"recipient"`
	Amount string `json:"amount" jsonschema:"amount in token units, a decimal string (empty when the token's decimals could not be read)"`
	Raw    string `json:"raw" pattern:"base" jsonschema:"amount in base units, a decimal integer string"`
}

// verifyResult is wallet_verify_tx's structured result.
type verifyResult struct {
	Found         bool           `json:"found" jsonschema:"whether the node knows the transaction"`
	Tx            string         `json:"tx" pattern:"hash" jsonschema:"the transaction hash"`
	Status        string         `json:"status" enum:"success|reverted|pending|not_found" jsonschema:"success, reverted, pending (not mined yet) or not_found"`
	Block         *uint64        `json:"block,omitempty" jsonschema:"the block that includes it"`
	Confirmations uint64         `json:"confirmations" jsonschema:"blocks from its block to the head, inclusive; 0 while not mined"`
	From          string         `json:"from,omitempty" pattern:"address" jsonschema:"sender"`
	To            string         `json:"to,omitempty" pattern:"address" jsonschema:"recipient (the contract called, for a token transfer)"`
	Value         string         `json:"value,omitempty" pattern:"amount" jsonschema:"ETH sent, a decimal string"`
	Fee           string         `json:"fee,omitempty" pattern:"amount" jsonschema:"ETH paid in fees, a decimal string"`
	Transfers     []transferJSON `json:"transfers" jsonschema:"ERC-20 Transfer events the transaction emitted"`
	Approvals     []transferJSON `json:"approvals" jsonschema:"ERC-20 Approval events the transaction emitted: from is the owner, to the spender, amount the allowance set"`
	ToMatch       *bool          `json:"to_match,omitempty" jsonschema:"given expected_to: whether the transaction succeeded and paid that recipient in the asset"`
	AmountMatch   *bool          `json:"amount_match,omitempty" jsonschema:"given expected_amount: whether the transaction succeeded and moved exactly that amount of the asset (to expected_to, if given)"`
}

// verifyArgs are wallet_verify_tx's arguments.
type verifyArgs struct {
	Tx             *string `json:"tx" pattern:"hash" jsonschema:"the transaction hash"`
	ExpectedTo     *string `json:"expected_to,omitempty" pattern:"address" jsonschema:"the recipient you expect (for a token, the Transfer's)"`
	ExpectedAmount *string `json:"expected_amount,omitempty" pattern:"amount" jsonschema:"the amount you expect, in the asset's units"`
	Asset          *string `json:"asset,omitempty" jsonschema:"what expected_amount counts: ETH (default), a symbol or a token address"`
	networkArg
}

func (s *Server) verifyTool() Tool {
	return readTool(s, "wallet_verify_tx", "Verify a transaction",
		"A transaction by hash: status, confirmations, from, to, value, fee, token transfers; optionally checked against an expected recipient and amount.",
		s.verify)
}

func (s *Server) verify(ctx context.Context, a verifyArgs) (*mcp.CallToolResult, *Refusal) {
	raw := deref(a.Tx)
	if !txHashRE().MatchString(raw) {
		return nil, refuse(CodeBadTx, "tx %s is not a transaction hash. Give 0x followed by 64 hex digits, as returned by a confirmed send.", displayInput(raw))
	}
	hash := common.HexToHash(raw)

	var expTo *common.Address
	if a.ExpectedTo != nil {
		v := *a.ExpectedTo
		addr, err := policy.ParseAddress(v)
		if err != nil {
			return nil, refuse(CodeBadAddress, "expected_to %s: %s. Give 0x followed by 40 hex digits (all lower case, or with a correct EIP-55 checksum).", displayInput(v), reason(err))
		}
		expTo = &addr
	}
	as := ethAsset
	if a.Asset != nil {
		v := *a.Asset
		var ref *Refusal
		if as, ref = s.resolveAsset(ctx, v); ref != nil {
			return nil, ref
		}
	}
	var expAmount *big.Int
	if a.ExpectedAmount != nil {
		v := *a.ExpectedAmount
		amt, err := policy.ParseAmount(v, as.Decimals)
		if err != nil {
			return nil, refuse(CodeBadAmount, "expected_amount %s: %s. Give a decimal string with at most %d decimals for %s, e.g. \"1.5\".", displayInput(v), reason(err), as.Decimals, as.Symbol)
		}
		expAmount = amt
	}

	info, err := s.chain.Transaction(ctx, hash)
	if err != nil {
		return nil, rpcRefusal(err)
	}
	r := verifyResult{Found: info.Found, Tx: hash.Hex(), Transfers: []transferJSON{}, Approvals: []transferJSON{}}
	switch {
	case !info.Found:
		r.Status = statusNotFound
	case !info.Mined:
		r.Status = statusPending
	case info.Status == 1:
		r.Status = statusSuccess
	default:
		r.Status = statusReverted
	}
	if info.Found {
		r.From = info.From.Hex()
		if info.To != nil {
			r.To = info.To.Hex()
		}
		r.Value = policy.FormatAmount(info.Value, 18)
	}
	if info.Mined {
		b := info.Block
		r.Block = &b
		r.Confirmations = info.Confirmations
		r.Fee = policy.FormatAmount(info.Fee(), 18)
		for _, t := range info.Transfers {
			r.Transfers = append(r.Transfers, s.transferJSON(ctx, t))
		}
		for _, a := range info.Approvals {
			r.Approvals = append(r.Approvals, s.transferJSON(ctx, chain.Transfer{Token: a.Token, From: a.Owner, To: a.Spender, Amount: a.Amount}))
		}
	}
	succeeded := r.Status == statusSuccess
	if expTo != nil {
		m := succeeded && paysTo(info, as, *expTo)
		r.ToMatch = &m
	}
	if expAmount != nil {
		m := succeeded && movesAmount(info, as, expTo, expAmount)
		r.AmountMatch = &m
	}
	return success(r, verifyText(r, as)), nil
}

// paysTo reports whether the transaction paid to in the asset: for ETH, its
// recipient; for a token, any Transfer of that token to to.
func paysTo(info *chain.TxInfo, as asset, to common.Address) bool {
	if as.Native {
		return info.To != nil && *info.To == to
	}
	for _, t := range info.Transfers {
		if t.Token == as.Address && t.To == to {
			return true
		}
	}
	return false
}

// movesAmount reports whether the transaction moved exactly amount of the
// asset (to to, when given).
func movesAmount(info *chain.TxInfo, as asset, to *common.Address, amount *big.Int) bool {
	if as.Native {
		return info.Value.Cmp(amount) == 0 && (to == nil || (info.To != nil && *info.To == *to))
	}
	for _, t := range info.Transfers {
		if t.Token == as.Address && t.Amount.Cmp(amount) == 0 && (to == nil || t.To == *to) {
			return true
		}
	}
	return false
}

// transferJSON renders a transfer; an unknown token's metadata is read from
// the chain (and shown inert), and if it cannot be, the raw amount still is.
func (s *Server) transferJSON(ctx context.Context, t chain.Transfer) transferJSON {
	out := transferJSON{Token: t.Token.Hex(), From: t.From.Hex(), To: t.To.Hex(), Raw: t.Amount.String()}
	if known, ok := policy.TokenByAddress(s.chainID, t.Token); ok {
		out.Symbol, out.Known = known.Symbol, true
		out.Amount = policy.FormatAmount(t.Amount, known.Decimals)
		return out
	}
	meta, err := s.chain.TokenMeta(ctx, t.Token)
	if err != nil {
		out.Symbol = "?"
		out.Amount = t.Amount.String() + " base units (decimals unknown)"
		return out
	}
	out.Symbol = inert(meta.Symbol, maxSymbolDisplay)
	out.Amount = policy.FormatAmount(t.Amount, meta.Decimals)
	return out
}

func verifyText(r verifyResult, as asset) string {
	var b strings.Builder
	switch r.Status {
	case statusNotFound:
		fmt.Fprintf(&b, "Transaction %s is not known to the node (never sent, dropped, or on another chain).", r.Tx)
	case statusPending:
		fmt.Fprintf(&b, "Transaction %s is pending: sent by %s, not mined yet.", r.Tx, r.From)
	default:
		word := "SUCCEEDED"
		if r.Status == statusReverted {
			word = "REVERTED (nothing moved but the fee)"
		}
		fmt.Fprintf(&b, "Transaction %s %s in block %d (%d confirmations).\n", r.Tx, word, *r.Block, r.Confirmations)
		fmt.Fprintf(&b, "From %s to %s, value %s ETH, fee %s ETH.", r.From, r.To, r.Value, r.Fee)
		for _, t := range r.Transfers {
			fmt.Fprintf(&b, "\nTransfer: %s %s (%s) from %s to %s", t.Amount, marked(t.Symbol, t.Known), t.Token, t.From, t.To)
		}
		for _, a := range r.Approvals {
			fmt.Fprintf(&b, "\nApproval: %s lets %s move %s %s (%s)", a.From, a.To, a.Amount, marked(a.Symbol, a.Known), a.Token)
		}
	}
	if r.ToMatch != nil {
		fmt.Fprintf(&b, "\nRecipient matches expected (%s): %t", marked(as.Symbol, as.Native || as.Known), *r.ToMatch)
	}
	if r.AmountMatch != nil {
		fmt.Fprintf(&b, "\nAmount matches expected (%s): %t", marked(as.Symbol, as.Native || as.Known), *r.AmountMatch)
	}
	return b.String()
}
