package tools

// Tool calls held until the node is known. A start answers initialize and
// tools/list from the configuration alone, while the node is still being
// asked for its chain id and genesis (the start-up batch): the list and
// the instructions say nothing the node decides. A tool call is what needs
// the node, and the journal bound to its chain: it waits here until the
// check has passed, or is refused with CodeNodeCheckFailed when it failed.
// Nothing is read, recorded, signed or sent before.

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
)

// CodeNodeCheckFailed refuses a tool call when the start-up check of the
// node (its chain id, its genesis, the journal's binding to it) failed.
const CodeNodeCheckFailed = "NODE_CHECK_FAILED"

// Hold makes every chain's tool calls wait for ready before anything else.
// ready reports the check's outcome (it is called once per call, so it
// must remember it) and, when the start had to be built again (a journal
// that turned out to be another chain's), the Chains that serve instead:
// a held call then goes to that chain's Server there. Call Hold before
// serving.
func (c *Chains) Hold(ready func(context.Context) (*Chains, error)) {
	for _, s := range c.servers {
		s.hold = ready
	}
}

// held waits for the hold, if there is one. It returns the result that
// answers the call instead (a refusal, or the call served by the Server
// built in this one's place) with done, or not done when the call goes on
// here.
func (s *Server) held(ctx context.Context, name string, req mcp.CallToolRequest) (res *mcp.CallToolResult, done bool, err error) {
	if s.hold == nil {
		return nil, false, nil
	}
	live, err := s.hold(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, true, ctx.Err()
		}
		return refusalResult(refuse(CodeNodeCheckFailed, "%s: the node's start-up check failed: %v. Nothing was read, signed or sent. The operator must fix the configuration (the message says how) and restart walletgate; until then every tool call is refused.", name, err)), true, nil
	}
	if live != nil {
		for _, t := range live.servers {
			if t.chainID == s.chainID && t != s {
				t.prepare()
				res, err := t.dispatch(name)(ctx, req)
				return res, true, err
			}
		}
	}
	return nil, false, nil
}
