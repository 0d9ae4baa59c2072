package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/journal"
)

// policyResult is wallet_policy's structured result.
type policyResult struct {
	Network             string     `json:"network"`
	ChainID             uint64     `json:"chain_id"`
	NetworkKind         string     `json:"network_kind"`
	IsMainnet           bool       `json:"is_mainnet"`
	Signer              string     `json:"signer"`
	WritesEnabled       bool       `json:"writes_enabled"`
	WriteTools          []string   `json:"write_tools"`
	AllowMainnet        bool       `json:"allow_mainnet"`
	AllowUncappedTokens bool       `json:"allow_uncapped_tokens"`
	AllowTo             []string   `json:"allow_to"`
	ConfirmMode         string     `json:"confirm_mode"`
	ConfirmTTL          string     `json:"confirm_ttl"`
	Caps                []capUsage `json:"caps"`
	Pending             int        `json:"pending_confirmations"`
	WritesOffReason     string     `json:"writes_disabled_reason,omitempty"`
	DayWindowNote       string     `json:"per_day_note"`
	PendingTxs          []string   `json:"pending_transactions"`
	WritesRefused       string     `json:"writes_refused,omitempty"`
}

func (s *Server) policyTool() Tool {
	out := object(map[string]any{
		"network":               str("the network's name"),
		"chain_id":              integer("the chain id"),
		"network_kind":          enum("mainnet, testnet or dev", "mainnet", "testnet", "dev"),
		"is_mainnet":            boolean("true when funds on this network have real value"),
		"signer":                enum("where the key comes from", "keystore", "key-file", "dev", "watch-only"),
		"writes_enabled":        boolean("whether any write tool is offered"),
		"write_tools":           array("the write tools offered", map[string]any{"type": "string"}),
		"allow_mainnet":         boolean("the operator's opt-in to writes on a value-bearing network"),
		"allow_uncapped_tokens": boolean("the operator's opt-in to sending tokens that have no cap"),
		"allow_to":              array("recipient allow-list; empty means any recipient", map[string]any{"type": "string"}),
		"confirm_mode":          enum("how a write is confirmed", "token", "human", "elicit"),
		"confirm_ttl":           str("how long a preview's confirmation stays valid"),
		"caps": array("every cap per asset and window, with what is used and what remains", object(map[string]any{
			"asset":     str("ETH or the token address"),
			"symbol":    str("the asset's symbol"),
			"window":    enum("the window", "per transaction", "per session", "per day"),
			"limit":     str("the cap, a decimal string"),
			"used":      str("settled plus reserved spend in this window (always 0 per transaction)"),
			"remaining": str("what may still be spent in this window"),
		}, "asset", "symbol", "window", "limit", "used", "remaining")),
		"pending_confirmations":  integer("previews whose confirm_token is still unused and unexpired"),
		"writes_disabled_reason": str("why no write tool is offered, when none is"),
		"per_day_note":           str("how the per-day window is kept"),
		"pending_transactions":   array("journaled transactions whose outcome is not known yet (check them with wallet_verify_tx)", map[string]any{"type": "string"}),
		"writes_refused":         str("set when every write is refused although write tools are offered (the journal cannot be used): why, and what the operator must do"),
	}, "pending_transactions", "caps", "pending_confirmations", "per_day_note", "network", "chain_id", "network_kind", "is_mainnet", "signer", "writes_enabled", "write_tools", "allow_mainnet",
		"allow_uncapped_tokens", "allow_to", "confirm_mode", "confirm_ttl")
	return s.readTool("wallet_policy", "Policy and limits",
		"What this wallet may do right now: network, signer, write tools offered, opt-ins, recipient allow-list and confirmation mode.",
		object(map[string]any{}), out, argSpec{},
		func(ctx context.Context, _ args) (*mcp.CallToolResult, *Refusal) {
			r := s.policyResult()
			return success(r, policyText(r)), nil
		})
}

// PolicyText is wallet_policy's text, for `walletgate policy`.
func (s *Server) PolicyText(ctx context.Context) (string, error) {
	return policyText(s.policyResult()), nil
}

