// Package tools is walletgate's MCP adapter: it defines the tools, decodes
// their arguments strictly into typed structs, hands each write's intent to
// the engine and renders what comes back — previews, outcomes, refusals — as
// model text, JSON and the approval page's facts. It decides nothing: the
// rules are policy's, the sequence the engine's, the chain chain's.
package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/uniswap"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/tools/confirm"
	"github.com/walletgate/walletgate/tools/schemacheck"
)

// Deps is what the tools need from the wiring.
type Deps struct {
	Chain   *chain.Client
	Signer  signer.Signer   // nil: watch-only
	Address common.Address  // the wallet: the signer's address, or the watch-only one
	Config  policy.Config   // the validated configuration
	Caps    Caps            // resolved spend limits (ResolveCaps); the zero value refuses every write
	Network *policy.Network // overrides the network table's entry for the chain (tests)
	// SwapsOff, when set, says why swaps are off and how to turn them on
	// (the dev chain without the Uniswap artifacts): the swap tools are
	// listed and refuse with SWAPS_UNAVAILABLE and this text.
	SwapsOff string
	// Journal, when set, records every call and write and keeps the per-day
	// caps across restarts and processes. JournalErr, when set, is why the
	// journal that should exist cannot be used: every write is then refused
	// (LEDGER_UNAVAILABLE) and reads keep working. With neither, caps are
	// kept in memory only.
	Journal    *journal.Journal
	JournalErr error
	// Recorder, when set, keeps the write pipeline's records and the
	// per-day caps and nonces instead of Journal (WALLETGATE_STATE_URL:
	// shared by every host on the wallet); Journal still keeps this
	// process's call records. Describe, when it has one, says where.
	Recorder engine.Recorder
	// JournalPath, with a Recorder read from a journal file (a
	// journal.Snapshot: `walletgate policy`), is that file.
	JournalPath string
	// Approvals holds the previews a person approves in human mode (the
	// page and the terminal read its Broker); the server joins it for its
	// lifetime (Close leaves). Without it, human mode offers no write tools.
	Approvals *confirm.Approvals
	// ApprovalPage is the approval page's address (secret included), for
	// URL-mode elicitation: a client that can open URLs is asked to open a
	// preview's page there. Never shown to the model.
	ApprovalPage string
	// Way is how the person reaches the approval page (human mode): what
	// walletgate opens for them, and what a preview tells them otherwise.
	Way PersonWay
	// Session identifies this process in the journal.
	Session string
	// Service is set when walletgate runs as a system service (walletgate
	// service run): what the model is told names only what the person does,
	// and no answer carries a path of the state directory.
	Service bool
	Logger  *slog.Logger     // stderr only; nil discards
	Now     func() time.Time // nil: time.Now
	Version string
}

// Server holds the tools' shared state. It is safe for concurrent use: mcp-go
// runs tool calls concurrently.
type Server struct {
	chain   *chain.Client
	chainID uint64
	network policy.Network
	signer  signer.Signer
	address common.Address
	cfg     policy.Config
	log     *slog.Logger
	now     func() time.Time

	// hold, when set, is waited for before a call does anything (Hold).
	hold func(context.Context) (*Chains, error)

	gate   *gate.Gate
	caps   Caps
	engine *engine.Engine
	ledger *caps.Ledger // the engine's

	swaps *uniswap.Swapper

	journal    *journal.Journal
	journalErr error
	journalAt  string        // Deps.JournalPath, or the journal's path
	shared     string        // where the shared state is kept (Deps.Recorder), or ""
	confirm    *confirm.Mode // how a confirm is allowed: token, elicitation or the person
	// haveApprovals: Deps.Approvals was given (human mode has a broker).
	haveApprovals bool
	session       string
	service       bool
	calls         atomic.Uint64

	// outputs are the tools' compiled output schemas (set by MCP before it
	// serves); every answer is checked against its tool's before it leaves.
	outputs *schemacheck.Set

	// peers are every chain's Servers, this one's included, the default
	// first (NewChains); nil when this Server serves one chain alone.
	peers     []*Server
	isDefault bool
	// prepared: tools, handlers, isWrite and outputs are built (prepare).
	prepared sync.Once
	tools    []Tool
	handlers map[string]server.ToolHandlerFunc
	isWrite  map[string]bool
}

