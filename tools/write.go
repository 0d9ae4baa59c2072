package tools

// The write tools' MCP side: a write tool parses its arguments into an
// intent, builds a plan on the engine and renders the preview; a confirm
// goes to engine.Confirm, whose typed Outcome is rendered here. The sequence
// itself, and every decision about money, is the engine's.

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// Refusal codes of the write path (besides the gate's and caps' own).
const (
	CodeWritesDisabled      = engine.CodeWritesDisabled
	CodeMainnetNotAllowed   = engine.CodeMainnetNotAllowed
	CodeRecipientNotAllowed = engine.CodeRecipientNotAllowed
	CodeSimulationReverted  = engine.CodeSimulationReverted
	CodeInsufficientFunds   = engine.CodeInsufficientFunds
	CodeFeesRose            = engine.CodeFeesRose
	CodeSendFailed          = engine.CodeSendFailed
	CodeReverted            = engine.CodeReverted
	CodeEffectMismatch      = engine.CodeEffectMismatch
	CodeChainChanged        = engine.CodeChainChanged
	CodeFeeTooHigh          = engine.CodeFeeTooHigh
)

// Confirm result statuses.
const (
	statusConfirmed      = string(engine.StatusConfirmed)
	statusRevertedW      = string(engine.StatusReverted)
	statusPendingW       = string(engine.StatusPending)
	statusEffectMismatch = string(engine.StatusEffectMismatch)
	// statusMismatch: included and succeeded, but the previewed effects
	// were not seen. Never "confirmed": a model reading the status alone
	// must not take it for the previewed outcome.
	statusMismatch = statusEffectMismatch
)

// maxPending bounds outstanding confirmation tokens.
const maxPending = 64

// effectJSON is one verified (or expected) on-chain effect.
type effectJSON struct {
	Kind   string `json:"kind" enum:"eth_transfer|erc20_transfer|swap_in|swap_out|erc20_approval" jsonschema:"what moved: ETH, an ERC-20 transfer, what a swap paid in and paid out, or an allowance the wallet set (to may then move amount)"`
	Asset  string `json:"asset" jsonschema:"ETH or the token address"`
	Symbol string `json:"symbol" jsonschema:"the asset's symbol"`
	From   string `json:"from" pattern:"address" jsonschema:"sender (for an allowance: the wallet)"`
	To     string `json:"to" pattern:"address" jsonschema:"recipient (for an allowance: the spender)"`
	Amount string `json:"amount" jsonschema:"amount in the asset's units, a decimal string"`
	Raw    string `json:"raw" pattern:"base" jsonschema:"amount in base units, a decimal integer string"`
	known  bool   // ETH or a table token: the text shows the symbol unmarked
}

// effectOf renders an engine movement.
func effectOf(m engine.Moved) effectJSON {
	return effectJSON{Kind: m.Kind, Asset: m.Asset, Symbol: m.Symbol, From: m.From, To: m.To, Amount: m.Amount, Raw: m.Raw, known: m.Known}
}

// effectsOf renders engine movements; never nil.
func effectsOf(ms []engine.Moved) []effectJSON {
	out := make([]effectJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, effectOf(m))
	}
	return out
}

// capAfter is one cap as it would stand after the previewed spend.
type capAfter struct {
	Asset          string `json:"asset" jsonschema:"ETH or the token address"`
	Symbol         string `json:"symbol" jsonschema:"the asset's symbol"`
	Window         string `json:"window" enum:"per transaction|per session|per day" jsonschema:"the window"`
	Limit          string `json:"limit" pattern:"amount" jsonschema:"the cap"`
	UsedAfter      string `json:"used_after" pattern:"amount" jsonschema:"what this window would have used after this write (ETH: value plus max fees)"`
	RemainingAfter string `json:"remaining_after" pattern:"amount" jsonschema:"what would remain in this window after it"`
}

