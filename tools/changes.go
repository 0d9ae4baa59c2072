package tools

// The one effects model every effects-bound write shows: what the simulation
// says leaves and reaches the wallet, and the allowances it leaves set.

import (
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// unlimited is the allowance walletgate calls unlimited (policy).
var unlimited = policy.UnlimitedAllowance

// assetChange is one asset leaving or reaching the wallet.
type assetChange struct {
	Direction string `json:"direction" enum:"out|in" jsonschema:"out: leaves the wallet; in: reaches it"`
	Asset     string `json:"asset" jsonschema:"ETH or the token address"`
	Symbol    string `json:"symbol" jsonschema:"the asset's symbol"`
	Known     bool   `json:"known" jsonschema:"ETH, or a token in walletgate's known-token table; false means UNVERIFIED"`
	Amount    string `json:"amount" pattern:"amount" jsonschema:"the amount, in the asset's units"`
	Raw       string `json:"raw" pattern:"base" jsonschema:"the amount in base units"`
}

// allowanceChange is an allowance the write leaves set.
type allowanceChange struct {
	Token          string `json:"token" pattern:"address" jsonschema:"the token"`
	Symbol         string `json:"symbol" jsonschema:"its symbol"`
	Known          bool   `json:"known" jsonschema:"the token is in walletgate's known-token table"`
	Spender        string `json:"spender" pattern:"address" jsonschema:"who may move it"`
	SpenderKnown   string `json:"spender_known,omitempty" jsonschema:"what walletgate's table calls the spender, when it knows it"`
	Before         string `json:"before" pattern:"amount" jsonschema:"the allowance before, in the token's units"`
	After          string `json:"after" pattern:"amount" jsonschema:"the allowance after"`
	AfterBase      string `json:"after_base" pattern:"base" jsonschema:"the allowance after, in base units"`
	Exposure       bool   `json:"exposure" jsonschema:"the allowance rises: the spender can then move it without asking again, and it counts against the token's caps"`
	AfterUnlimited bool   `json:"after_unlimited" jsonschema:"the allowance after is unlimited (2^255 or more)"`
}

// changesJSON is what an effects-bound write does to the wallet, as its
// simulation shows.
type changesJSON struct {
	Moves      []assetChange     `json:"moves" jsonschema:"every asset leaving or reaching the wallet"`
	Allowances []allowanceChange `json:"allowances" jsonschema:"every allowance the write leaves set (raised, lowered or revoked)"`
	Summary    string            `json:"summary" jsonschema:"the same in one line, e.g. \"−10 USDT, +0.0033 WETH, approves 0x… for 10 USDT\""`
}

// changesOf renders the engine's changes.
func (s *Server) changesOf(ch *engine.Changes) changesJSON {
	out := changesJSON{Moves: []assetChange{}, Allowances: []allowanceChange{}}
	var parts []string
	add := func(dir string, m map[common.Address]*big.Int) {
		for _, a := range sortedAssets(m) {
			v := m[a]
			if v.Sign() == 0 {
				continue
			}
			as := s.displayAsset(a)
			out.Moves = append(out.Moves, assetChange{Direction: dir, Asset: assetID(as), Symbol: as.Symbol, Known: as.Native || as.Known,
				Amount: policy.FormatAmount(v, as.Decimals), Raw: v.String()})
			sign := "−"
			if dir == "in" {
				sign = "+"
			}
			parts = append(parts, sign+policy.FormatAmount(v, as.Decimals)+" "+marked(as.Symbol, as.Native || as.Known))
		}
	}
	add("out", ch.Out)
	add("in", ch.In)
	pairs := make([]engine.Pair, 0, len(ch.Approved))
	for p := range ch.Approved {
		pairs = append(pairs, p)
	}
	sort.Slice(pairs, func(i, j int) bool {
		return pairs[i].Token.Hex()+pairs[i].Spender.Hex() < pairs[j].Token.Hex()+pairs[j].Spender.Hex()
	})
	for _, p := range pairs {
		before, after := ch.Before[p], ch.Approved[p]
		if before.Cmp(after) == 0 {
			continue
		}
		as := s.displayAsset(p.Token)
		c := allowanceChange{Token: p.Token.Hex(), Symbol: as.Symbol, Known: as.Known, Spender: p.Spender.Hex(), SpenderKnown: s.knownContract(p.Spender),
			Before: policy.FormatAmount(before, as.Decimals), After: policy.FormatAmount(after, as.Decimals), AfterBase: after.String(),
			Exposure: after.Cmp(before) > 0, AfterUnlimited: after.Cmp(unlimited) >= 0}
		out.Allowances = append(out.Allowances, c)
		switch {
		case after.Sign() == 0:
			parts = append(parts, "revokes "+p.Spender.Hex()+"'s "+marked(as.Symbol, as.Known)+" allowance")
		case c.AfterUnlimited:
			parts = append(parts, "approves "+p.Spender.Hex()+" for UNLIMITED "+marked(as.Symbol, as.Known))
		default:
			parts = append(parts, "approves "+p.Spender.Hex()+" for "+c.After+" "+marked(as.Symbol, as.Known))
		}
	}
	out.Summary = strings.Join(parts, ", ")
	if out.Summary == "" {
		out.Summary = "no asset moves and no allowance changes (network fees only)"
	}
	return out
}

// knownContract is what walletgate's tables call a, or "".
func (s *Server) knownContract(a common.Address) string {
	if u := s.network.Uniswap; u != nil {
		switch a {
		case u.SwapRouter02:
			return "Uniswap SwapRouter02"
		case u.QuoterV2:
			return "Uniswap QuoterV2"
		case u.Factory:
			return "Uniswap v3 factory"
		}
	}
	if t, ok := policy.TokenByAddress(s.chainID, a); ok {
		return t.Symbol + " token contract"
	}
	if a == s.address {
		return "this wallet"
	}
	return ""
}

// changesText adds the changes to a preview text.
func changesText(b *strings.Builder, c changesJSON) {
	fmt.Fprintf(b, "This will: %s (from the simulation of these exact calls on the latest block).\n", c.Summary)
	for _, a := range c.Allowances {
		what := "raised: the spender can move this without asking again; it counts against the token's caps"
		if !a.Exposure {
			what = "lowered or revoked: counts nothing"
		}
		name := ""
		if a.SpenderKnown != "" {
			name = " (" + a.SpenderKnown + ")"
		}
		fmt.Fprintf(b, "Allowance: %s for %s%s: %s → %s (%s)\n", marked(a.Symbol, a.Known), a.Spender, name, a.Before, a.After, what)
	}
}
