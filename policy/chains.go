package policy

// Several chains in one process. WALLETGATE_CHAIN_ID lists the chains, the
// first being the default (a tool call without a network argument is the
// default chain's); WALLETGATE_RPC lists one node entry per chain in the same
// order, a chain's fallback nodes separated by '|'. With one chain id every
// URL of WALLETGATE_RPC is a fallback of that chain, as before several
// chains existed, whether separated by ',' or '|'. Cap lists may name a
// chain per item (caplist.go); an item without one is the default chain's.
// ForChain is the configuration of one chain: its node, its id and its cap
// items, every other setting shared.

import (
	"fmt"
	"slices"
	"strings"
)

// MaxChains is the most chains WALLETGATE_CHAIN_ID may list.
const MaxChains = 8

// ChainNode is one configured chain: its id and its node URLs, in fallback
// order.
type ChainNode struct {
	ID  uint64
	RPC []string
}

// parseChainIDs parses WALLETGATE_CHAIN_ID: comma-separated chain ids or
// known names, none twice.
func parseChainIDs(value string) ([]uint64, *ConfigError) {
	expected := "a decimal chain id greater than 0, like 1 for Ethereum mainnet or 11155111 for Sepolia; or, for several chains, comma-separated ids or names (" + strings.Join(NetworkNames(), ", ") + "), the default chain first, like 8453,1"
	items := strings.Split(value, ",")
	if len(items) > MaxChains {
		return nil, configError(EnvChainID, value, fmt.Sprintf("%s (at most %d chains; got %d)", expected, MaxChains, len(items)))
	}
	ids := make([]uint64, 0, len(items))
	for i, item := range items {
		id, ok := ParseNetwork(trimSpaceTab(item))
		if !ok {
			return nil, configError(EnvChainID, value, fmt.Sprintf("%s (item %d is not one)", expected, i+1))
		}
		if slices.Contains(ids, id) {
			return nil, configError(EnvChainID, value, fmt.Sprintf("%s (chain %d is listed twice)", expected, id))
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// pairChains pairs the chain ids with WALLETGATE_RPC's node entries and
// checks that every cap item's chain is one of them. rpc is WALLETGATE_RPC's
// value ("" when unset), already checked by parseRPCList.
func (c *Config) pairChains(ids []uint64, rpc string) *ConfigError {
	var groups [][]string
	if rpc != "" {
		for _, entry := range strings.Split(rpc, ",") {
			var group []string
			for _, u := range strings.Split(entry, "|") {
				group = append(group, trimSpaceTab(u))
			}
			groups = append(groups, group)
		}
	}
	switch {
	case len(ids) <= 1:
		var id uint64
		if len(ids) == 1 {
			id = ids[0]
		}
		c.ChainID = id
		if rpc != "" {
			c.Chains = []ChainNode{{ID: id, RPC: c.RPC}}
		}
	case rpc == "":
		// No node at all: the start says WALLETGATE_RPC is not set.
		c.ChainID = ids[0]
	case len(groups) != len(ids):
		return &ConfigError{Var: EnvRPC, Value: redactedList(groups), Expected: fmt.Sprintf("one node entry per chain of %s, in its order (%d chains, %d entries); separate a chain's fallback nodes with |, like https://base.example|https://base2.example,https://eth.example", EnvChainID, len(ids), len(groups))}
	default:
		c.ChainID = ids[0]
		for i, id := range ids {
			c.Chains = append(c.Chains, ChainNode{ID: id, RPC: groups[i]})
		}
		c.RPC = groups[0]
	}
	served := func(id uint64) bool {
		return id == 0 || id == c.ChainID || slices.ContainsFunc(c.Chains, func(n ChainNode) bool { return n.ID == id })
	}
	for _, l := range []struct {
		name    string
		entries []CapEntry
	}{{EnvCapPerTx, c.CapPerTx}, {EnvCapPerSession, c.CapPerSession}, {EnvCapPerDay, c.CapPerDay}, {EnvHumanAbove, c.HumanAbove}} {
		seen := map[string]bool{}
		for _, e := range l.entries {
			if !served(e.Chain) {
				return &ConfigError{Var: l.name, Value: display(formatCapList([]CapEntry{e}), maxValueDisplay),
					Expected: fmt.Sprintf("items for the chains walletgate serves (%s); chain %d (%s) is not in %s", c.chainList(), e.Chain, LookupNetwork(e.Chain).Name, EnvChainID)}
			}
			id := e.Chain
			if id == 0 {
				id = c.ChainID
			}
			key := fmt.Sprintf("%d:%s", id, e.Asset)
			if seen[key] {
				return &ConfigError{Var: l.name, Value: display(e.Asset, maxValueDisplay),
					Expected: fmt.Sprintf("each asset once per chain: %s is given for the default chain %s both with and without its prefix", e.Asset, NetworkSlug(c.ChainID))}
			}
			seen[key] = true
		}
	}
	return nil
}

// chainList names the configured chains for a message: "base (8453), ethereum (1)".
func (c *Config) chainList() string {
	var names []string
	for _, n := range c.Chains {
		names = append(names, fmt.Sprintf("%s (%d)", NetworkSlug(n.ID), n.ID))
	}
	if len(names) == 0 {
		return fmt.Sprintf("%s (%d)", NetworkSlug(c.ChainID), c.ChainID)
	}
	return strings.Join(names, ", ")
}

// redactedList shows node entries as RedactURL does.
func redactedList(groups [][]string) string {
	var entries []string
	for _, g := range groups {
		var urls []string
		for _, u := range g {
			urls = append(urls, RedactURL(u))
		}
		entries = append(entries, strings.Join(urls, "|"))
	}
	return strings.Join(entries, ",")
}

// ChainIDs lists the configured chains' ids, the default first; one id (0
// when WALLETGATE_CHAIN_ID is unset) with a single chain.
func (c Config) ChainIDs() []uint64 {
	if len(c.Chains) <= 1 {
		return []uint64{c.ChainID}
	}
	ids := make([]uint64, len(c.Chains))
	for i, n := range c.Chains {
		ids[i] = n.ID
	}
	return ids
}

// ForChain is the configuration of the configured chain id: its node, its
// id, its cap items (an unprefixed item when it is the default chain) and
// every other setting as configured. Its Chains lists that chain alone.
func (c Config) ForChain(id uint64) Config {
	out := c
	out.ChainID = id
	for _, n := range c.Chains {
		if n.ID == id {
			out.RPC = n.RPC
			out.Chains = []ChainNode{n}
		}
	}
	// A list with no item for this chain is, on this chain, a list not set:
	// its default applies (the window rule then holds per chain), and a
	// human-above tier without one asks the person for every write.
	pick := func(entries []CapEntry) []CapEntry {
		var kept []CapEntry
		for _, e := range entries {
			if e.Chain == id || (e.Chain == 0 && id == c.ChainID) {
				e.Chain = 0
				kept = append(kept, e)
			}
		}
		return kept
	}
	out.CapPerTx, out.CapPerSession, out.CapPerDay, out.HumanAbove = pick(c.CapPerTx), pick(c.CapPerSession), pick(c.CapPerDay), pick(c.HumanAbove)
	out.USDUnpriced = pick(c.USDUnpriced)
	out.PriceFeeds = nil
	for _, f := range c.PriceFeeds {
		if f.Chain == id || (f.Chain == 0 && id == c.ChainID) {
			f.Chain = id
			out.PriceFeeds = append(out.PriceFeeds, f)
		}
	}
	return out
}
