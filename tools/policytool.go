package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
)

// policyResult is wallet_policy's structured result.
type policyResult struct {
	Network             string        `json:"network" jsonschema:"the network's name"`
	ChainID             uint64        `json:"chain_id" jsonschema:"the chain id"`
	NetworkKind         string        `json:"network_kind" enum:"mainnet|testnet|dev" jsonschema:"mainnet, testnet or dev"`
	IsMainnet           bool          `json:"is_mainnet" jsonschema:"true when funds on this network have real value"`
	Signer              string        `json:"signer" enum:"keystore|key-file|dev|watch-only" jsonschema:"where the key comes from"`
	WritesEnabled       bool          `json:"writes_enabled" jsonschema:"whether any write tool is offered"`
	WriteTools          []string      `json:"write_tools" jsonschema:"the write tools offered"`
	AllowMainnet        bool          `json:"allow_mainnet" jsonschema:"the operator's opt-in to writes on a value-bearing network"`
	AllowUncappedTokens bool          `json:"allow_uncapped_tokens" jsonschema:"the operator's opt-in to sending tokens that have no cap"`
	AllowTo             []string      `json:"allow_to" jsonschema:"recipient allow-list; empty means any recipient"`
	AllowCalls          string        `json:"allow_calls" jsonschema:"what wallet_call may call (WALLETGATE_ALLOW_CALLS): any, a comma-separated list of contracts (ADDR or ADDR:0xSELECTOR), or empty: wallet_call is off"`
	ConfirmMode         string        `json:"confirm_mode" enum:"token|human|elicit" jsonschema:"how a write is confirmed"`
	ConfirmTTL          string        `json:"confirm_ttl" jsonschema:"how long a preview's confirmation stays valid"`
	Caps                []capUsage    `json:"caps" jsonschema:"every cap per asset and window, with what is used and what remains"`
	Pending             int           `json:"pending_confirmations" jsonschema:"previews whose confirm_token is still unused and unexpired"`
	WritesOffReason     string        `json:"writes_disabled_reason,omitempty" jsonschema:"why no write tool is offered, when none is"`
	DayWindowNote       string        `json:"per_day_note" jsonschema:"how the per-day window is kept"`
	PendingTxs          []string      `json:"pending_transactions" jsonschema:"journaled transactions whose outcome is not known yet (check them with wallet_verify_tx)"`
	Signing             signingPolicy `json:"signing" jsonschema:"what wallet_sign_typed_data and wallet_pay_x402 may sign"`
	WritesRefused       string        `json:"writes_refused,omitempty" jsonschema:"set when every write is refused although write tools are offered (the journal cannot be used): why, and what the operator must do"`
	// HumanAbove: in human mode with WALLETGATE_HUMAN_ABOVE, the most a
	// write may spend per asset and still confirm with a token.
	HumanAbove []humanAboveJSON `json:"human_above,omitempty" jsonschema:"human mode with WALLETGATE_HUMAN_ABOVE: a write spending at most these (ETH counting value plus max fees), and no other asset, confirms with a token; anything else needs the person"`
	// OpenBrowser: in human mode, how the person is shown a preview's page.
	OpenBrowser string        `json:"open_browser,omitempty" jsonschema:"human mode: whether walletgate opens each preview's approval page in the person's browser (WALLETGATE_OPEN_BROWSER), or why not"`
	Node        nodePolicy    `json:"node" jsonschema:"what the node in use offers, as learned at start"`
	Chains      []chainPolicy `json:"chains,omitempty" jsonschema:"every chain walletgate serves, the default first, each with its caps (a tool's network argument picks one; wallet_policy with it gives that chain's whole policy)"`
}

// chainPolicy is one chain served, in wallet_policy: a summary (wallet_policy
// with that chain's network gives the rest).
type chainPolicy struct {
	chainEntry
	Caps       []capUsage `json:"caps" jsonschema:"this chain's caps per asset and window, with what is used and what remains"`
	PendingTxs []string   `json:"pending_transactions" jsonschema:"this chain's journaled transactions whose outcome is not known yet"`
	// Refused: why writes on this chain are refused, or what its node
	// cannot do, when either is so.
	Refused string `json:"refused,omitempty" jsonschema:"set when writes on this chain are refused, or some of them (a node without eth_simulateV1): why"`
}

// nodePolicy is what the node offers that the writes depend on.
type nodePolicy struct {
	SimulateV1 string `json:"simulate_v1" enum:"unknown|offered|not offered" jsonschema:"whether the node offers eth_simulateV1 (learned at start, with the chain id)"`
	Refused    string `json:"refused_without_simulation,omitempty" jsonschema:"set when the node lacks eth_simulateV1: the writes refused for it (plain sends still work)"`
	BatchLimit int    `json:"batch_limit" jsonschema:"the most requests walletgate sends the node in one batch (WALLETGATE_RPC_BATCH_LIMIT, or learned from the node's refusal); 0: none"`
}

