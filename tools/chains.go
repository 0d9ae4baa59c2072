package tools

// Several chains in one server. Each configured chain has its own Server:
// its node, caps, journal, gate and engine. Chains holds them, the default
// first, and serves one MCP server whose every tool takes a network
// argument; a call goes to that chain's Server, which decodes, previews and
// confirms as it would alone. A preview is bound to its chain: the chain id
// is in its canonical arguments, and a chain's gate knows only its own
// tokens, so a confirm on another chain finds nothing there — and is told
// whose token it was, which is then spent.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/server"

	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/tools/schemacheck"
	"github.com/walletgate/walletgate/tools/x402"
)

// Refusal codes of the network argument.
const (
	CodeBadNetwork       = "BAD_NETWORK"        // neither a chain id nor a known name
	CodeNetworkNotServed = "NETWORK_NOT_SERVED" // a chain walletgate is not configured for
	CodeNotOnNetwork     = "NOT_ON_NETWORK"     // a tool the chain asked for does not offer
)

// Chains is the Servers of the configured chains, the default first.
type Chains struct {
	servers []*Server
}

// NewChains builds one Server per chain from deps (the default chain's
// first) and lets each know the others. One Deps is one chain, served as
// before several existed.
func NewChains(deps []Deps) *Chains {
	var servers []*Server
	for _, d := range deps {
		servers = append(servers, New(d))
	}
	return ChainsOf(servers...)
}

// ChainsOf is NewChains of Servers already built, the default first. A
// Server is in one Chains only.
func ChainsOf(servers ...*Server) *Chains {
	c := &Chains{servers: servers}
	if len(servers) > 1 {
		for i, s := range servers {
			s.peers, s.isDefault = servers, i == 0
		}
	}
	return c
}

// PolicyText is the default chain's wallet_policy text, for `walletgate policy`.
func (c *Chains) PolicyText(ctx context.Context) (string, error) { return c.Default().PolicyText(ctx) }

// Default is the default chain's Server.
func (c *Chains) Default() *Server { return c.servers[0] }

// Servers are every chain's Server, the default first.
func (c *Chains) Servers() []*Server { return c.servers }

// MCP builds the MCP server: every tool any chain offers, in the fixed
// order, each routed by its network argument.
func (c *Chains) MCP(version string) *server.MCPServer {
	ms := c.Default().MCP(version)
	for _, s := range c.servers[1:] {
		s.prepare()
		for _, t := range s.Tools() {
			if ms.GetTool(t.Tool.Name) == nil { // offered on this chain, not the default one
				ms.AddTool(t.Tool, s.handlers[t.Tool.Name])
			}
		}
	}
	return ms
}

// Reconcile follows up every chain's journaled transactions.
func (c *Chains) Reconcile(ctx context.Context) ([]string, error) {
	var lines []string
	var first error
	for _, s := range c.servers {
		l, err := s.Reconcile(ctx)
		if len(c.servers) > 1 {
			for i := range l {
				l[i] = s.network.Name + ": " + l[i]
			}
		}
		lines = append(lines, l...)
		if err != nil && first == nil {
			first = fmt.Errorf("%s: %w", s.network.Name, err)
		}
	}
	return lines, first
}

// Drain waits up to d for every chain's confirms under way.
func (c *Chains) Drain(d time.Duration) bool {
	deadline := time.Now().Add(d)
	all := true
	for _, s := range c.servers {
		all = s.Drain(max(time.Until(deadline), 0)) && all
	}
	return all
}

// Close closes every chain's Server.
func (c *Chains) Close() {
	for _, s := range c.servers {
		s.Close()
	}
}

// chainEntry is what wallet_policy's and wallet_address's chains say of each.
type chainEntry struct {
	ChainID uint64 `json:"chain_id" jsonschema:"the chain id"`
	Name    string `json:"name" jsonschema:"the chain's name as the network argument takes it (or its id)"`
	Network string `json:"network" jsonschema:"the network's name"`
	Default bool   `json:"default" jsonschema:"the chain of a call without a network argument"`
}

