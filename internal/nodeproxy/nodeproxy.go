// Package nodeproxy is a test helper: an HTTP JSON-RPC proxy on 127.0.0.1
// in front of a real node (the dev chain) that imitates a hosted provider —
// a batch limit, HTTP 429 with Retry-After, each client's words for a
// refused broadcast, a method it lacks, receipts that vanish in a one-block
// reorg, OP-stack receipts carrying l1Fee — and counts what reaches it. It
// answers honestly (by forwarding) whatever it is not told to fake, so a
// write through it really happens on the dev chain.
//
// It grew out of the fault proxies of engine/settle_test.go (faultNode) and
// cmd/walletgate/proxy_test.go (rpcProxy); new provider faults belong here.
package nodeproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// Proxy is the provider imitation. Its zero faults forward everything.
type Proxy struct {
	upstream string
	srv      *httptest.Server

	mu sync.Mutex
	// arrived counts requests per method as they reach the proxy (batch
	// elements each), before any fault.
	arrived map[string]int
	// forwarded counts requests per method that reached the node.
	forwarded map[string]int
	batches   []int // the size of every batch that arrived
	requests  int   // HTTP requests that arrived: round trips

	batchLimit int    // a batch larger is refused whole (0: none)
	batchWords string // the words of that refusal

	tooMany    int // the next tooMany HTTP requests are answered failStatus
	failStatus int
	retryAfter string // with this Retry-After header ("" none)
	limited    []time.Time
	after429   []time.Time // when each request following a 429 arrived

	broadcasts  int         // broadcasts that arrived (isBroadcast)
	lastSent    common.Hash // the last broadcast that arrived
	sendErr     string      // a broadcast answered with this error
	sendForward bool        // after forwarding it to the node
	sendTimes   int         // how many sends get sendErr (<0: all)
	sendSkip    int         // how many sends pass before sendErr applies
	onBroadcast func(n int) // run before broadcast n (from 0) is answered

	missing map[string]bool // methods the node "lacks": -32601
	// hexSyncTimeout: eth_sendRawTransactionSync takes its timeout only as a
	// 0x hex string (Arbitrum Nitro's and Polygon Bor's dialect); a number
	// is refused as "invalid argument 1", undecoded and unforwarded.
	hexSyncTimeout bool
	// reversed: a batch's elements are run, and answered, last first (a
	// node that does not serve a batch in order).
	reversed bool

	l1Fee     func(common.Hash) *big.Int // receipts gain "l1Fee" (nil: none)
	reorged   map[common.Hash]int        // receipt state per reorged tx: 0 not seen, 1 seen once, 2 hidden once, 3 back
	reorgNext bool

	served chan struct{} // closed, and replaced, when a request has been answered
}

// New starts a proxy in front of upstream (an http:// URL).
func New(upstream string) *Proxy {
	p := &Proxy{upstream: upstream, arrived: map[string]int{}, forwarded: map[string]int{}, missing: map[string]bool{}, reorged: map[common.Hash]int{},
		served: make(chan struct{})}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

// URL is the proxy's address.
func (p *Proxy) URL() string { return p.srv.URL }

// Close stops it.
func (p *Proxy) Close() { p.srv.Close() }

// HexSyncTimeout makes the proxy speak Arbitrum Nitro's (and Polygon
// Bor's) dialect of eth_sendRawTransactionSync: its timeout is taken only
// as a 0x hex string (forwarded to the dev chain as the number geth takes);
// a JSON number is refused with Nitro's words and reaches no node.
func (p *Proxy) HexSyncTimeout() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hexSyncTimeout = true
}

// ReverseBatches runs every batch's elements last first and answers them in
// that order: a node that serves a batch out of order (JSON-RPC lets it).
func (p *Proxy) ReverseBatches() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reversed = true
}

// BatchLimit refuses a batch of more than n requests as a node does, with
// words (geth's "batch too large" when empty): one error where n answers
// were due.
func (p *Proxy) BatchLimit(n int, words string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if words == "" {
		words = "batch too large"
	}
	p.batchLimit, p.batchWords = n, words
}

// TooManyRequests answers the next n HTTP requests with 429 and the given
// Retry-After header value ("" for none).
func (p *Proxy) TooManyRequests(n int, retryAfter string) {
	p.FailHTTP(n, http.StatusTooManyRequests, retryAfter)
}

// FailHTTP answers the next n HTTP requests with status (429, 502, 503…)
// and the given Retry-After header value ("" for none), without forwarding
// them.
func (p *Proxy) FailHTTP(n, status int, retryAfter string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tooMany, p.failStatus, p.retryAfter = n, status, retryAfter
}

// RateLimited is when each 429 was answered, and when the request after
// each arrived.
func (p *Proxy) RateLimited() (limited, next []time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.limited...), append([]time.Time(nil), p.after429...)
}

