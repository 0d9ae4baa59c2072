package chain

// Nodes as they are: the HTTP layer under every endpoint, below the call
// sites. Rules of this file:
//   - A batch longer than the node's batch limit is split into batches of at
//     most that many and their answers joined: the client above sees one
//     answer. The limit is none until the operator sets one
//     (WALLETGATE_RPC_BATCH_LIMIT) or a node refuses a batch as too large
//     (geth "batch too large", Besu "Number of requests exceeds max batch
//     size", a provider's HTTP 413): then the batch is split (the number the
//     node names, or half) and the smaller size kept for the endpoint.
//   - HTTP 429 and 502/503/504 (and a 500 that carries no JSON-RPC answer)
//     are retried with backoff, honouring Retry-After, only while the
//     request's deadline (the RPC timeout) leaves room for the wait.
//   - A request carrying a broadcast (eth_sendRawTransaction,
//     eth_sendRawTransactionSync) is never sent twice by this layer, whatever
//     the answer: the outcome rule (engine/broadcast.go) decides re-sends.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// broadcastMethods are the requests this layer never re-sends.
var broadcastMethods = map[string]bool{"eth_sendRawTransaction": true, "eth_sendRawTransactionSync": true}

// maxRetries bounds the retries of one request, besides its deadline.
const maxRetries = 6

// nodeTransport is an endpoint's http.RoundTripper.
type nodeTransport struct {
	base http.RoundTripper

	mu         sync.Mutex
	batchLimit int // 0: none known
	retried    int // requests re-sent after a 429 or 5xx (for tests and logs)
	splits     int // batches split
}

func newNodeTransport() *nodeTransport {
	return &nodeTransport{base: http.DefaultTransport}
}

// limit is the batch limit in force (0: none).
func (t *nodeTransport) limit() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.batchLimit
}

// setLimit sets the batch limit to n when n is lower than the one in force
// (or none is): a limit only ever shrinks.
func (t *nodeTransport) setLimit(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n > 0 && (t.batchLimit == 0 || n < t.batchLimit) {
		t.batchLimit = n
	}
}

func (t *nodeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Method != http.MethodPost {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	msgs, isBatch := splitBatch(body)
	if !isBatch {
		return t.send(req, body, carriesBroadcast(msgs))
	}
	return t.sendBatch(req, msgs)
}

// sendBatch sends a batch in pieces of at most the limit, learning a lower
// limit from a node's refusal, and joins the answers.
func (t *nodeTransport) sendBatch(req *http.Request, msgs []json.RawMessage) (*http.Response, error) {
	broadcast := carriesBroadcast(msgs)
	for {
		n := t.limit()
		if n == 0 || n >= len(msgs) {
			resp, err := t.send(req, joinBatch(msgs), broadcast)
			if err != nil || broadcast || len(msgs) < 2 {
				return resp, err
			}
			learned, refused, rerr := batchRefusal(resp, len(msgs))
			if rerr != nil {
				return nil, rerr
			}
			if !refused {
				return resp, nil
			}
			t.setLimit(learned)
			if t.limit() >= len(msgs) { // it refused a size the limit allows
				t.setLimit(len(msgs) / 2)
			}
			continue
		}
		t.mu.Lock()
		t.splits++
		t.mu.Unlock()
		var joined []json.RawMessage
		for start := 0; start < len(msgs); start += n {
			part := msgs[start:min(start+n, len(msgs))]
			sub, err := t.sendBatch(req, part)
			if err != nil {
				return nil, err
			}
			ans, err := io.ReadAll(sub.Body)
			sub.Body.Close()
			if err != nil {
				return nil, err
			}
			if sub.StatusCode/100 != 2 {
				sub.Body = io.NopCloser(bytes.NewReader(ans))
				return sub, nil
			}
			var elems []json.RawMessage
			if json.Unmarshal(ans, &elems) != nil {
				// One answer for a whole part (a node's error for the batch):
				// pass it on as the answer, the client reports it.
				sub.Body = io.NopCloser(bytes.NewReader(ans))
				return sub, nil
			}
			joined = append(joined, elems...)
		}
		out := joinBatch(joined)
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(out)),
			ContentLength: int64(len(out)), Request: req}, nil
	}
}

// send posts body, retrying 429 and 5xx answers with backoff within the
// request's deadline unless it carries a broadcast.
func (t *nodeTransport) send(req *http.Request, body []byte, broadcast bool) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		r := req.Clone(ctx)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		resp, err := t.base.RoundTrip(r)
		if err != nil || broadcast || attempt >= maxRetries || !retryable(resp) {
			return resp, err
		}
		wait := retryWait(resp.Header.Get("Retry-After"), attempt, time.Now())
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			return resp, nil // the timeout leaves no room: the caller sees the 429/5xx
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
		t.mu.Lock()
		t.retried++
		t.mu.Unlock()
	}
}