// Instructions is what the server tells a client about itself at initialize.
const Instructions = instructionsReads + instructionsTokenWrites + instructionsTail

// The parts of the instructions; human mode swaps the middle one.
const (
	instructionsReads = `walletgate gives you a wallet on one EVM chain, inside limits set by the person who runs it.

Read tools (safe, no side effects):
- wallet_address: the wallet's address, chain, network kind (MAINNET / testnet / local dev chain) and signer.
- wallet_balance: ETH and ERC-20 balances, nonce and code presence of an address (default: the wallet).
- wallet_verify_tx: look a transaction up by hash: status, confirmations, ETH value and decoded token transfers, optionally checked against an expected recipient and amount.
- wallet_policy: what you may do right now: network, caps, opt-ins, allow-lists, confirmation mode.

Writes (when enabled) always take two calls. `
	instructionsTokenWrites = `The first call returns a preview and a confirm_token; nothing is signed. Show the preview to the user. Only if they agree, call the same tool again with exactly the same arguments plus "confirm": "<token>". A token works once, for those arguments only, and expires after a few minutes.`
	instructionsHumanWrites = `The first call returns a preview; nothing is signed. In this server's mode the preview carries no token: the person approves it themselves on walletgate's approval page (walletgate opens it in their browser, or the preview says where it is) or in a terminal, and is shown a one-time code. Ask them for it, then call the same tool again with exactly the same arguments plus "confirm": "<code>". A code works once, for that preview only, and expires with it. A client that can open URLs for the user (MCP URL-mode elicitation) may confirm with the preview's id instead: walletgate asks it to open the approval page and waits for the person's decision.`
	instructionsTail        = ` Amounts are decimal strings in human units ("0.05"), never numbers. A refusal starts with an upper-case code (BAD_AMOUNT: ...) and says what to change.`
)

