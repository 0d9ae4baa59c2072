package tools

// The USD value of a preview (engine/usd.go): one value, rendered in the
// result, the text and the person's page.

import (
	"fmt"
	"strings"
	"time"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// usdJSON is a preview's USD value, when a cap window caps USD. Its schema
// is kept bare (every write tool's result carries it; tools/list has a
// budget): amounts are decimal strings, round_time RFC 3339.
type usdJSON struct {
	Total  string        `json:"total"`
	Assets []usdLineJSON `json:"assets"`
}

// usdLineJSON is one asset's part: in_total false when the operator left it
// unpriced; else its USD value at price (dollars per unit), from feed's round.
type usdLineJSON struct {
	Asset     string `json:"asset"`
	Amount    string `json:"amount"`
	InTotal   bool   `json:"in_total"`
	USD       string `json:"usd,omitempty"`
	Price     string `json:"price,omitempty"`
	Feed      string `json:"feed,omitempty"`
	Round     string `json:"round,omitempty"`
	RoundTime string `json:"round_time,omitempty"`

	symbol string // for the text
}

// usdOf renders v; nil without USD caps.
func usdOf(v *engine.USDValue) *usdJSON {
	if v == nil {
		return nil
	}
	out := &usdJSON{Total: engine.USD.Format(v.Total), Assets: []usdLineJSON{}}
	for _, l := range v.Lines {
		line := usdLineJSON{Asset: l.Asset.ID(), Amount: l.Asset.Format(l.Amount), InTotal: !l.Unpriced, symbol: l.Asset.Marked()}
		if !l.Unpriced {
			line.USD, line.Price, line.Feed = engine.USD.Format(l.USD), l.Price(), l.Round.Feed.Hex()
			line.Round = l.Round.RoundID.String()
			line.RoundTime = time.Unix(int64(l.Round.UpdatedAt), 0).UTC().Format(time.RFC3339)
		}
		out.Assets = append(out.Assets, line)
	}
	return out
}

// usdText writes the USD value's lines of a preview text.
func usdText(b *strings.Builder, v *usdJSON) {
	if v == nil {
		return
	}
	fmt.Fprintf(b, "USD value: $%s, counted against the USD caps\n", v.Total)
	for _, l := range v.Assets {
		if !l.InTotal {
			fmt.Fprintf(b, "  %s %s: NOT IN THE USD TOTAL (the operator's %s): bounded by its own caps only\n", l.Amount, l.symbol, policy.EnvUSDUnpriced)
			continue
		}
		fmt.Fprintf(b, "  %s %s = $%s at $%s (Chainlink feed %s, round %s of %s)\n", l.Amount, l.symbol, l.USD, l.Price, l.Feed, l.Round, l.RoundTime)
	}
}
