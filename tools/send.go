package tools

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

const sendTool = "wallet_send"

// sendIntent is wallet_send's validated, resolved arguments.
type sendIntent struct {
	from   common.Address
	to     common.Address
	asset  asset
	amount *big.Int // base units, > 0
	// toChecksummed: the recipient was given in mixed case, so its EIP-55
	// checksum was checked; display only, not part of the fingerprint.
	toChecksummed bool
}

func (i sendIntent) key() any {
	return struct {
		To     string `json:"to"`
		Asset  string `json:"asset"`
		Amount string `json:"amount"`
	}{i.to.Hex(), assetID(i.asset), i.amount.String()}
}

// sendArgs are wallet_send's arguments.
type sendArgs struct {
	To     *string `json:"to" pattern:"address" jsonschema:"the recipient (EIP-55 checksum when mixed case)"`
	Amount *string `json:"amount" pattern:"amount" jsonschema:"a decimal string in the asset's units, e.g. \"0.05\"; {capped}"`
	Asset  *string `json:"asset,omitempty" jsonschema:"ETH (default), a symbol (e.g. USDT) or a token address"`
	confirmArg
	networkArg
}

func (s *Server) sendTool() Tool {
	return writeTool(s, sendTool, "Send ETH or a token", "Send ETH or an ERC-20 token. "+twoCalls,
		twoStep(s, sendTool, s.parseSend, s.previewSend, nil))
}

// parseSend validates and resolves wallet_send's arguments.
func (s *Server) parseSend(ctx context.Context, a sendArgs) (sendIntent, *Refusal) {
	toRaw := deref(a.To)
	to, err := policy.ParseRecipient(toRaw)
	if err != nil {
		return sendIntent{}, refuse(CodeBadAddress, "to %s: %s. Give the recipient as 0x followed by 40 hex digits, all lower case or with a correct EIP-55 checksum.", displayInput(toRaw), reason(err))
	}
	as := ethAsset
	if a.Asset != nil {
		var ref *Refusal
		if as, ref = s.resolveAsset(ctx, *a.Asset); ref != nil {
			return sendIntent{}, ref
		}
	}
	if a.Amount == nil {
		return sendIntent{}, refuse(CodeBadAmount, "amount is missing. Give a decimal string such as \"0.05\".")
	}
	amtRaw := *a.Amount
	amount, err := policy.ParsePositiveAmount(amtRaw, as.Decimals)
	if err != nil {
		return sendIntent{}, refuse(CodeBadAmount, "amount %s: %s. Give a decimal string greater than zero with at most %d decimals for %s, e.g. \"0.05\".", displayInput(amtRaw), reason(err), as.Decimals, as.Symbol)
	}
	return sendIntent{from: s.address, to: to, asset: as, amount: amount, toChecksummed: strings.ToLower(toRaw) != toRaw && strings.ToUpper(toRaw[2:]) != toRaw[2:]}, nil
}

// sendPreview is the preview's facts.
type sendPreview struct {
	Action       string `json:"action" enum:"send" jsonschema:"what the confirm does"`
	Summary      string `json:"summary" jsonschema:"the send in one line"`
	Asset        string `json:"asset" jsonschema:"ETH or the token address"`
	Symbol       string `json:"symbol" jsonschema:"the asset's symbol: from walletgate's table when known, else as the contract reports it (untrusted)"`
	Decimals     uint8  `json:"decimals" jsonschema:"the asset's decimals"`
	KnownToken   bool   `json:"known_token" jsonschema:"ETH, or a token in walletgate's known-token table; false means UNVERIFIED"`
	Amount       string `json:"amount" pattern:"amount" jsonschema:"the amount, in the asset's units"`
	AmountBase   string `json:"amount_base" pattern:"base" jsonschema:"the amount in base units"`
	From         string `json:"from" pattern:"address" jsonschema:"the wallet"`
	To           string `json:"to" pattern:"address" jsonschema:"the recipient"`
	ToIsContract bool   `json:"to_is_contract" jsonschema:"whether the recipient has contract code"`
	previewCommon
	Nonce          uint64       `json:"nonce" jsonschema:"the nonce the transaction is expected to take (re-read at confirm)"`
	GasLimit       uint64       `json:"gas_limit" jsonschema:"its gas limit"`
	MaxFeePerGas   string       `json:"max_fee_per_gas_gwei" pattern:"amount" jsonschema:"its max fee per gas, in gwei"`
	MaxFee         string       `json:"max_fee" pattern:"amount" jsonschema:"the most it can cost in network fees, in ETH"`
	ExpectedEffect []effectJSON `json:"expected_effects" jsonschema:"what the receipt must show for the confirm to report success"`

	asset         asset    // what is sent
	amount        *big.Int // in base units
	toChecksummed bool     // the recipient's EIP-55 checksum was checked
}

// previewResult is its tool's preview result.
type previewResult = previewOf[sendPreview]