// capsAfter lists each capped window of each asset in spend as it would
// stand after it, and the assets no cap applies to.
func (s *Server) capsAfter(spend caps.Spend) ([]capAfter, []string) {
	var out []capAfter
	var uncapped []string
	for _, a := range sortedAssets(spend) {
		as := s.assetInfo(a)
		if !s.ledger.Capped(a) {
			uncapped = append(uncapped, as.Symbol+" ("+assetID(as)+")")
			continue
		}
		for _, u := range s.ledger.Usage(a) {
			if u.Limit == nil {
				continue
			}
			used := new(big.Int).Add(u.Used, spend[a])
			rem := new(big.Int).Sub(u.Limit, used)
			if rem.Sign() < 0 {
				rem.SetInt64(0)
			}
			out = append(out, capAfter{Asset: assetID(as), Symbol: as.Symbol, Window: u.Window.String(),
				Limit:          policy.FormatAmount(u.Limit, as.Decimals),
				UsedAfter:      policy.FormatAmount(used, as.Decimals),
				RemainingAfter: policy.FormatAmount(rem, as.Decimals)})
		}
	}
	return out, uncapped
}

// sortedAssets is ETH first, then tokens by address.
func sortedAssets(spend caps.Spend) []common.Address {
	var out []common.Address
	if _, ok := spend[policy.NativeAsset]; ok {
		out = append(out, policy.NativeAsset)
	}
	var toks []common.Address
	for a := range spend {
		if a != policy.NativeAsset {
			toks = append(toks, a)
		}
	}
	for i := 1; i < len(toks); i++ {
		for j := i; j > 0 && strings.Compare(toks[j].Hex(), toks[j-1].Hex()) < 0; j-- {
			toks[j], toks[j-1] = toks[j-1], toks[j]
		}
	}
	return append(out, toks...)
}

// confirmResult is a confirm's structured result.
type confirmResult struct {
	Status        string           `json:"status" enum:"confirmed|effect_mismatch|reverted|pending|incomplete" jsonschema:"confirmed (included, effects verified), effect_mismatch (included and succeeded, but more left the wallet or less reached it than the preview showed: inspect it, do not repeat it), reverted (included, failed; the fee was spent), pending (sent, inclusion not seen yet: check it with wallet_verify_tx, do not send it again) or incomplete (some transactions of this write were included, then it stopped: legs says which, changes what moved)"`
	TxHash        string           `json:"tx_hash" pattern:"hash" jsonschema:"the transaction hash (of the last transaction sent, when a write sends several)"`
	Block         *uint64          `json:"block,omitempty" jsonschema:"the block that includes it (absent while pending)"`
	Confirmations uint64           `json:"confirmations" jsonschema:"blocks from its block to the head, inclusive; 0 while pending"`
	GasUsed       uint64           `json:"gas_used" jsonschema:"gas the transaction used; 0 while pending"`
	Fee           string           `json:"fee" jsonschema:"network fees of every included transaction of this write, in ETH, a decimal string"`
	Nonce         uint64           `json:"nonce" jsonschema:"the transaction's nonce"`
	Effects       []effectJSON     `json:"effects" jsonschema:"on-chain effects verified from the receipts (effect_mismatch, incomplete: what the receipts show)"`
	Legs          []legOutcomeJSON `json:"legs" jsonschema:"every transaction of this write, in the order tried (undo transactions last), and what became of it"`
	Changes       []measuredJSON   `json:"changes" jsonschema:"what moved, per asset, measured from the wallet's balances just before and at each included transaction's block, beside the preview; the caps settled to it"`
	Caps          []capUsage       `json:"caps" jsonschema:"each capped window of ETH and of every asset this write moved, as it stands after this write (a pending one still counts what it reserved)"`
	Message       string           `json:"message" jsonschema:"what happened, in words"`
}

// legOutcomeJSON is one transaction of a write and its fate.
type legOutcomeJSON struct {
	Label  string `json:"label" jsonschema:"what the transaction does (send, approve, swap, call 1, …)"`
	Status string `json:"status" enum:"included|reverted|pending|not_sent" jsonschema:"included (and succeeded), reverted, pending (may have reached the node; not seen included) or not_sent (never broadcast)"`
	TxHash string `json:"tx_hash,omitempty" pattern:"hash" jsonschema:"its hash, once signed"`
	Block  uint64 `json:"block,omitempty" jsonschema:"the block that includes it"`
	Code   string `json:"code,omitempty" jsonschema:"not_sent: the refusal's stable code"`
	Reason string `json:"reason,omitempty" jsonschema:"not_sent or pending: why"`
	Undo   bool   `json:"undo" jsonschema:"it takes back what an earlier transaction left standing (an approval)"`
}