// humanAboveJSON is one asset's tier.
type humanAboveJSON struct {
	Asset  string `json:"asset" jsonschema:"ETH or the token address"`
	Symbol string `json:"symbol" jsonschema:"the asset's symbol"`
	Limit  string `json:"limit" pattern:"amount" jsonschema:"the most a token-confirmed write may spend, a decimal string"`
}

// signingPolicy is what may be signed.
type signingPolicy struct {
	Kinds          []string `json:"kinds" jsonschema:"the typed-data kinds walletgate decodes and caps"`
	UnknownAllowed bool     `json:"unknown_allowed" jsonschema:"the operator allows typed data of unknown kinds (WALLETGATE_ALLOW_TYPED_DATA=any): shown whole, no cap applies"`
	MaxValidity    string   `json:"max_validity" jsonschema:"the longest a signed permit or authorization may stay valid (WALLETGATE_SIGNATURE_MAX_VALIDITY)"`
	PayTo          []string `json:"pay_to" jsonschema:"x402 payees allowed (WALLETGATE_ALLOW_PAY_TO): payee addresses, and host=address pins (a requirement for that host pays only that address); empty means any payee, within the caps"`
}

func (s *Server) policyTool() Tool {
	return readTool(s, "wallet_policy", "Policy and limits",
		"What this wallet may do now: network, signer, write tools, opt-ins, allow-lists, confirmation mode, and every cap with what is used and what remains.",
		func(ctx context.Context, _ noArgs) (*mcp.CallToolResult, *Refusal) {
			// A pending transaction whose receipt is on chain is settled
			// before it could be listed (no lookup when none is pending).
			lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			s.engine.SettleIncluded(lctx)
			cancel()
			r := s.policyResult()
			return success(r, policyText(r)), nil
		})
}

// chainPolicy is this chain's entry in wallet_policy's chains.
func (s *Server) chainPolicy() chainPolicy {
	c := chainPolicy{chainEntry: s.chainEntry(), Caps: s.capUsages(), PendingTxs: s.PendingTransactions(), Refused: s.writesRefused()}
	if c.PendingTxs == nil {
		c.PendingTxs = []string{}
	}
	if n := s.nodePolicy(); c.Refused == "" && n.Refused != "" {
		c.Refused = "its node lacks eth_simulateV1: refused there are " + n.Refused
	}
	return c
}

