package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// addressResult is wallet_address's structured result.
type addressResult struct {
	Address     string `json:"address" pattern:"address" jsonschema:"the wallet's address (EIP-55)"`
	ChainID     uint64 `json:"chain_id" jsonschema:"the chain id the node reported and the operator configured"`
	Network     string `json:"network" jsonschema:"the network's name"`
	NetworkKind string `json:"network_kind" enum:"mainnet|testnet|dev" jsonschema:"mainnet (real funds), testnet or dev (local dev chain); unknown chains count as mainnet"`
	IsMainnet   bool   `json:"is_mainnet" jsonschema:"true when funds on this network have real value"`
	Signer      string `json:"signer" enum:"keystore|key-file|dev|watch-only" jsonschema:"where the key comes from; watch-only means no key and no writes"`
	Writes      bool   `json:"writes_enabled" jsonschema:"whether write tools are offered"`
	RPC         string `json:"rpc" jsonschema:"the node that answers, host only"`
	// Chains: the same wallet on every chain served.
	Chains []chainAddress `json:"chains,omitempty" jsonschema:"every chain walletgate serves, the default first: the wallet is the same address on each"`
}

// chainAddress is one chain served, in wallet_address.
type chainAddress struct {
	chainEntry
	NetworkKind string `json:"network_kind" enum:"mainnet|testnet|dev" jsonschema:"mainnet, testnet or dev"`
}

func (s *Server) addressTool() Tool {
	return readTool(s, "wallet_address", "Wallet address",
		"The wallet's address, chain id, network kind (MAINNET, testnet or dev chain) and signer.",
		func(ctx context.Context, _ noArgs) (*mcp.CallToolResult, *Refusal) {
			r := addressResult{
				Address:     s.address.Hex(),
				ChainID:     s.chainID,
				Network:     s.network.Name,
				NetworkKind: string(s.network.Kind),
				IsMainnet:   s.network.ValueBearing(),
				Signer:      s.signerKind(),
				Writes:      s.writesEnabled(),
				RPC:         s.chain.Host(),
			}
			text := fmt.Sprintf("Wallet %s on %s (chain id %d, %s).\nSigner: %s. Write tools: %s.\nNode: %s",
				r.Address, r.Network, r.ChainID, s.network.Marker(), r.Signer, onOff(r.Writes), r.RPC)
			for _, t := range s.chains() {
				if len(s.chains()) < 2 {
					break
				}
				c := chainAddress{chainEntry: t.chainEntry(), NetworkKind: string(t.network.Kind)}
				r.Chains = append(r.Chains, c)
			}
			if len(r.Chains) > 1 {
				text += "\nThe same wallet on every chain served (network argument; without it, the default):"
				for _, c := range r.Chains {
					d := ""
					if c.Default {
						d = ", the default"
					}
					text += fmt.Sprintf("\n  %s: %s (chain id %d, %s%s)", c.Name, c.Network, c.ChainID, policy.Kind(c.NetworkKind).Marker(), d)
				}
			}
			return success(r, text), nil
		})
}

func onOff(b bool) string {
	if b {
		return "enabled"
	}
	return "not offered"
}

// tokenBalance is one entry of wallet_balance's tokens.
type tokenBalance struct {
	Symbol   string `json:"symbol" jsonschema:"the token's symbol: from walletgate's known-token table when known, else as the contract reports it (untrusted, shown inert)"`
	Address  string `json:"address" pattern:"address" jsonschema:"the token contract"`
	Decimals uint8  `json:"decimals" jsonschema:"the token's decimals"`
	Balance  string `json:"balance" jsonschema:"balance in token units, a decimal string; empty when the token could not be read (see error)"`
	Known    bool   `json:"known" jsonschema:"true when the token is in walletgate's known-token table for this network; false means unverified"`
	Error    string `json:"error,omitempty" jsonschema:"why this token could not be read"`
}

// balanceResult is wallet_balance's structured result.
type balanceResult struct {
	Address    string         `json:"address" pattern:"address" jsonschema:"the address read"`
	ETH        string         `json:"eth" pattern:"amount" jsonschema:"ETH balance, a decimal string"`
	Tokens     []tokenBalance `json:"tokens" jsonschema:"token balances"`
	Nonce      uint64         `json:"nonce" jsonschema:"transactions sent from this address"`
	IsContract bool           `json:"is_contract" jsonschema:"whether the address has contract code"`
	Block      uint64         `json:"block" jsonschema:"the block everything was read at"`
	At         string         `json:"at" jsonschema:"that block's time (RFC 3339, UTC)"`
	RPC        string         `json:"rpc" jsonschema:"the node that answered, host only"`
	// KnownTokens: no tokens argument, so tokens is walletgate's table for
	// the chain; any other token is read by passing its address.
	KnownTokens bool `json:"known_tokens" jsonschema:"true: no tokens were asked for, so tokens holds walletgate's known tokens of this chain (another token is read by passing its address in tokens)" client:"no tokens asked: tokens are walletgate's known ones"`
}

