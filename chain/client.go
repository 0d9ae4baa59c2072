// Package chain is walletgate's only door to the node: an RPC client over one
// or more endpoints, account and ERC-20 reads, receipts with decoded transfers,
// simulation, sending and inclusion.
//
// Rules of this file:
//   - The chain id is read once, at Dial, and every fallback endpoint must
//     report the same id before it is used.
//   - A call falls over to the next endpoint on transport errors only; an
//     answer from a node (a JSON-RPC error) is final.
//   - No error leaves this package with an endpoint's URL in it: errors name
//     the host only, because URLs carry API keys in their paths and userinfo.
package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// endpoint is one node connection and what is safe to say about it.
type endpoint struct {
	rpc      *rpc.Client
	host     string   // scheme://host[:port], safe to display
	raw      string   // the URL as configured: never displayed
	secrets  []string // substrings of the URL that must never be displayed
	verified bool     // its chain id has been checked against Client.chainID
}

// Client reads from and writes to one chain through one or more endpoints.
// It is safe for concurrent use.
type Client struct {
	chainID *big.Int
	meta    metaCache

	blockTimeOnce sync.Once
	blockTime     time.Duration

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

// Dial connects to the given endpoint URLs and reads the chain id from the
// first that answers. The others are checked before their first use.
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
// reporting it (the caller compares what the node said). What uses the
// client can be built during that round trip; nothing may be sent through
// it before CheckChainID has returned the id the caller expects.
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
		rc, err := rpc.DialOptions(ctx, raw)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("dial %s: %s", host, scrub(err.Error(), raw, host, secrets))
		}
		c.endpoints = append(c.endpoints, &endpoint{rpc: rc, host: host, raw: raw, secrets: secrets})
	}
	return c, nil
}

// CheckChainID asks the endpoints, in order, for their chain id and makes
// the first that answers the current one; it returns the id that endpoint
// reported, or why none answered. The client's ChainID does not change.
func (c *Client) CheckChainID(ctx context.Context) (*big.Int, error) {
	i, id, err := c.firstChainID(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.current = i
	if id.Cmp(c.chainID) == 0 {
		c.endpoints[i].verified = true
	}
	c.mu.Unlock()
	return id, nil
}

// firstChainID is the chain id of the first endpoint that answers, and its
// index.
func (c *Client) firstChainID(ctx context.Context) (int, *big.Int, error) {
	var firstErr error
	for i, ep := range c.endpoints {
		id, err := ep.chainID(ctx)
		if err == nil {
			return i, id, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return 0, nil, fmt.Errorf("read chain id: %w", firstErr)
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
	i, id, err := c.firstChainID(ctx)
	if err != nil {
		return err
	}
	c.chainID, c.current = id, i
	c.endpoints[i].verified = true
	return nil
}

func (ep *endpoint) chainID(ctx context.Context) (*big.Int, error) {
	var id hexutil.Big
	if err := ep.rpc.CallContext(ctx, &id, "eth_chainId"); err != nil {
		return nil, ep.wrap("eth_chainId", err)
	}
	return (*big.Int)(&id), nil
}

// ChainID is the chain id read at Dial. The returned value must not be modified.
func (c *Client) ChainID() *big.Int { return new(big.Int).Set(c.chainID) }

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
			id, err := ep.chainID(ctx)
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