// New builds the tools' state from deps.
func New(d Deps) *Server {
	s := &Server{
		chain:   d.Chain,
		chainID: d.Chain.ChainID().Uint64(),
		signer:  d.Signer,
		address: d.Address,
		cfg:     d.Config,
		log:     d.Logger,
		now:     d.Now,
	}
	s.network = policy.LookupNetwork(s.chainID)
	if d.Network != nil {
		s.network = *d.Network
	}
	// Unless the operator (or the caller) set them, confirmations and the
	// receipt wait follow the chain's block time and finality.
	if f := s.network.Finality(); f.Confirmations > 0 {
		if !s.cfg.ConfirmationsSet && s.cfg.Confirmations == policy.DefaultConfirmations {
			s.cfg.Confirmations = f.Confirmations
		}
		if !s.cfg.ReceiptTimeoutSet && s.cfg.ReceiptTimeout == policy.DefaultReceiptTimeout {
			s.cfg.ReceiptTimeout = f.ReceiptTimeout
		}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, t := range policy.KnownTokens(s.chainID) {
		s.chain.Remember(chain.TokenMeta{Address: t.Address, Decimals: t.Decimals, Symbol: t.Symbol, Name: t.Name})
	}
	s.gate = gate.New(s.cfg.ConfirmTTL, maxPending, s.now)
	s.caps = d.Caps
	if s.caps.assets == nil {
		s.caps.assets = map[common.Address]asset{}
	}
	s.journal, s.journalErr, s.session, s.journalAt = d.Journal, d.JournalErr, d.Session, d.JournalPath
	if d.Journal != nil {
		s.journalAt = d.Journal.Path()
	}
	if dr, ok := d.Recorder.(interface{ Describe() string }); ok {
		s.shared = dr.Describe()
	}
	s.service = d.Service
	s.haveApprovals = d.Approvals != nil
	if s.session == "" {
		s.session = "s"
	}
	resolved := d.Caps.Limits.PerTx != nil || d.Caps.Limits.PerSession != nil || d.Caps.Limits.PerDay != nil
	var known []common.Address
	for _, t := range policy.KnownTokens(s.chainID) {
		known = append(known, t.Address)
	}
	s.engine = engine.New(engine.Deps{
		Chain: s.chain, Signer: s.signer, Address: s.address, Gate: s.gate,
		Limits: d.Caps.Limits, Capped: resolved, AllowUncapped: s.cfg.AllowUncappedTokens, HumanAbove: d.Caps.HumanAbove, Known: known, Prices: d.Caps.Prices,
		Journal: d.Journal, JournalErr: d.JournalErr, Recorder: d.Recorder,
		Rules:         &policy.WriteRules{Off: s.writesDisabledReason(), Network: s.network, AllowMainnet: s.cfg.AllowMainnet, AllowTo: s.cfg.AllowTo, AllowPayTo: s.cfg.AllowPayTo},
		Confirmations: s.cfg.Confirmations, ReceiptTimeout: s.cfg.ReceiptTimeout,
		Session: s.session, Logger: s.log, Now: s.now,
	})
	s.ledger = s.engine.Ledger()
	var tier func(*engine.Plan) (bool, string)
	if s.caps.HumanAbove != nil {
		tier = s.tier
	}
	s.confirm = confirm.New(confirm.Deps{
		Mode: s.cfg.Confirm, Gate: s.gate, Engine: s.engine, Approvals: d.Approvals, Session: s.session, Tier: tier,
		Record: func(d approval.Decision) {
			_ = s.record(KindApproval, records.Approval{V: records.Version, Approval: d.ID, Tool: d.Tool, Fingerprint: hex.EncodeToString(d.Fingerprint[:]), Decision: string(d.State), Passkey: d.Passkey})
		},
		PageURL: d.ApprovalPage, Way: d.Way, Service: d.Service, Logger: s.log, Now: s.now,
	})
	weth, _ := policy.TokenBySymbol(s.chainID, "WETH")
	s.swaps = uniswap.New(uniswap.Config{Chain: s.chain, Deployment: s.network.Uniswap, WETH: weth.Address,
		Network: s.network.Name, Off: d.SwapsOff, Deadline: s.cfg.ConfirmTTL + 10*time.Minute, Now: s.now})
	return s
}

// Close leaves the approval broker: a person's decisions no longer reach
// this server's tokens. Call it when the server's session has ended.
func (s *Server) Close() { s.confirm.Close() }

// NewMCPServer builds the MCP server with walletgate's tools registered.
func NewMCPServer(d Deps) *server.MCPServer {
	return New(d).MCP(d.Version)
}

// MCP builds the MCP server with this Server's tools registered.
func (s *Server) MCP(version string) *server.MCPServer {
	if version == "" {
		version = "dev"
	}
	ms := server.NewMCPServer("walletgate", version,
		server.WithToolCapabilities(false),
		server.WithElicitation(),
		server.WithInstructions(s.chainsInstructions(s.instructions()+s.capsInstructions())),
		server.WithRecovery(),
		server.WithHooks((&initFirst{}).hooks()),
	)
	s.prepare()
	for _, t := range s.tools {
		ms.AddTool(t.Tool, t.Handler)
	}
	return ms
}

// chainsInstructions says, with several chains, which ones and how a call
// picks one.
func (s *Server) chainsInstructions(text string) string {
	if len(s.peers) < 2 {
		return text
	}
	return strings.Replace(text, "walletgate gives you a wallet on one EVM chain, inside limits set by the person who runs it.",
		"walletgate gives you one wallet on several EVM chains, "+s.servedList()+", inside limits set by the person who runs it. Every tool takes an optional network argument (a chain id or one of those names); without it, a call is for the default chain. A preview is confirmed on its own chain only.", 1)
}

// Tool is one tool definition with its handler.
type Tool struct {
	Tool    mcp.Tool
	Handler server.ToolHandlerFunc
}

// Tools lists the tools this server offers, in a fixed order.
func (s *Server) Tools() []Tool {
	tools := []Tool{
		s.addressTool(),
		s.balanceTool(),
		s.verifyTool(),
		s.policyTool(),
	}
	if s.offerSwaps() {
		tools = append(tools, s.quoteTool())
	}
	tools = append(tools, s.allowanceTool())
	if s.writesEnabled() {
		tools = append(tools, s.writeTools()...)
	}
	return tools
}

// writeTools lists the write tools.
func (s *Server) writeTools() []Tool {
	tools := []Tool{s.sendTool()}
	if s.offerSwaps() {
		tools = append(tools, s.swapTool())
	}
	tools = append(tools, s.approveTool())
	if s.cfg.AllowCalls.On() {
		tools = append(tools, s.callTool())
	}
	tools = append(tools, s.signTypedDataTool(), s.payX402Tool())
	return tools
}

// offerSwaps reports whether the swap tools are listed: when swaps work, and
// also when the operator can turn them on (Deps.SwapsOff, the dev chain
// without its Uniswap artifacts). Then a call gets SWAPS_UNAVAILABLE with the
// step that enables them, never a protocol error for an unknown tool. On a
// network with no known Uniswap there is nothing to enable; they are not
// listed.
func (s *Server) offerSwaps() bool { return s.swaps.Off() == "" || s.swaps.Disabled() != "" }

// writesEnabled reports whether write tools are offered.
func (s *Server) writesEnabled() bool { return s.writesDisabledReason() == "" }

// writesDisabledReason says why write tools are not offered, or "".
func (s *Server) writesDisabledReason() string {
	return policy.WritesOff(s.cfg, s.signer != nil, s.haveApprovals)
}

// writeTool builds a destructive tool; its output schema (a preview or an
// outcome) is servedSchema(name).
func writeTool[A any](s *Server, name, title, description string, h typedHandler[A]) Tool {
	t := mcp.NewToolWithRawSchema(name, description, inputSchema[A](s.confirmDescription(), s.networkDescription()))
	t.Title = title
	t.RawOutputSchema = servedSchema(name)
	t.Annotations = mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(false),
		DestructiveHint: mcp.ToBoolPtr(true),
		IdempotentHint:  mcp.ToBoolPtr(false),
		OpenWorldHint:   mcp.ToBoolPtr(true),
	}
	return Tool{Tool: t, Handler: s.handler(name, true, h.run)}
}