// measuredJSON is what moved of one asset, measured, beside the preview.
type measuredJSON struct {
	Asset        string `json:"asset" jsonschema:"ETH or the token address"`
	Symbol       string `json:"symbol" jsonschema:"the asset's symbol"`
	Out          string `json:"out" pattern:"amount" jsonschema:"what left the wallet (ETH: without network fees), in the asset's units"`
	In           string `json:"in" pattern:"amount" jsonschema:"what reached the wallet"`
	PreviewedOut string `json:"previewed_out" pattern:"amount" jsonschema:"the most the preview showed leaving"`
	PreviewedIn  string `json:"previewed_in" pattern:"amount" jsonschema:"the least the preview showed arriving"`
	Measured     bool   `json:"measured" jsonschema:"the balances were read; false: the node did not answer them, and out counts the larger of the logs and the preview"`
}

// twoStep is every write tool's handler: parse and resolve the arguments,
// then either preview (no confirm) or confirm on the engine and render its
// outcome: a transaction's by renderOutcome (render nil), a signature's by
// render. A confirm whose arguments do not even parse still spends its
// token: tokens are consumed on every outcome.
func twoStep[A confirmer, I keyed](s *Server, tool string, parse func(context.Context, A) (I, *Refusal),
	preview func(context.Context, I) (*mcp.CallToolResult, *Refusal), render func(I, *engine.Outcome) *mcp.CallToolResult) typedHandler[A] {
	return func(ctx context.Context, a A) (*mcp.CallToolResult, *Refusal) {
		token, confirming := a.confirmToken()
		in, ref := parse(ctx, a)
		if ref != nil {
			if confirming {
				ref.Message += s.spendConfirm(tool, token)
			}
			return nil, ref
		}
		if !confirming {
			return preview(ctx, in)
		}
		if res, ref := s.askFirst(ctx, token, tool, s.canonical(in)); res != nil || ref != nil {
			return res, ref // 2026-07-28: the person is asked between this call and its retry
		}
		out, ref, code := s.confirmWith(ctx, token, tool, s.canonical(in))
		var res *mcp.CallToolResult
		switch {
		case ref != nil:
		case render == nil:
			res = s.renderOutcome(out)
		case out.Signed == nil:
			// A signature plan always ends signed or refused.
			ref = refuse(CodeSendFailed, "internal error: the confirm did not return a signature. Nothing was signed.")
		default:
			res = render(in, out)
		}
		s.finishApproval(code, tool, s.canonical(in), res, ref)
		return res, ref
	}
}

// confirmWith runs the engine's confirm in this server's confirmation mode;
// code is what the approval page shows the outcome under (in human mode
// the person's code, also when approved in the client's page).
func (s *Server) confirmWith(ctx context.Context, token, tool string, canonical []byte) (*engine.Outcome, *Refusal, string) {
	return s.confirm.Confirm(ctx, token, tool, canonical)
}