// chainEntry is this chain's.
func (s *Server) chainEntry() chainEntry {
	return chainEntry{ChainID: s.chainID, Name: policy.NetworkSlug(s.chainID), Network: s.network.Name, Default: len(s.peers) == 0 || s.isDefault}
}

// chains are the Servers of every chain served, this one's included.
func (s *Server) chains() []*Server {
	if len(s.peers) == 0 {
		return []*Server{s}
	}
	return s.peers
}

// peekNetwork reads a call's network argument for routing, leniently: ok is
// false when the arguments cannot be read that way (the chain's strict
// decoder then refuses them in its own words).
func peekNetwork(raw []byte) (network *string, ok bool) {
	var a networkArg
	if jsonv2.Unmarshal(raw, &a) != nil {
		return nil, false
	}
	return a.Network, true
}

// route says which chain's Server serves a call of tool with raw arguments:
// s itself, another chain's, or a refusal of the network argument. A
// confirm given on this chain for another chain's preview is refused, and
// that token spent.
func (s *Server) route(tool string, raw []byte) (*Server, *Refusal) {
	s.prepare() // a handler called before MCP built the server still knows its tools
	target := s
	if network, ok := peekNetwork(raw); !ok {
		// Unreadable: this chain's strict decoder says why.
	} else if network == nil {
		target = s.chains()[0] // the default chain
		if tool == payX402Tool {
			target = s.payableChain(raw)
		}
	} else {
		id, known := policy.ParseNetwork(*network)
		if !known {
			return nil, refuse(CodeBadNetwork, "network %s is neither a chain id nor a known name. Give one of the chains walletgate serves: %s; or leave network out for the default chain (%s)",
				displayInput(*network), s.servedList(), policy.NetworkSlug(s.chains()[0].chainID))
		}
		target = nil
		for _, t := range s.chains() {
			if t.chainID == id {
				target = t
			}
		}
		if target == nil {
			return nil, refuse(CodeNetworkNotServed, "network %s is chain %d (%s), which this walletgate does not serve. It serves: %s. The operator adds a chain to WALLETGATE_CHAIN_ID and its node to WALLETGATE_RPC",
				displayInput(*network), id, policy.LookupNetwork(id).Name, s.servedList())
		}
	}
	if target != s {
		return target, nil
	}
	if s.handlers[tool] == nil {
		why := "it is not offered there"
		if r := s.swaps.Off(); r != "" && (tool == "wallet_swap" || tool == "wallet_swap_quote") {
			why = r
		}
		return nil, refuse(CodeNotOnNetwork, "%s is not offered on %s (chain %d): %s. Chains that offer it: %s",
			tool, s.network.Name, s.chainID, why, s.offering(tool))
	}
	if r := s.otherChainsConfirm(tool, raw); r != nil {
		return nil, r
	}
	return s, nil
}

// payableChain is the chain an x402 payment without a network argument is
// for: the default chain when one of the requirement's options is on it,
// else the one chain served that an option names (a requirement for USDC on
// Base, paid from a walletgate whose default is Ethereum), else the default
// chain, which then says why no option is payable.
func (s *Server) payableChain(raw []byte) *Server {
	var a struct {
		PaymentRequired struct {
			Accepts []struct {
				Network string `json:"network"`
			} `json:"accepts"`
		} `json:"payment_required"`
	}
	def := s.chains()[0]
	if jsonv2.Unmarshal(raw, &a) != nil {
		return def
	}
	var on []*Server
	for _, t := range s.chains() {
		for _, o := range a.PaymentRequired.Accepts {
			if o.Network == x402.Network(t.chainID) {
				if t == def {
					return def
				}
				if !slices.Contains(on, t) {
					on = append(on, t)
				}
			}
		}
	}
	if len(on) == 1 {
		return on[0]
	}
	return def
}