func (s *Server) previewSend(ctx context.Context, in sendIntent) (*mcp.CallToolResult, *Refusal) {
	if ref := s.engine.Allowed(&in.to); ref != nil {
		return nil, ref
	}
	call := chain.Call{From: in.from, To: in.to, Value: in.amount}
	if !in.asset.Native {
		call = chain.Call{From: in.from, To: in.asset.Address, Data: chain.TransferData(in.to, in.amount)}
	}
	spendOf := func(c chain.Call) caps.Spend {
		sp := caps.Spend{policy.NativeAsset: c.MaxCost()}
		if !in.asset.Native {
			sp[in.asset.Address] = new(big.Int).Set(in.amount)
		}
		return sp
	}
	b, ref := s.engine.Build(ctx, call, in.to, spendOf, nil)
	if ref != nil {
		return nil, ref
	}
	call, st, ret, spend := b.Call, b.State, b.Ret, b.Spend
	// A token that returns false instead of reverting failed all the same.
	if !in.asset.Native && len(ret) == 32 && new(big.Int).SetBytes(ret).Sign() == 0 {
		return nil, refuse(CodeSimulationReverted, "the token contract answered the simulated transfer with false (it would not move the tokens). Nothing was signed or sent.")
	}
	code := b.Code
	effect := engine.Effect{Asset: in.asset, From: in.from, To: in.to, Amount: in.amount}
	to := in.to
	p := &engine.Plan{Tool: sendTool, Legs: []engine.Leg{{Label: "send", Call: call}}, Spend: spend, USD: b.USD, Recipient: &to, Effects: []engine.Effect{effect}}

	pv := sendPreview{
		Action: "send", Asset: assetID(in.asset), Symbol: in.asset.Symbol, Decimals: in.asset.Decimals, KnownToken: in.asset.Known,
		Amount: policy.FormatAmount(in.amount, in.asset.Decimals), AmountBase: in.amount.String(),
		From: in.from.Hex(), To: in.to.Hex(), ToIsContract: len(code) > 0,
		Nonce: st.Nonce, GasLimit: call.Gas, MaxFeePerGas: policy.FormatAmount(call.MaxFee, 9),
		MaxFee:         policy.FormatAmount(call.MaxFees(), 18), // an OP-stack chain's L1 fee bound included
		previewCommon:  s.newPreviewCommon(spend, fmt.Sprintf("succeeds against block %d", st.Head.Number)),
		ExpectedEffect: []effectJSON{effectOf(effect.Moved())},
		asset:          in.asset, amount: in.amount, toChecksummed: in.toChecksummed,
	}
	pv.fee = call.MaxFees()
	pv.Summary = fmt.Sprintf("Send %s %s to %s on %s (%s)", pv.Amount, marked(pv.Symbol, pv.KnownToken), pv.To, pv.Network, pv.NetworkMarker)
	if pv.ToIsContract {
		pv.Warnings = append(pv.Warnings, "the recipient is a contract: make sure it can receive "+pv.Symbol+" (tokens sent to a contract that cannot move them are lost)")
	}
	if !in.asset.Native && in.to == in.asset.Address {
		pv.Warnings = append(pv.Warnings, "the recipient is the token contract itself: tokens sent there are usually lost")
	}
	if !in.asset.Known {
		pv.Warnings = append(pv.Warnings, unverifiedWarning)
	}
	if in.to == in.from {
		pv.Warnings = append(pv.Warnings, "the recipient is this wallet itself")
	}

	return present(s, sendTool, in, p, pv)
}

func (pv sendPreview) title() string {
	return "Send " + pv.Amount + " " + pv.Symbol + " to " + shortAddress(pv.To)
}

func (pv sendPreview) body(b *strings.Builder) {
	fmt.Fprintf(b, "Action:    send %s %s (%s base units, %d decimals)\n", pv.Amount, marked(pv.Symbol, pv.KnownToken), pv.AmountBase, pv.Decimals)
	if pv.Asset == policy.NativeSymbol {
		b.WriteString("Asset:     ETH (native)\n")
	} else {
		known := "known token"
		if !pv.KnownToken {
			known = "UNVERIFIED token"
		}
		fmt.Fprintf(b, "Asset:     %s, contract %s (%s)\n", pv.Symbol, pv.Asset, known)
	}
	fmt.Fprintf(b, "From:      %s (this wallet)\n", pv.From)
	kind := "an account without code"
	if pv.ToIsContract {
		kind = "a CONTRACT"
	}
	fmt.Fprintf(b, "To:        %s (%s)\n", pv.To, kind)
	fmt.Fprintf(b, "Max fee:   %s ETH (gas limit %d × max %s gwei), paid in ETH; the actual fee is usually lower\n", pv.MaxFee, pv.GasLimit, pv.MaxFeePerGas)
}

func (pv sendPreview) page(d *approval.Display) {
	d.Action = "Send " + pv.Amount + " " + pv.Symbol
	party := approval.Party{Role: "Recipient", Address: pv.To, Kind: "an account without code",
		Checksum: "given in one case: there was no checksum to catch a typo, compare every character"}
	switch {
	case pv.To == pv.From:
		party.Kind = "this wallet itself"
	case pv.ToIsContract:
		party.Kind = "a CONTRACT (it has code)"
	}
	if pv.toChecksummed {
		party.Checksum = "its EIP-55 checksum matched"
	}
	d.Party = &party
	d.Amounts = []approval.Amount{shownAmount("Send", pv.amount, pv.Decimals, shownAsset(pv.asset), nearest)}
	if !pv.KnownToken {
		d.Unverified = []string{pv.Symbol + " (" + pv.Asset + ")"}
	}
}