// renderOutcome turns a confirm's outcome into its result and text: every
// sentence is a rendering of the outcome's fields.
func (s *Server) renderOutcome(out *engine.Outcome) *mcp.CallToolResult {
	r := confirmResult{Status: string(out.Status), TxHash: out.Tx.Hex(), Nonce: out.Nonce, Block: out.Block,
		Confirmations: out.Confirmations, GasUsed: out.GasUsed, Fee: engine.ETH.Format(out.Fee), Effects: effectsOf(out.Effects),
		Legs: legsOf(out.Legs), Changes: s.measuredOf(out.Changes), Caps: s.capUsagesOf(changedAssets(out))}
	// What the journal could not record: said in every outcome's message.
	unrecorded := ""
	if len(out.Unrecorded) > 0 {
		unrecorded = " The journal could not record " + strings.Join(out.Unrecorded, "; ") + ": the caps keep the larger amount counted, and the operator should check the state directory (or WALLETGATE_STATE_URL)."
	}
	var before string
	for _, in := range out.Earlier {
		before += fmt.Sprintf(" %s %s succeeded in block %d.", in.Label, in.Tx.Hex(), in.Block)
	}
	switch out.Status {
	case engine.StatusPending:
		timeout := s.cfg.ReceiptTimeout
		why := "It was sent but not seen included within " + timeout.String() + "."
		if out.Why != "" {
			why = "Its outcome is not known: " + out.Why + "; it may or may not have reached the node, and was not seen included within " + timeout.String() + "."
		}
		r.Message = fmt.Sprintf("%s It is counted against the caps until its outcome is known, and walletgate follows it up with the identical signed bytes only. Check it with wallet_verify_tx {\"tx\": \"%s\"}; do not send it again.%s%s", why, r.TxHash, before, unrecorded)
		return success(r, "PENDING: "+r.Message)
	case engine.StatusReverted:
		r.Message = fmt.Sprintf("The transaction %s (%s) was included in block %d but REVERTED: nothing moved except network fees of %s ETH, which count against the ETH caps; later transactions of this write were not sent.%s", r.TxHash, out.Leg, *r.Block, r.Fee, unrecorded)
		res := success(r, CodeReverted+": "+r.Message)
		res.IsError = true
		return res
	case engine.StatusIncomplete:
		r.Message = "This write stopped part way: " + legFates(out.Legs) + " " + s.movedText(out.Changes, out.Fee) +
			" Inspect the transactions with wallet_verify_tx; do not repeat this write without a new preview." + unrecorded
		res := success(r, engine.CodeIncomplete+": "+r.Message)
		res.IsError = true
		return res
	case engine.StatusEffectMismatch:
		r.Message = fmt.Sprintf("The transaction %s succeeded in block %d, but its effects do not match the preview: %s. %s Inspect it with wallet_verify_tx.%s", r.TxHash, *r.Block, strings.Join(out.Missing, "; "), s.movedText(out.Changes, out.Fee), unrecorded)
		res := success(r, CodeEffectMismatch+": "+r.Message)
		res.IsError = true
		return res
	}
	r.Message = fmt.Sprintf("Confirmed in block %d with %d confirmation(s); effects verified from the transaction's own receipt and the wallet's balances.%s%s", *r.Block, r.Confirmations, before, unrecorded)
	text := confirmText(r)
	if before != "" {
		text += "\nBefore it:" + before
	}
	if unrecorded != "" {
		text += "\n" + strings.TrimSpace(unrecorded)
	}
	return success(r, text)
}

// changedAssets are ETH and every asset out's changes name, ETH first.
func changedAssets(out *engine.Outcome) []common.Address {
	assets := caps.Spend{policy.NativeAsset: nil}
	for _, c := range out.Changes {
		assets[c.Asset] = nil
	}
	return sortedAssets(assets)
}

// legsOf renders the legs' fates; never nil.
func legsOf(ls []engine.LegOutcome) []legOutcomeJSON {
	out := make([]legOutcomeJSON, 0, len(ls))
	for _, l := range ls {
		j := legOutcomeJSON{Label: l.Label, Status: l.Status, Block: l.Block, Code: l.Code, Reason: inert(l.Reason, 600), Undo: l.Undo}
		if l.Tx != (common.Hash{}) {
			j.TxHash = l.Tx.Hex()
		}
		out = append(out, j)
	}
	return out
}

// legFates says, leg by leg, what became of each.
func legFates(ls []engine.LegOutcome) string {
	var parts []string
	for _, l := range ls {
		name := l.Label
		if l.Undo {
			name = "taking it back (" + l.Label + ")"
		}
		switch l.Status {
		case engine.LegIncluded:
			parts = append(parts, fmt.Sprintf("%s %s was included in block %d and succeeded", name, l.Tx.Hex(), l.Block))
		case engine.LegReverted:
			parts = append(parts, fmt.Sprintf("%s %s was included in block %d and REVERTED", name, l.Tx.Hex(), l.Block))
		case engine.LegPending:
			parts = append(parts, fmt.Sprintf("%s %s was sent and is pending: %s", name, l.Tx.Hex(), inert(l.Reason, 300)))
		default:
			parts = append(parts, fmt.Sprintf("%s was not sent (%s: %s)", name, l.Code, inert(l.Reason, 300)))
		}
	}
	return strings.Join(parts, "; then ") + "."
}

