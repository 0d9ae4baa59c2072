// Package chain is walletgate's only door to the node: an RPC client over one
// or more endpoints, account and ERC-20 reads, receipts with decoded transfers,
// simulation, sending and inclusion.
//
// Rules of this file:
//   - The chain id and the genesis block's hash are read once, at Dial (or
//     CheckChainID), in one batch, and every fallback endpoint must report
//     the same id and genesis before it is used: a chain is its genesis, and
//     a node on another chain with the same id is another chain.
//   - A call falls over to the next endpoint on transport errors only; an
//     answer from a node (a JSON-RPC error) is final.
//   - No error leaves this package with an endpoint's URL in it: errors name
//     the host only, because URLs carry API keys in their paths and userinfo.
package chain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// endpoint is one node connection and what is safe to say about it.
type endpoint struct {
	rpc      *rpc.Client
	host     string   // scheme://host[:port], safe to display
	raw      string   // the URL as configured: never displayed
	secrets  []string // substrings of the URL that must never be displayed
	verified bool     // its chain id and genesis have been checked against Client's

	transport *nodeTransport // the HTTP layer under rpc (nil: not HTTP, or built by the caller)
	simulate  simulateSupport
	opStack   opStackFlag
	syncForm  atomic.Int32 // the sync send's timeout form its probe showed (syncsend.go)
}

// Client reads from and writes to one chain through one or more endpoints.
// It is safe for concurrent use.
type Client struct {
	chainID *big.Int
	genesis common.Hash // zero until a node has said it (Dial, CheckChainID)
	meta    metaCache
	// syncSend: the node answers eth_sendRawTransactionSync (syncsend.go);
	// syncForm: the form of its timeout the node takes (timeoutNumber…).
	syncSend atomic.Bool
	syncForm atomic.Int32

	// headsMu guards the first and latest heads read (BlockTime).
	headsMu             sync.Mutex
	firstHead, lastHead Head

	// callTimeout bounds every request (0: DefaultCallTimeout), so that a
	// node that never answers fails the call instead of hanging it.
	callTimeout time.Duration

	mu        sync.Mutex
	endpoints []*endpoint
	current   int
}

// Error is an RPC failure with everything secret removed. It deliberately does
// not wrap the underlying error, whose text may contain the endpoint URL.
type Error struct {
	Host    string // the endpoint that failed, host only
	Method  string // the JSON-RPC method
	Code    int    // the JSON-RPC error code, 0 for transport failures
	Message string // the sanitised cause
	Data    any    // JSON-RPC error data (revert payloads), if any
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s at %s: %s", e.Method, e.Host, e.Message)
}

// Transport reports whether the failure happened before a node answered.
func (e *Error) Transport() bool { return e.Code == 0 }