// otherChainsConfirm refuses a confirm_token that another chain's gate
// issued, spending it there: the preview it confirms is that chain's.
func (s *Server) otherChainsConfirm(tool string, raw []byte) *Refusal {
	if !s.isWrite[tool] || len(s.peers) < 2 {
		return nil
	}
	var c confirmArg
	if jsonv2.Unmarshal(raw, &c) != nil || c.Confirm == nil || !strings.HasPrefix(*c.Confirm, gate.TokenPrefix) {
		return nil
	}
	for _, o := range s.peers {
		if o != s && o.gate.Revoke(*c.Confirm) {
			return refuse(gate.CodeMismatch, "this confirm_token is for a preview on %s (chain %d, network %q), and this call is for %s (chain %d). The token is spent; nothing was signed or sent. Preview again on the chain you mean",
				o.network.Name, o.chainID, policy.NetworkSlug(o.chainID), s.network.Name, s.chainID)
		}
	}
	return nil
}

// networkDescription is the network argument's description in the input
// schemas: the chains served; "" with one chain, whose schemas leave the
// argument out.
func (s *Server) networkDescription() string {
	if len(s.chains()) < 2 {
		return ""
	}
	return "the chain: " + s.servedList() + " (a chain id or one of those names); default: the default chain"
}

// servedList names the chains served: "base (8453, the default), ethereum (1)".
func (s *Server) servedList() string {
	var names []string
	for i, t := range s.chains() {
		d := ""
		if i == 0 {
			d = ", the default"
		}
		names = append(names, chainLabel(t.chainID, d))
	}
	return strings.Join(names, ", ")
}

// chainLabel is a chain as messages name it: "base (8453)", or "31337" for
// a chain without a name; more is added inside the parentheses.
func chainLabel(id uint64, more string) string {
	if slug := policy.NetworkSlug(id); slug != fmt.Sprint(id) {
		return fmt.Sprintf("%s (%d%s)", slug, id, more)
	}
	if more != "" {
		return fmt.Sprintf("%d (%s)", id, strings.TrimPrefix(more, ", "))
	}
	return fmt.Sprint(id)
}

// offering names the chains that offer tool, or "none".
func (s *Server) offering(tool string) string {
	var names []string
	for _, t := range s.chains() {
		if t.handlers[tool] != nil {
			names = append(names, chainLabel(t.chainID, ""))
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// prepare compiles the output schemas and the handlers of the tools this
// Server offers, once.
func (s *Server) prepare() {
	s.prepared.Do(func() {
		tools := s.Tools()
		schemas := map[string]json.RawMessage{}
		s.handlers = map[string]server.ToolHandlerFunc{}
		s.isWrite = map[string]bool{}
		for _, t := range tools {
			schemas[t.Tool.Name] = resultSchema(t.Tool.Name) // strict: it allows less than the one served
			s.handlers[t.Tool.Name] = t.Handler
			s.isWrite[t.Tool.Name] = t.Tool.Annotations.DestructiveHint != nil && *t.Tool.Annotations.DestructiveHint
		}
		// Compiled on each tool's first answer: compiling them all was most
		// of a cold start. That they all compile is a test
		// (TestGeneratedOutputSchemasMatchTheTypes).
		// A tool another chain offers is refused here (NOT_ON_NETWORK):
		// that answer is checked against its schema too.
		for name := range resultSchemas {
			if _, ok := schemas[name]; !ok {
				schemas[name] = resultSchema(name)
			}
		}
		s.outputs = schemacheck.Lazy(schemas)
		s.tools = tools
	})
}

// dispatch is this Server's handler of tool; for a tool it does not offer,
// one whose routing refuses the call in its words, on its journal.
func (s *Server) dispatch(tool string) server.ToolHandlerFunc {
	if h := s.handlers[tool]; h != nil {
		return h
	}
	return s.handler(tool, false, nil)
}

// withoutProperty is a served output schema without one top-level property
// (unchanged when it has none). The served form closes no object, so a
// client validating against it still accepts every answer.
func withoutProperty(schema json.RawMessage, name string) json.RawMessage {
	var sc jsonschema.Schema
	if json.Unmarshal(schema, &sc) != nil || sc.Properties[name] == nil {
		return schema
	}
	delete(sc.Properties, name)
	sc.Required = slices.DeleteFunc(sc.Required, func(n string) bool { return n == name })
	return mustJSON(&sc)
}
