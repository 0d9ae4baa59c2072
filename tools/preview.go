package tools

// One preview value per write kind, rendered here three ways. Rules of this
// file: a kind builds its preview value once (the JSON preview, with what
// the person needs besides it in unexported fields) and present renders it:
// the JSON result is the value itself; the model's text and the approval
// page share one frame (the header, the network, the caps after, the
// simulation, the warnings, the expiry and how to confirm; on the page the
// wallet, the caps left and the most the fees can be) and add the kind's own
// facts by its body and page methods, both reading the same value.

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

// kindPreview is a write kind's preview value.
type kindPreview interface {
	base() previewCommon
	// headline is the text's first line: what has not happened yet.
	headline() string
	// title is the page's one line for lists.
	title() string
	// body writes the kind's own lines of the text, after the network.
	body(b *strings.Builder)
	// page adds the kind's own facts to the page.
	page(d *approval.Display)
}

// present issues in's confirmation and renders pv as the JSON result, the
// model's text and the person's page.
func present[P kindPreview](s *Server, tool string, in keyed, p *engine.Plan, pv P) (*mcp.CallToolResult, *Refusal) {
	display := func() approval.Display {
		d := s.display(pv.title(), pv.base())
		pv.page(&d)
		if v := usdOf(p.USD); v != nil {
			d.CapsLeft = append([]string{"USD value counted: $" + v.Total + " (Chainlink prices read on chain)"}, d.CapsLeft...)
			for _, l := range v.Assets {
				if !l.InTotal {
					d.Warnings = append(d.Warnings, l.symbol+" is not in the USD total: the operator left it unpriced ("+policy.EnvUSDUnpriced+"); only its own caps bound it")
				}
			}
		}
		return d
	}
	return s.offer(tool, s.canonical(in), p, display, func(c confirmation) (any, string) {
		r := previewFor(pv, c, tool)
		r.USD = usdOf(p.USD)
		var b strings.Builder
		b.WriteString(pv.headline())
		pv.base().networkLine(&b)
		pv.body(&b)
		usdText(&b, r.USD)
		s.previewTail(&b, pv.base(), r.ExpiresAt, tool, c)
		return r, b.String()
	})
}

// unverifiedWarning is every preview's warning about a token not in the
// known-token table.
const unverifiedWarning = "UNVERIFIED token: not in walletgate's known-token table; its symbol is what the contract says"

// headline is a transaction's: a kind that sends none says its own.
func (previewCommon) headline() string { return "PREVIEW — nothing has been signed or sent.\n" }

// maxFees is the most a plan's legs can cost in network fees, in wei.
func maxFees(p *engine.Plan) *big.Int { return new(big.Int).Sub(p.MaxCost(), p.Value()) }

// legPreviews lists a plan's legs for a preview.
func legPreviews(legs []engine.Leg) []legPreview {
	out := make([]legPreview, 0, len(legs))
	for _, l := range legs {
		out = append(out, legPreview{Label: l.Label, To: l.Call.To.Hex(), Value: policy.FormatAmount(valueOrZero(l.Call.Value), 18),
			GasLimit: l.Call.Gas, MaxFee: policy.FormatAmount(l.Call.MaxFees(), 18),
			Calldata: "0x" + fmt.Sprintf("%x", l.Call.Data)})
	}
	return out
}

// legsText lists the legs in a preview text.
func legsText(b *strings.Builder, legs []legPreview) {
	fmt.Fprintf(b, "Transactions, in order (%d):\n", len(legs))
	for i, l := range legs {
		fmt.Fprintf(b, "  %d. %s: to %s, value %s ETH, gas limit %d, max fee %s ETH\n", i+1, l.Label, l.To, l.Value, l.GasLimit, l.MaxFee)
	}
}

// maxFeesText is the legs' fee line of a preview text.
func maxFeesText(b *strings.Builder, maxFee string) {
	fmt.Fprintf(b, "Max fees:  %s ETH in all, paid in ETH\n", maxFee)
}