// Dial connects to the given endpoint URLs and reads the chain id and the
// genesis hash from the first that answers. The others are checked before
// their first use.
func Dial(ctx context.Context, urls []string) (*Client, error) {
	c, err := connect(ctx, urls)
	if err != nil {
		return nil, err
	}
	if err := c.readChainID(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Open connects to urls like Dial but does not ask the node for its chain
// id: the client reports id until CheckChainID has asked, and keeps
// reporting it (the caller compares what the node said); Genesis is zero
// until then. What uses the client can be built during that round trip;
// nothing may be sent through it before CheckChainID has returned the id
// the caller expects.
func Open(ctx context.Context, urls []string, id *big.Int) (*Client, error) {
	c, err := connect(ctx, urls)
	if err != nil {
		return nil, err
	}
	c.chainID = new(big.Int).Set(id)
	return c, nil
}

// connect makes a client with an endpoint per URL (an HTTP endpoint asks
// nothing yet; a WebSocket one connects).
func connect(ctx context.Context, urls []string) (*Client, error) {
	if len(urls) == 0 {
		return nil, errors.New("dial: no RPC endpoint configured")
	}
	c := &Client{}
	for _, raw := range urls {
		host, secrets := redact(raw)
		tr := newNodeTransport()
		rc, err := rpc.DialOptions(ctx, raw, rpc.WithHTTPClient(&http.Client{Transport: tr}))
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("dial %s: %s", host, scrub(err.Error(), raw, host, secrets))
		}
		c.endpoints = append(c.endpoints, &endpoint{rpc: rc, host: host, raw: raw, secrets: secrets, transport: tr})
	}
	return c, nil
}

// CheckChainID asks the endpoints, in order, for their chain id and genesis
// block (one round trip each) and makes the first that answers the current
// one; it returns the id that endpoint reported, or why none answered. The
// client's ChainID does not change; its Genesis becomes that endpoint's, and
// every fallback must then have it too.
func (c *Client) CheckChainID(ctx context.Context) (*big.Int, error) {
	i, id, genesis, sync, err := c.firstChainID(ctx)
	if err != nil {
		return nil, err
	}
	c.syncSend.Store(sync)
	c.syncForm.Store(c.endpoints[i].syncForm.Load())
	c.mu.Lock()
	c.current = i
	c.genesis = genesis
	if id.Cmp(c.chainID) == 0 {
		c.endpoints[i].verified = true
	}
	c.mu.Unlock()
	return id, nil
}

// firstChainID is the chain id and genesis hash of the first endpoint that
// answers, its index, and whether it has eth_sendRawTransactionSync.
func (c *Client) firstChainID(ctx context.Context) (int, *big.Int, common.Hash, bool, error) {
	var firstErr error
	for i, ep := range c.endpoints {
		id, genesis, sync, err := ep.identity(ctx, true)
		if err == nil {
			return i, id, genesis, sync, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return 0, nil, common.Hash{}, false, fmt.Errorf("read chain id: %w", firstErr)
}

// NewFromRPC wraps an already connected RPC client (the in-process dev chain)
// and reads its chain id.
func NewFromRPC(ctx context.Context, rc *rpc.Client, host string) (*Client, error) {
	c := &Client{endpoints: []*endpoint{{rpc: rc, host: host}}}
	if err := c.readChainID(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) readChainID(ctx context.Context) error {
	i, id, genesis, sync, err := c.firstChainID(ctx)
	if err != nil {
		return err
	}
	c.syncSend.Store(sync)
	c.syncForm.Store(c.endpoints[i].syncForm.Load())
	c.chainID, c.genesis, c.current = id, genesis, i
	c.endpoints[i].verified = true
	return nil
}

// identity asks the endpoint for its chain id and its genesis block's hash
// in one batch: what says which chain a node is on. With probe, the same
// batch asks whether it has eth_sendRawTransactionSync (syncsend.go); a
// node that refuses the whole batch for the probe is asked again without it.
func (ep *endpoint) identity(ctx context.Context, probe bool) (*big.Int, common.Hash, bool, error) {
	var (
		id     hexutil.Big
		block  json.RawMessage
		oracle hexutil.Bytes
	)
	elems := []rpc.BatchElem{
		{Method: "eth_chainId", Result: &id},
		{Method: "eth_getBlockByNumber", Args: []any{"0x0", false}, Result: &block},
		simulateProbe(),
		opStackProbe(&oracle),
	}
	syncAt := len(elems)
	if probe {
		elems = append(elems, syncProbe())
	}
	if err := ep.rpc.BatchCallContext(ctx, elems); err != nil {
		if probe && ctx.Err() == nil {
			return ep.identity(ctx, false)
		}
		return nil, common.Hash{}, false, ep.wrap("eth_chainId", err)
	}
	ep.learnSimulate(elems[2].Error)
	ep.opStack.v.Store(elems[3].Error == nil && len(oracle) > 0)
	if elems[0].Error != nil {
		return nil, common.Hash{}, false, ep.wrap("eth_chainId", elems[0].Error)
	}
	if elems[1].Error != nil {
		return nil, common.Hash{}, false, ep.wrap("eth_getBlockByNumber", elems[1].Error)
	}
	var h struct {
		Hash *common.Hash `json:"hash"`
	}
	if isNull(block) || json.Unmarshal(block, &h) != nil || h.Hash == nil || *h.Hash == (common.Hash{}) {
		return nil, common.Hash{}, false, &Error{Host: ep.host, Method: "eth_getBlockByNumber", Code: -1,
			Message: "the node returned no genesis block (block 0): walletgate needs its hash to tell this chain from another with the same id"}
	}
	// The probe's empty bytes are no transaction: a node that has the
	// method answers a decoding error, one that lacks it "method not found".
	sync := probe && elems[syncAt].Error != nil && !methodMissing(elems[syncAt].Error)
	if sync {
		ep.syncForm.Store(probeForm(elems[syncAt].Error))
	}
	return (*big.Int)(&id), *h.Hash, sync, nil
}

// ChainID is the chain id read at Dial. The returned value must not be modified.
func (c *Client) ChainID() *big.Int { return new(big.Int).Set(c.chainID) }

// Genesis is the hash of the chain's genesis block as the node said it at
// Dial or CheckChainID; zero before (a client from Open not yet checked).
func (c *Client) Genesis() common.Hash {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.genesis
}

// Host is the display form (scheme://host[:port]) of the endpoint in use.
func (c *Client) Host() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endpoints[c.current].host
}

// Close closes every endpoint connection.
func (c *Client) Close() {
	for _, ep := range c.endpoints {
		ep.rpc.Close()
	}
}

// DefaultCallTimeout bounds one request to a node.
const DefaultCallTimeout = 20 * time.Second

// SetCallTimeout sets the bound on each request to a node (0: the default).
// Call it before the client is shared.
func (c *Client) SetCallTimeout(d time.Duration) { c.callTimeout = d }

// bounded gives ctx the per-request deadline unless it has an earlier one.
func (c *Client) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	d := c.callTimeout
	if d <= 0 {
		d = DefaultCallTimeout
	}
	return context.WithTimeout(ctx, d)
}

// call runs one JSON-RPC call, falling over to the next endpoint on a
// transport failure.
func (c *Client) call(ctx context.Context, result any, method string, args ...any) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	return c.do(ctx, method, func(ep *endpoint) error {
		return ep.rpc.CallContext(ctx, result, method, args...)
	})
}

// batch runs independent calls in one round trip. Per-element errors are
// sanitised in place; the returned error is for the batch as a whole.
func (c *Client) batch(ctx context.Context, elems []rpc.BatchElem) error {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	var used *endpoint
	err := c.do(ctx, "batch", func(ep *endpoint) error {
		used = ep
		for i := range elems {
			elems[i].Error = nil
		}
		return ep.rpc.BatchCallContext(ctx, elems)
	})
	if err != nil {
		return err
	}
	for i := range elems {
		if elems[i].Error != nil {
			elems[i].Error = used.wrap(elems[i].Method, elems[i].Error)
		}
	}
	return nil
}

// do runs f against the current endpoint and then, on transport failures,
// against each other endpoint whose chain id matches.
func (c *Client) do(ctx context.Context, method string, f func(*endpoint) error) error {
	c.mu.Lock()
	start := c.current
	n := len(c.endpoints)
	c.mu.Unlock()

	var firstErr error
	for k := 0; k < n; k++ {
		i := (start + k) % n
		ep := c.endpoints[i]
		c.mu.Lock()
		verified := ep.verified
		c.mu.Unlock()
		if !verified {
			id, genesis, _, err := ep.identity(ctx, false)
			if err != nil {
				firstErr = firstOf(firstErr, err)
				continue
			}
			if id.Cmp(c.chainID) != 0 {
				firstErr = firstOf(firstErr, &Error{Host: ep.host, Method: "eth_chainId",
					Message: fmt.Sprintf("fallback endpoint is on chain %s, not %s; it is not used", id, c.chainID)})
				continue
			}
			c.mu.Lock()
			want := c.genesis
			c.mu.Unlock()
			if want != (common.Hash{}) && genesis != want {
				firstErr = firstOf(firstErr, &Error{Host: ep.host, Method: "eth_getBlockByNumber",
					Message: fmt.Sprintf("fallback endpoint is on chain %s with genesis %s, not %s: another chain with the same id; it is not used", id, genesis.Hex(), want.Hex())})
				continue
			}
			c.mu.Lock()
			ep.verified = true
			c.mu.Unlock()
		}
		err := f(ep)
		if err == nil {
			if i != start {
				c.mu.Lock()
				c.current = i
				c.mu.Unlock()
			}
			return nil
		}
		werr := ep.wrap(method, err)
		if !werr.Transport() || ctx.Err() != nil {
			return werr
		}
		firstErr = firstOf(firstErr, werr)
	}
	return firstErr
}

func firstOf(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// wrap turns an RPC library error into an *Error with no secret in it.
func (ep *endpoint) wrap(method string, err error) *Error {
	var we *Error
	if errors.As(err, &we) {
		return we
	}
	e := &Error{Host: ep.host, Method: method, Message: scrub(err.Error(), ep.raw, ep.host, ep.secrets)}
	var re rpc.Error
	if errors.As(err, &re) {
		e.Code = re.ErrorCode()
		if e.Code == 0 {
			e.Code = -1 // a node answered; never mistake it for a transport failure
		}
	}
	var de rpc.DataError
	if errors.As(err, &de) {
		e.Data = de.ErrorData()
	}
	var he rpc.HTTPError
	if errors.As(err, &he) {
		// An HTTP status is the proxy or node refusing, not a JSON-RPC answer:
		// another endpoint may well serve it.
		e.Code = 0
		e.Message = "HTTP " + he.Status
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		e.Code = 0
	}
	return e
}

// redact returns the display form of raw and the substrings of it that must
// never be shown.
func redact(raw string) (string, []string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable RPC URL)", []string{raw}
	}
	var secrets []string
	if u.User != nil {
		secrets = append(secrets, u.User.String(), u.User.Username()+":***", u.User.Username()+"@")
		if p, ok := u.User.Password(); ok && p != "" {
			secrets = append(secrets, p)
		}
	}
	if len(u.Path) > 1 {
		secrets = append(secrets, u.Path, u.EscapedPath())
	}
	if u.RawQuery != "" {
		secrets = append(secrets, u.RawQuery)
	}
	if u.Fragment != "" {
		secrets = append(secrets, u.Fragment)
	}
	return u.Scheme + "://" + u.Host, secrets
}

// scrub replaces the configured URL in msg by its display form, then removes
// every remaining secret substring (library errors may quote the URL with the
// password masked, or only parts of it).
func scrub(msg, raw, host string, secrets []string) string {
	if raw != "" {
		msg = strings.ReplaceAll(msg, raw, host)
	}
	for _, s := range secrets {
		if len(s) >= 2 {
			msg = strings.ReplaceAll(msg, s, "(redacted)")
		}
	}
	return msg
}