// SendError answers the next times broadcasts (eth_sendRawTransaction or
// eth_sendRawTransactionSync; times < 0: every one) with a JSON-RPC error of these words, after
// forwarding the transaction to the node when forward is set.
func (p *Proxy) SendError(words string, forward bool, times int) {
	p.SendErrorAfter(0, words, forward, times)
}

// SendErrorAfter is SendError for the broadcasts after the next skip ones,
// which pass untouched: a plan's later leg refused while its first lands.
func (p *Proxy) SendErrorAfter(skip int, words string, forward bool, times int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sendErr, p.sendForward, p.sendTimes, p.sendSkip = words, forward, times, skip
}

// OnBroadcast runs f(n) when the n-th broadcast (from 0, counting every
// one that arrived) arrives, before it is forwarded or answered: a test
// changes the chain at that exact point of a plan (a sequencer's new L1
// values while a leg is on its way) without waiting on time.
func (p *Proxy) OnBroadcast(f func(n int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onBroadcast = f
}

// Lack makes the node lack method: it answers -32601 as geth does.
func (p *Proxy) Lack(method string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.missing[method] = true
}

// L1Fee adds "l1Fee" (as an OP-stack node does) to every receipt: f's value
// for the transaction's hash.
func (p *Proxy) L1Fee(f func(common.Hash) *big.Int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.l1Fee = f
}

// Reorg makes tx's receipt disappear, as in a one-block reorg: the first
// lookup that finds it is answered, the next finds neither receipt nor
// block (the transaction back in the pool), and later ones find it one
// block of the same height and another hash (the replacing fork included
// it too), as the state at that height on the node still shows.
func (p *Proxy) Reorg(tx common.Hash) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reorged[tx] = 0
}

// ReorgNext is Reorg for the next broadcast that arrives.
func (p *Proxy) ReorgNext() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reorgNext = true
}

// Reorged reports whether tx's receipt has vanished and come back.
func (p *Proxy) Reorged(tx common.Hash) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reorged[tx] == 3
}

// Arrived is how many requests carrying method reached the proxy.
func (p *Proxy) Arrived(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.arrived[method]
}

// Broadcasts is how many transactions arrived to be broadcast, by either
// method (eth_sendRawTransaction, eth_sendRawTransactionSync), not counting
// walletgate's start-up probe of the waiting method (empty bytes).
func (p *Proxy) Broadcasts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.broadcasts
}

// isBroadcast reports whether q carries a transaction to broadcast, and its
// raw bytes.
func isBroadcast(q request) (string, bool) {
	if (q.Method != "eth_sendRawTransaction" && q.Method != "eth_sendRawTransactionSync") || len(q.Params) == 0 {
		return "", false
	}
	var raw string
	if json.Unmarshal(q.Params[0], &raw) != nil || len(raw) <= 2 {
		return "", false
	}
	return raw, true
}

// Forwarded is how many requests carrying method reached the node.
func (p *Proxy) Forwarded(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.forwarded[method]
}

// LastSent is the hash of the last broadcast that arrived (zero: none).
func (p *Proxy) LastSent() common.Hash {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastSent
}

// Requests is how many HTTP requests arrived (a batch is one): the round
// trips made to the node.
func (p *Proxy) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// Batches is the size of every batch that arrived, in order.
func (p *Proxy) Batches() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.batches...)
}

type request struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