// readTool builds a read-only tool whose handler gets strictly parsed args;
// its output schema is servedSchema(name), or oneChainSchema(name) with
// one chain.
func readTool[A any](s *Server, name, title, description string, h typedHandler[A]) Tool {
	t := mcp.NewToolWithRawSchema(name, description, inputSchema[A]("", s.networkDescription()))
	t.Title = title
	t.RawOutputSchema = servedSchema(name)
	if len(s.chains()) < 2 {
		t.RawOutputSchema = oneChainSchema(name)
	}
	t.Annotations = mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(true),
	}
	return Tool{Tool: t, Handler: s.handler(name, false, h.run)}
}

// handler wraps a tool body: strict argument parsing first, refusals as
// isError results, a log line per call on stderr.
func (s *Server) handler(name string, write bool, run runner) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if res, done, err := s.held(ctx, name, req); done {
			return res, err
		}
		start := time.Now()
		ctx = confirm.WithRoundTrip(ctx, req.Params.MultiRoundTripParams)
		raw, err := rawArguments(req)
		var routed *Refusal
		if err == nil {
			var t *Server
			if t, routed = s.route(name, raw); t != nil && t != s {
				return t.dispatch(name)(ctx, req) // another chain's call, on its journal
			}
		}
		call := fmt.Sprintf("%s-%d", s.session, s.calls.Add(1))
		// A call that never gets an answer still leaves its start behind.
		_ = s.recordUnsynced(KindToolStart, records.ToolStart{V: records.Version, Call: call, Tool: name, ArgsSHA256: digest(raw)})
		var res *mcp.CallToolResult
		var ref *Refusal
		if err != nil {
			ref = refuse(CodeBadArgument, "the arguments could not be read")
		} else if routed != nil {
			ref = routed
			if write && routed.Code != gate.CodeMismatch {
				// The confirm was given for no chain served: whichever
				// chain's it was, it is spent.
				said := ""
				for _, t := range s.chains() {
					said = t.spendRawConfirm(name, raw)
				}
				ref.Message = strings.TrimSuffix(ref.Message, ".") + ". Nothing was signed or sent." + said
			}
		} else {
			var bad bool
			res, ref, bad = run(ctx, raw)
			if bad && write {
				ref.Message = strings.TrimSuffix(ref.Message, ".") + ". Nothing was signed or sent." + s.spendRawConfirm(name, raw)
			}
		}
		outcome := "ok"
		if r, ok := structuredOf(res).(confirmResult); ref == nil && ok {
			outcome = r.Status // what the journal's audit shows of a confirm: its status, not "ok"
		}
		if ref != nil {
			outcome = ref.Code
			res = refusalResult(ref)
			s.log.Debug("refusal", "tool", name, "text", ref.Error())
		}
		if s.log.Enabled(ctx, slog.LevelDebug) {
			sum := sha256.Sum256(raw)
			s.log.Debug("tool arguments", "tool", name, "sha256", hex.EncodeToString(sum[:]), "bytes", len(raw))
		}
		if res.NeedsInput() {
			outcome = "input_required" // a question to the person, not an answer: no output schema applies
		} else if s.outputs != nil {
			if err := s.outputs.Check(name, res.StructuredContent, res.IsError); err != nil {
				res, outcome = s.invalidOutput(res, err), CodeOutputInvalid
			}
		}
		s.log.Info("tool call", "tool", name, "outcome", outcome, "ms", time.Since(start).Milliseconds())
		_ = s.recordUnsynced(KindToolEnd, records.ToolEnd{V: records.Version, Call: call, Tool: name, Outcome: outcome, MS: time.Since(start).Milliseconds()})
		return res, nil
	}
}