// retryable: a provider's rate limit, or a gateway that did not reach the
// node. A 500 carrying a JSON-RPC answer is the node's answer.
func retryable(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusInternalServerError:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		return !json.Valid(b)
	}
	return false
}

// retryWait is how long to wait before attempt+1: Retry-After (seconds or
// an HTTP date) when the node gave it, else 100 ms doubling to 2 s.
func retryWait(h string, attempt int, now time.Time) time.Duration {
	if h = strings.TrimSpace(h); h != "" {
		if s, err := strconv.Atoi(h); err == nil && s >= 0 {
			return time.Duration(s) * time.Second
		}
		if at, err := http.ParseTime(h); err == nil {
			return max(at.Sub(now), 0)
		}
	}
	return min(100*time.Millisecond<<attempt, 2*time.Second)
}

// splitBatch parses body as a JSON-RPC batch (isBatch) or a single request.
func splitBatch(body []byte) (msgs []json.RawMessage, isBatch bool) {
	b := bytes.TrimLeft(body, " \t\r\n")
	if len(b) > 0 && b[0] == '[' && json.Unmarshal(b, &msgs) == nil {
		return msgs, true
	}
	return []json.RawMessage{body}, false
}

func joinBatch(msgs []json.RawMessage) []byte {
	out, _ := json.Marshal(msgs)
	return out
}

// carriesBroadcast reports whether any request sends a transaction.
func carriesBroadcast(msgs []json.RawMessage) bool {
	for _, m := range msgs {
		var r struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(m, &r) != nil || broadcastMethods[r.Method] {
			return true // unreadable: assume the worst
		}
	}
	return false
}

// batchTooLarge matches the words nodes and providers use to refuse a batch
// for its size: geth and reth ("batch too large"), Besu ("Number of
// requests exceeds max batch size"), jsonrpsee servers ("The batch request
// was too large", "Exceeded max limit of N"), hosted providers ("batch size
// too large", "batch limit exceeded", "maximum batch size is N").
var batchTooLarge = regexp.MustCompile(`(?i)batch[^"]{0,40}(too large|too big|exceed|limit|max)|exceeds? max(imum)? batch|exceeded max limit of`)

var firstNumber = regexp.MustCompile(`\d+`)

// batchRefusal reads a batch's answer (leaving resp readable) and says
// whether the node refused it for its size, and the limit it named (0:
// none). A refused batch's answer is one error (alone, or as a one-element
// array) where n answers were due, or HTTP 413.
func batchRefusal(resp *http.Response, n int) (limit int, refused bool, err error) {
	if resp.StatusCode == http.StatusRequestEntityTooLarge {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return 0, true, nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, false, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	type answer struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	var one answer
	var many []answer
	switch {
	case json.Unmarshal(b, &many) == nil && len(many) > 0 && len(many) < n:
		one = many[0]
	case json.Unmarshal(b, &one) == nil:
	default:
		return 0, false, nil
	}
	if one.Error == nil || !batchTooLarge.MatchString(one.Error.Message) {
		return 0, false, nil
	}
	if s := firstNumber.FindString(one.Error.Message); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 && v < n {
			limit = v
		}
	}
	if limit == 0 {
		limit = max(n/2, 1)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return limit, true, nil
}

// SetBatchLimit sets the most requests one batch sends to each endpoint (0:
// none until a node refuses a batch as too large). Call it before the client
// is shared.
func (c *Client) SetBatchLimit(n int) {
	for _, ep := range c.endpoints {
		if ep.transport != nil {
			ep.transport.setLimit(n)
		}
	}
}

// BatchLimit is the batch limit in force for the endpoint in use (0: none).
func (c *Client) BatchLimit() int {
	c.mu.Lock()
	ep := c.endpoints[c.current]
	c.mu.Unlock()
	if ep.transport == nil {
		return 0
	}
	return ep.transport.limit()
}

// TransportStats is what the HTTP layer of the endpoint in use did: the
// requests it re-sent after a 429 or 5xx, and the batches it split.
func (c *Client) TransportStats() (retried, splits int) {
	c.mu.Lock()
	ep := c.endpoints[c.current]
	c.mu.Unlock()
	if ep.transport == nil {
		return 0, 0
	}
	ep.transport.mu.Lock()
	defer ep.transport.mu.Unlock()
	return ep.transport.retried, ep.transport.splits
}