// Served is closed once the proxy has answered its next request: a test
// waiting for what the proxy counts (Reorged, LastSent, Arrived) takes it,
// checks, and waits on it instead of polling on a timer.
func (p *Proxy) Served() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.served
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	defer func() {
		p.mu.Lock()
		close(p.served)
		p.served = make(chan struct{})
		p.mu.Unlock()
	}()
	body, _ := io.ReadAll(r.Body)
	now := time.Now()
	var reqs []request
	batch := len(bytes.TrimSpace(body)) > 0 && bytes.TrimSpace(body)[0] == '['
	if batch {
		if json.Unmarshal(body, &reqs) != nil {
			http.Error(w, "bad batch", http.StatusBadRequest)
			return
		}
	} else {
		var one request
		if json.Unmarshal(body, &one) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		reqs = []request{one}
	}

	p.mu.Lock()
	p.requests++
	if n := len(p.limited); n > len(p.after429) {
		p.after429 = append(p.after429, now)
	}
	for _, q := range reqs {
		p.arrived[q.Method]++
	}
	if batch {
		p.batches = append(p.batches, len(reqs))
	}
	if p.tooMany > 0 {
		p.tooMany--
		p.limited = append(p.limited, now)
		ra, status := p.retryAfter, p.failStatus
		p.mu.Unlock()
		if ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		http.Error(w, http.StatusText(status), status)
		return
	}
	if batch && p.batchLimit > 0 && len(reqs) > p.batchLimit {
		words := p.batchWords
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `[{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":%q}}]`, reqs[0].ID, words)
		return
	}
	reversed := p.reversed
	p.mu.Unlock()

	answers := make([]json.RawMessage, len(reqs))
	if reversed {
		for i := len(reqs) - 1; i >= 0; i-- {
			answers[len(reqs)-1-i] = p.answer(reqs[i])
		}
	} else {
		for i, q := range reqs {
			answers[i] = p.answer(q)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if batch {
		out, _ := json.Marshal(answers)
		_, _ = w.Write(out)
		return
	}
	_, _ = w.Write(answers[0])
}

// answer is one request's answer: faked, or the node's (rewritten).
func (p *Proxy) answer(q request) json.RawMessage {
	errAnswer := func(code int, msg string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, q.ID, code, msg))
	}
	p.mu.Lock()
	if p.missing[q.Method] {
		p.mu.Unlock()
		return errAnswer(-32601, "the method "+q.Method+" does not exist/is not available")
	}
	if p.hexSyncTimeout && q.Method == "eth_sendRawTransactionSync" && len(q.Params) > 1 {
		var ms hexutil.Uint64
		if json.Unmarshal(q.Params[1], &ms) != nil {
			p.mu.Unlock()
			return errAnswer(-32602, "invalid argument 1: json: cannot unmarshal number into Go value of type hexutil.Uint64")
		}
		q.Params = append([]json.RawMessage{q.Params[0], json.RawMessage(fmt.Sprint(uint64(ms)))}, q.Params[2:]...)
	}
	var sendErr string
	var hook func()
	forward := true
	raw, broadcast := isBroadcast(q)
	if broadcast {
		if f, n := p.onBroadcast, p.broadcasts; f != nil {
			hook = func() { f(n) }
		}
		p.broadcasts++
		p.lastSent = TxHash(raw)
		if p.reorgNext {
			p.reorged[p.lastSent], p.reorgNext = 0, false
		}
	}
	switch {
	case !broadcast || p.sendErr == "" || p.sendTimes == 0:
	case p.sendSkip > 0:
		p.sendSkip--
	default:
		sendErr, forward = p.sendErr, p.sendForward
		if p.sendTimes > 0 {
			p.sendTimes--
		}
	}
	p.mu.Unlock()
	if hook != nil {
		hook()
	}

	var ans json.RawMessage
	if forward {
		ans = p.forward(q)
	}
	if sendErr != "" {
		return errAnswer(-32000, sendErr)
	}
	switch q.Method {
	case "eth_getTransactionReceipt", "eth_getTransactionByHash":
		return p.rewrite(q, ans)
	}
	return ans
}

// forward sends one request to the node and returns its answer.
func (p *Proxy) forward(q request) json.RawMessage {
	p.mu.Lock()
	p.forwarded[q.Method]++
	p.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": q.ID, "method": q.Method, "params": q.Params})
	resp, err := http.Post(p.upstream, "application/json", bytes.NewReader(body))
	if err != nil {
		return json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"upstream: %s"}}`, q.ID, strings.ReplaceAll(err.Error(), `"`, `'`)))
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return out
}

// rewrite applies the reorg and the l1Fee to a receipt or transaction.
func (p *Proxy) rewrite(q request, ans json.RawMessage) json.RawMessage {
	var hash common.Hash
	if len(q.Params) == 0 || json.Unmarshal(q.Params[0], &hash) != nil {
		return ans
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(ans, &msg) != nil {
		return ans
	}
	var result map[string]any
	if json.Unmarshal(msg["result"], &result) != nil || result == nil {
		return ans
	}
	p.mu.Lock()
	state, reorged := p.reorged[hash]
	if reorged && q.Method == "eth_getTransactionReceipt" {
		if state < 3 {
			state++
			p.reorged[hash] = state
		}
	}
	l1 := p.l1Fee
	p.mu.Unlock()
	if reorged {
		switch {
		case state == 2: // hidden: back in the pool
			if q.Method == "eth_getTransactionReceipt" {
				msg["result"] = json.RawMessage("null")
				out, _ := json.Marshal(msg)
				return out
			}
			result["blockNumber"], result["blockHash"], result["transactionIndex"] = nil, nil, nil
		case state == 3: // re-included at the same height, in the other fork's block
			if result["blockHash"] != nil {
				result["blockHash"] = common.BytesToHash(append(hash.Bytes()[:16], 0xee)).Hex()
			}
		}
	}
	if l1 != nil && q.Method == "eth_getTransactionReceipt" {
		if v := l1(hash); v != nil {
			result["l1Fee"] = hexutil.EncodeBig(v)
		}
	}
	msg["result"], _ = json.Marshal(result)
	out, _ := json.Marshal(msg)
	return out
}

// TxHash is the hash of a raw transaction in a eth_sendRawTransaction's
// params, for tests that match sends to receipts.
func TxHash(raw string) common.Hash {
	tx := new(types.Transaction)
	if tx.UnmarshalBinary(common.FromHex(raw)) != nil {
		return common.Hash{}
	}
	return tx.Hash()
}