// CodeOutputInvalid says an answer did not match its tool's output schema.
const CodeOutputInvalid = "OUTPUT_INVALID"

// invalidOutput fails an answer closed that its own schema does not allow:
// a strict client (the TypeScript SDK) would throw on it and lose the text.
// mcp-go's WithOutputSchemaValidation is not used because it skips error
// results (a REVERTED or EFFECT_MISMATCH outcome carries structuredContent
// that clients validate too), passes silently when a schema does not
// compile, and replaces the text — which, after a write, says what happened
// on chain. Here the text stays, the structured content goes, and the
// result says so.
func (s *Server) invalidOutput(res *mcp.CallToolResult, err error) *mcp.CallToolResult {
	s.log.Error("answer does not match its output schema (a walletgate bug)", "err", err)
	text := CodeOutputInvalid + ": walletgate's structured answer did not match this tool's output schema (a walletgate bug, logged on its stderr), so it was withheld. " +
		"What happened, in words, follows; after a write, check the transaction with wallet_verify_tx before repeating anything.\n"
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			text += t.Text
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, IsError: true}
}

// spendRawConfirm spends the token or code in every "confirm" member of
// arguments that did not parse (confirmations are spent on every outcome),
// and says so; "" when there is none to spend. A key that only differs in
// case ("Confirm", "CONFIRM") counts: the strict parser refuses it, but it
// carries a token all the same, and a token that survived such a call could
// confirm later.
func (s *Server) spendRawConfirm(tool string, raw []byte) string {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return ""
	}
	said := ""
	for key, v := range members {
		var confirm string
		if !strings.EqualFold(key, "confirm") || json.Unmarshal(v, &confirm) != nil || confirm == "" {
			continue
		}
		said = s.spendConfirm(tool, confirm)
	}
	return said
}

// signerKind is the signer's kind, or "watch-only".
func (s *Server) signerKind() string {
	if s.signer == nil {
		return "watch-only"
	}
	return s.signer.Kind()
}

// structuredOf is res's structured content; nil for no result.
func structuredOf(res *mcp.CallToolResult) any {
	if res == nil {
		return nil
	}
	return res.StructuredContent
}