// measuredOf renders what moved; never nil.
func (s *Server) measuredOf(cs []engine.AssetChange) []measuredJSON {
	out := make([]measuredJSON, 0, len(cs))
	for _, c := range cs {
		as := s.displayAsset(c.Asset)
		out = append(out, measuredJSON{Asset: assetID(as), Symbol: as.Symbol, Out: as.Format(c.Out), In: as.Format(c.In),
			PreviewedOut: as.Format(c.PreviewOut), PreviewedIn: as.Format(c.PreviewIn), Measured: c.Measured})
	}
	return out
}

// movedText says what moved on chain and what the caps count.
func (s *Server) movedText(cs []engine.AssetChange, fee *big.Int) string {
	var parts []string
	for _, c := range cs {
		as := s.displayAsset(c.Asset)
		name := marked(as.Symbol, as.Native || as.Known)
		if c.Out.Sign() > 0 {
			parts = append(parts, "−"+as.Format(c.Out)+" "+name)
		}
		if c.In.Sign() > 0 {
			parts = append(parts, "+"+as.Format(c.In)+" "+name)
		}
	}
	moved := "nothing besides the fees"
	if len(parts) > 0 {
		moved = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("Measured on chain, the wallet moved %s; network fees %s ETH. The caps count what left and the fees.", moved, engine.ETH.Format(fee))
}

// effectPhrase says one verified effect as a person reads it: an allowance
// as an allowance, never as a transfer.
func effectPhrase(e effectJSON) string {
	if e.Kind == engine.MovedApproval {
		return fmt.Sprintf("an allowance: %s may now spend %s %s (%s) of this wallet's", e.To, e.Amount, marked(e.Symbol, e.known), e.Asset)
	}
	return fmt.Sprintf("%s %s (%s) from %s to %s", e.Amount, marked(e.Symbol, e.known), e.Asset, e.From, e.To)
}

func confirmText(r confirmResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CONFIRMED: transaction %s included in block %d (%d confirmation(s)), nonce %d.\n", r.TxHash, *r.Block, r.Confirmations, r.Nonce)
	for _, e := range r.Effects {
		fmt.Fprintf(&b, "Verified on chain: %s.\n", effectPhrase(e))
	}
	fmt.Fprintf(&b, "Gas used: %d. Fee paid: %s ETH.", r.GasUsed, r.Fee)
	return b.String()
}

// previewCommon are the facts every write preview shows: the network, how
// the caps would stand after it, the simulation's outcome and any warnings.
type previewCommon struct {
	Network       string     `json:"network" jsonschema:"the network's name"`
	ChainID       uint64     `json:"chain_id" jsonschema:"the chain id"`
	NetworkKind   string     `json:"network_kind" enum:"mainnet|testnet|dev" jsonschema:"mainnet, testnet or dev"`
	NetworkMarker string     `json:"network_marker" jsonschema:"how the network is marked for people: MAINNET (real funds), testnet or local dev chain"`
	Caps          []capAfter `json:"caps_after" jsonschema:"every capped window of every asset this write spends, as it would stand after it"`
	NoCap         []string   `json:"no_cap" jsonschema:"assets this write spends that no cap applies to (the operator allowed uncapped tokens)"`
	Simulation    string     `json:"simulation" jsonschema:"the simulation's outcome"`
	Warnings      []string   `json:"warnings" jsonschema:"what the person should know before agreeing"`

	fee *big.Int // the most the network fees can be, in wei, for the page (nil: no transaction)
}

// base is the shared frame of a preview value that embeds it (kindPreview).
func (c previewCommon) base() previewCommon { return c }

func (s *Server) newPreviewCommon(spend caps.Spend, simulation string) previewCommon {
	after, noCap := s.capsAfter(spend)
	if after == nil {
		after = []capAfter{}
	}
	if noCap == nil {
		noCap = []string{}
	}
	return previewCommon{Network: s.network.Name, ChainID: s.chainID, NetworkKind: string(s.network.Kind), NetworkMarker: s.network.Marker(),
		Caps: after, NoCap: noCap, Simulation: simulation, Warnings: []string{}}
}

// networkLine opens a preview text: the network, with its marker prominent.
func (c previewCommon) networkLine(b *strings.Builder) {
	fmt.Fprintf(b, "Network:   %s, chain id %d — %s\n", c.Network, c.ChainID, strings.ToUpper(c.NetworkMarker[:1])+c.NetworkMarker[1:])
}

// previewTail ends every preview text the same way: the caps as they would
// stand, the simulation, warnings, the expiry and how to confirm.
func (s *Server) previewTail(b *strings.Builder, c previewCommon, expiresAt, tool string, conf confirmation) {
	b.WriteString("Caps after this (ETH counts value plus max fees):\n")
	for _, c := range c.Caps {
		fmt.Fprintf(b, "  %s %s: %s of %s used, %s left\n", c.Symbol, c.Window, c.UsedAfter, c.Limit, c.RemainingAfter)
	}
	for _, n := range c.NoCap {
		fmt.Fprintf(b, "  %s: NO CAP APPLIES (the operator allowed uncapped tokens)\n", n)
	}
	fmt.Fprintf(b, "Simulation: %s.\n", c.Simulation)
	for _, w := range c.Warnings {
		fmt.Fprintf(b, "WARNING:   %s\n", w)
	}
	fmt.Fprintf(b, "Expires:   %s (in %s)\n", expiresAt, expiresIn(conf.Expires.Sub(s.now())))
	confirmLine(b, tool, conf)
}

// display is what the person sees of a preview besides its text (human
// mode), the facts every write shares: the title, the network with its
// marker, the wallet, how each cap stands after it, the simulation and the
// warnings. The write's own facts are added by its caller.
func (s *Server) display(title string, c previewCommon) approval.Display {
	warnings := append([]string{}, c.Warnings...)
	var left []string
	for _, cp := range c.Caps {
		left = append(left, fmt.Sprintf("%s %s: %s of %s left", cp.Symbol, cp.Window, readableLeft(cp.RemainingAfter), cp.Limit))
	}
	for _, n := range c.NoCap {
		warnings = append(warnings, "NO CAP APPLIES to "+n+" (the operator allowed uncapped tokens)")
		left = append(left, n+": no cap applies, nothing is left to protect you")
	}
	sim := c.Simulation
	if sim != "" {
		sim = strings.ToUpper(sim[:1]) + sim[1:] + "."
	}
	d := approval.Display{Title: title, Network: fmt.Sprintf("%s, chain id %d", c.Network, c.ChainID), Marker: c.NetworkMarker,
		Mainnet: s.network.ValueBearing(), Wallet: s.address.Hex(), CapsLeft: left, Simulation: sim, Warnings: warnings}
	if c.fee != nil {
		d.FeeMax = feeAmount(c.fee)
	}
	return d
}

// shownAsset names an asset for the person: an unknown token carries its
// address and UNVERIFIED right where its amount is.
func shownAsset(a asset) string {
	if a.Native || a.Known {
		return a.Symbol
	}
	return a.Symbol + " (UNVERIFIED token " + a.Address.Hex() + ")"
}

// expiresIn renders a TTL for people.
func expiresIn(d time.Duration) string {
	return d.Round(time.Second).String()
}

// Reconcile settles what the journal left open (engine.Reconcile), and ends
// the reservations of signatures used on chain or expired unused
// (engine.SweepSignatures).
func (s *Server) Reconcile(ctx context.Context) ([]string, error) {
	lines, err := s.engine.Reconcile(ctx)
	return append(lines, s.engine.SweepSignatures(ctx)...), err
}

// Drain waits, at most d, for confirms under way to finish.
func (s *Server) Drain(d time.Duration) bool { return s.engine.Drain(d) }

// PendingTransactions lists the signed transactions whose outcome is not
// final yet.
func (s *Server) PendingTransactions() []string { return s.engine.PendingTransactions() }