// nodePolicy is what this chain's node offers.
func (s *Server) nodePolicy() nodePolicy {
	n := nodePolicy{SimulateV1: chain.SimulateUnknown}
	if s.chain != nil {
		n.SimulateV1, n.BatchLimit = s.chain.SimulateV1Support(), s.chain.BatchLimit()
	}
	if n.SimulateV1 == chain.SimulateMissing {
		n.Refused = engine.NeedsSimulateV1 + " (" + engine.CodeNoSimulation + ")"
	}
	return n
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
		AllowCalls:          s.cfg.AllowCalls.String(),
		ConfirmMode:         s.cfg.Confirm,
		ConfirmTTL:          s.cfg.ConfirmTTL.String(),
		Caps:                s.capUsages(),
		Pending:             s.gate.Pending(),
		WritesOffReason:     s.writesDisabledReason(),
		DayWindowNote:       s.dayWindowNote(),
		PendingTxs:          s.PendingTransactions(),
		WritesRefused:       s.writesRefused(),
		Signing: signingPolicy{Kinds: []string{"EIP-2612 Permit (exposure of the token)", "EIP-3009 TransferWithAuthorization (a payment)", "EIP-3009 ReceiveWithAuthorization (a payment)"},
			UnknownAllowed: s.cfg.AllowTypedDataAny, MaxValidity: s.cfg.SignatureValidity.String(), PayTo: []string{}},
	}
	r.Signing.PayTo = s.cfg.AllowPayTo.Items()
	r.Node = s.nodePolicy()
	if r.PendingTxs == nil {
		r.PendingTxs = []string{}
	}
	if len(s.chains()) > 1 {
		for _, t := range s.chains() {
			r.Chains = append(r.Chains, t.chainPolicy())
		}
	}
	if r.WritesEnabled {
		for _, t := range s.writeTools() {
			r.WriteTools = append(r.WriteTools, t.Tool.Name)
		}
	}
	for _, a := range s.cfg.AllowTo {
		r.AllowTo = append(r.AllowTo, a.Hex())
	}
	if s.human() {
		r.OpenBrowser = s.openBrowserNote()
	}
	if s.human() && s.caps.HumanAbove != nil {
		r.HumanAbove = []humanAboveJSON{}
		limits := caps.Spend{}
		for a, v := range s.caps.HumanAbove {
			limits[a] = v
		}
		for _, a := range sortedAssets(limits) {
			as := s.assetInfo(a)
			r.HumanAbove = append(r.HumanAbove, humanAboveJSON{Asset: assetID(as), Symbol: as.Symbol, Limit: policy.FormatAmount(limits[a], as.Decimals)})
		}
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
	var me *caps.MismatchError
	if errors.As(s.journalErr, &me) {
		return s.engine.LedgerUnavailable(me).Reason() + ". What the operator must do: give every host on this wallet the same caps (" + caps.CodeCapsDiffer + ")"
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
	case s.shared != "":
		return "per-day spend (rolling 24 h), nonces and open transactions are kept in the PostgreSQL database " + s.shared + ", shared by every walletgate on this wallet and chain on any host, and survive restarts"
	case s.journal != nil && s.service:
		return "per-day spend (rolling 24 h) is kept in the service's journal, shared by every session of this service, and survives restarts"
	case s.journalAt != "":
		return "per-day spend (rolling 24 h) is kept in the journal at " + s.journalAt + ", shared by every walletgate on this wallet and chain, and survives restarts"
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
	if r.Node.Refused != "" {
		fmt.Fprintf(&b, "The node does not offer eth_simulateV1: refused on it are %s; wallet_send works.\n", r.Node.Refused)
	}
	fmt.Fprintf(&b, "Pending confirmations: %d.\n", r.Pending)
	if len(r.PendingTxs) > 0 {
		fmt.Fprintf(&b, "Transactions sent whose outcome is not known yet (counted against the caps): %s.\n", strings.Join(r.PendingTxs, ", "))
	}
	fmt.Fprintf(&b, "Writes on a mainnet allowed: %t. Tokens without a cap allowed: %t.\n", r.AllowMainnet, r.AllowUncappedTokens)
	switch {
	case r.AllowCalls == "any":
		b.WriteString("Contract calls (wallet_call): ANY contract (the operator set WALLETGATE_ALLOW_CALLS=any); capped on their simulated effects.\n")
	case r.AllowCalls != "":
		fmt.Fprintf(&b, "Contract calls (wallet_call): only %s; capped on their simulated effects.\n", r.AllowCalls)
	default:
		b.WriteString("Contract calls (wallet_call): off (the operator can allow contracts with WALLETGATE_ALLOW_CALLS).\n")
	}
	if len(r.AllowTo) == 0 {
		b.WriteString("Recipients: any address.\n")
	} else {
		fmt.Fprintf(&b, "Recipients: only %s.\n", strings.Join(r.AllowTo, ", "))
	}
	unknown := "refused (the operator can allow them with WALLETGATE_ALLOW_TYPED_DATA=any)"
	if r.Signing.UnknownAllowed {
		unknown = "ALLOWED, shown whole, with NO CAP (WALLETGATE_ALLOW_TYPED_DATA=any)"
	}
	fmt.Fprintf(&b, "Signatures: %s, counted against the token's caps, valid at most %s; other typed data %s; Permit2 refused (not decoded).\n", strings.Join(r.Signing.Kinds, ", "), r.Signing.MaxValidity, unknown)
	if len(r.Signing.PayTo) == 0 {
		b.WriteString("x402 payees: any, within the caps.\n")
	} else {
		fmt.Fprintf(&b, "x402 payees: only %s.\n", strings.Join(r.Signing.PayTo, ", "))
	}
	fmt.Fprintf(&b, "Confirmation mode: %s.", r.ConfirmMode)
	if r.HumanAbove != nil {
		var tiers []string
		for _, h := range r.HumanAbove {
			tiers = append(tiers, h.Limit+" "+h.Symbol)
		}
		fmt.Fprintf(&b, "\nA token suffices for a write that spends at most %s (ETH counting the value plus the maximum fees) and no other asset; anything above, or in another asset, needs the person (%s).", strings.Join(tiers, ", "), policy.EnvHumanAbove)
	} else if r.ConfirmMode == "human" {
		b.WriteString("\nThe person approves every write.")
	}
	if r.OpenBrowser != "" {
		b.WriteString("\nApproval page: " + r.OpenBrowser)
	}
	if len(r.Chains) > 1 {
		b.WriteString("\nChains served (a tool's network argument picks one; without it, the default):")
		for _, c := range r.Chains {
			d := ""
			if c.Default {
				d = ", the default"
			}
			fmt.Fprintf(&b, "\n  %s: %s (chain id %d%s).", c.Name, c.Network, c.ChainID, d)
			if c.Refused != "" {
				fmt.Fprintf(&b, " REFUSED: %s.", strings.TrimSuffix(c.Refused, "."))
			}
			for _, u := range c.Caps {
				fmt.Fprintf(&b, "\n    %s %s: %s / %s, %s left", u.Symbol, u.Window, u.Used, u.Limit, u.Remaining)
			}
			if len(c.PendingTxs) > 0 {
				fmt.Fprintf(&b, "\n    outcome not known yet: %s", strings.Join(c.PendingTxs, ", "))
			}
		}
	}
	return b.String()
}

// openBrowserNote says whether a preview's page is opened for the person
// (WALLETGATE_OPEN_BROWSER), or why not.
func (s *Server) openBrowserNote() string {
	if s.confirm.Way().Open != nil {
		return "opened in the person's default browser for each preview they must approve (" + policy.EnvOpenBrowser + "=off turns it off)."
	}
	why := s.confirm.Way().NoOpen
	if why == "" {
		why = "the approval page is not running"
	}
	return "not opened by walletgate (" + why + "); each preview says where the person finds it."
}