func (s *Server) policyResult() policyResult {
	r := policyResult{
		Network:             s.network.Name,
		ChainID:             s.chainID,
		NetworkKind:         string(s.network.Kind),
		IsMainnet:           s.network.ValueBearing(),
		Signer:              s.signerKind(),
		WritesEnabled:       s.writesEnabled(),
		WriteTools:          []string{},
		AllowMainnet:        s.cfg.AllowMainnet,
		AllowUncappedTokens: s.cfg.AllowUncappedTokens,
		AllowTo:             []string{},
		ConfirmMode:         s.cfg.Confirm,
		ConfirmTTL:          s.cfg.ConfirmTTL.String(),
		Caps:                s.capUsages(),
		Pending:             s.gate.Pending(),
		WritesOffReason:     s.writesDisabledReason(),
		DayWindowNote:       s.dayWindowNote(),
		PendingTxs:          s.PendingTransactions(),
		WritesRefused:       s.writesRefused(),
	}
	if r.PendingTxs == nil {
		r.PendingTxs = []string{}
	}
	if r.WritesEnabled {
		for _, t := range s.writeTools() {
			r.WriteTools = append(r.WriteTools, t.Tool.Name)
		}
	}
	for _, a := range s.cfg.AllowTo {
		r.AllowTo = append(r.AllowTo, a.Hex())
	}
	return r
}

// writesRefused says why every write is refused when the journal cannot be
// used: a model reading the policy must not see write tools and no caps and
// conclude that writes work.
func (s *Server) writesRefused() string {
	if s.journalErr == nil {
		return ""
	}
	var ue *journal.UnavailableError
	if errors.As(s.journalErr, &ue) {
		return fmt.Sprintf("the spend journal cannot be used: %s. What the operator must do: %s", ue.Reason, ue.Fix)
	}
	return fmt.Sprintf("the spend journal cannot be used (%s). The operator should check WALLETGATE_STATE_DIR and run walletgate audit verify", s.journalErr)
}

// dayWindowNote says how the per-day window is kept.
func (s *Server) dayWindowNote() string {
	switch {
	case s.journalErr != nil:
		return "the journal that keeps the per-day window cannot be used, so every write is refused until the operator acts (walletgate audit verify)"
	case s.journal != nil:
		return "per-day spend (rolling 24 h) is kept in the journal at " + s.journal.Path() + ", shared by every walletgate on this wallet and chain, and survives restarts"
	}
	return "per-day spend is counted in this process only (rolling 24 h): no journal is configured"
}

func policyText(r policyResult) string {
	var b strings.Builder
	marker := map[string]string{"mainnet": "MAINNET (real funds)", "testnet": "testnet", "dev": "local dev chain"}[r.NetworkKind]
	fmt.Fprintf(&b, "Network: %s (chain id %d, %s).\n", r.Network, r.ChainID, marker)
	fmt.Fprintf(&b, "Signer: %s.\n", r.Signer)
	if r.WritesEnabled {
		fmt.Fprintf(&b, "Write tools: %s (each needs a preview, then a confirmation within %s).\n", strings.Join(r.WriteTools, ", "), r.ConfirmTTL)
	} else {
		fmt.Fprintf(&b, "Write tools: none offered (%s); only reads are possible.\n", r.WritesOffReason)
	}
	if r.WritesRefused != "" {
		fmt.Fprintf(&b, "WRITES ARE REFUSED: %s. Every write is refused until then; reads keep working.\n", strings.TrimSuffix(r.WritesRefused, "."))
	} else if len(r.Caps) == 0 {
		b.WriteString("Caps: none configured; every spend is refused.\n")
	} else {
		b.WriteString("Caps (used / limit, remaining):\n")
		for _, c := range r.Caps {
			fmt.Fprintf(&b, "  %s %s: %s / %s, %s left\n", c.Symbol, c.Window, c.Used, c.Limit, c.Remaining)
		}
		fmt.Fprintf(&b, "  Note: %s.\n", r.DayWindowNote)
	}
	fmt.Fprintf(&b, "Pending confirmations: %d.\n", r.Pending)
	if len(r.PendingTxs) > 0 {
		fmt.Fprintf(&b, "Transactions sent whose outcome is not known yet (counted against the caps): %s.\n", strings.Join(r.PendingTxs, ", "))
	}
	fmt.Fprintf(&b, "Writes on a mainnet allowed: %t. Tokens without a cap allowed: %t.\n", r.AllowMainnet, r.AllowUncappedTokens)
	if len(r.AllowTo) == 0 {
		b.WriteString("Recipients: any address.\n")
	} else {
		fmt.Fprintf(&b, "Recipients: only %s.\n", strings.Join(r.AllowTo, ", "))
	}
	fmt.Fprintf(&b, "Confirmation mode: %s.", r.ConfirmMode)
	return b.String()
}