// balanceArgs are wallet_balance's arguments.
type balanceArgs struct {
	Address *string  `json:"address,omitempty" pattern:"address" jsonschema:"default: the wallet"`
	Tokens  []string `json:"tokens,omitempty" jsonschema:"symbols (e.g. USDT) or token addresses; default: the known tokens"`
	networkArg
}

func (s *Server) balanceTool() Tool {
	return readTool(s, "wallet_balance", "Balances",
		"ETH and token balances, nonce and contract status of an address (default: the wallet). Reads walletgate's known tokens unless tokens names others (any token by address).",
		func(ctx context.Context, a balanceArgs) (*mcp.CallToolResult, *Refusal) {
			addr := s.address
			if a.Address != nil {
				v := *a.Address
				parsed, err := policy.ParseAddress(v)
				if err != nil {
					return nil, refuse(CodeBadAddress, "address %s: %s. Give 0x followed by 40 hex digits, all lower case or with a correct EIP-55 checksum, or omit it for the wallet's own.", displayInput(v), reason(err))
				}
				addr = parsed
			}
			var assets []asset
			if list := a.Tokens; list != nil {
				seen := map[common.Address]bool{}
				for _, t := range list {
					as, ref := s.resolveToken(t)
					if ref != nil {
						return nil, ref
					}
					if !seen[as.Address] {
						seen[as.Address] = true
						assets = append(assets, as)
					}
				}
			} else {
				for _, t := range policy.KnownTokens(s.chainID) {
					assets = append(assets, knownAsset(t))
				}
			}
			addrs := make([]common.Address, len(assets))
			for i, as := range assets {
				addrs[i] = as.Address
			}
			acct, err := s.chain.Account(ctx, addr, addrs)
			if err != nil {
				return nil, rpcRefusal(err)
			}
			r := balanceResult{
				Address:    acct.Address.Hex(),
				ETH:        policy.FormatAmount(acct.ETH, 18),
				Tokens:     []tokenBalance{},
				Nonce:      acct.Nonce,
				IsContract: acct.IsContract,
				Block:      acct.Head.Number,
				At:         time.Unix(int64(acct.Head.Time), 0).UTC().Format(time.RFC3339),
				RPC:        s.chain.Host(),
			}
			asked := a.Tokens != nil
			r.KnownTokens = !asked
			for i, tb := range acct.Tokens {
				r.Tokens = append(r.Tokens, s.tokenBalance(assets[i], tb))
			}
			return success(r, balanceText(r, s.network)), nil
		})
}

// tokenBalance renders one token's balance; a known token's table entry wins
// over what the contract says about itself.
func (s *Server) tokenBalance(as asset, tb chain.TokenBalance) tokenBalance {
	out := tokenBalance{Address: as.Address.Hex(), Known: as.Known, Symbol: as.Symbol, Decimals: as.Decimals}
	if tb.Err != nil {
		out.Error = "does not answer as an ERC-20 token (no balanceOf/decimals)"
		if out.Symbol == "" {
			out.Symbol = "?"
		}
		return out
	}
	if !as.Known {
		out.Symbol = inert(tb.Symbol, maxSymbolDisplay)
		out.Decimals = tb.Decimals
	}
	out.Balance = policy.FormatAmount(tb.Balance, out.Decimals)
	return out
}

func balanceText(r balanceResult, n policy.Network) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Balances of %s on %s (%s) at block %d (%s):\n", r.Address, n.Name, n.Marker(), r.Block, r.At)
	fmt.Fprintf(&b, "  ETH: %s\n", r.ETH)
	for _, t := range r.Tokens {
		label := "known token"
		if !t.Known {
			label = "UNVERIFIED token: symbol as the contract reports it"
		}
		if t.Error != "" {
			fmt.Fprintf(&b, "  %s (%s): %s\n", t.Symbol, t.Address, t.Error)
			continue
		}
		fmt.Fprintf(&b, "  %s: %s (%s, %d decimals, %s)\n", t.Symbol, t.Balance, t.Address, t.Decimals, label)
	}
	if r.KnownTokens {
		// What was read, and how to read more: an empty list is not "no
		// other tokens".
		if len(r.Tokens) == 0 {
			b.WriteString("walletgate knows no tokens on this network, so none were read; for a token, ask again with tokens: [\"0x…\"] (its contract address).\n")
		} else {
			b.WriteString("These are walletgate's known tokens on this network, not every token the address holds; for another, ask again with tokens: [\"0x…\"] (its contract address).\n")
		}
	}
	contract := "no"
	if r.IsContract {
		contract = "yes"
	}
	// The node stays in the structured rpc field: this line is relayed to
	// a person, who needs no node address.
	fmt.Fprintf(&b, "Nonce: %d. Contract: %s.", r.Nonce, contract)
	return b.String()
}

// reason is the lower-level parse error's message, for a refusal's middle.
func reason(err error) string {
	switch e := err.(type) {
	case *policy.AddressError:
		return e.Reason
	case *policy.AmountError:
		return e.Reason
	}
	return err.Error()
}

// rpcRefusal reports a node failure. chain errors carry the host only.
func rpcRefusal(err error) *Refusal { return engine.RPCRefusal(err) }
