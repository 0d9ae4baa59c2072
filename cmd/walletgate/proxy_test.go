package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"
)

// rpcProxy is a fault-injecting JSON-RPC proxy on 127.0.0.1 in front of a
// real node: it forwards every request (single or batch) and lets a test
// replace the result of chosen methods.
type rpcProxy struct {
	t        *testing.T
	upstream string
	srv      *httptest.Server

	mu       sync.Mutex
	override map[string]json.RawMessage // method -> result to answer instead
	calls    map[string]int
	held     map[string]bool // method -> requests carrying it wait (and are never forwarded if their client goes away)
	release  chan struct{}   // closed to let held requests through
	waiting  int             // held requests still waiting (their client not yet seen gone)
	dropped  map[string]bool // method -> forwarded, but the answer is lost (HTTP 502)
	rng      *rand.Rand      // when set, requests fail at random
	flaky    float64         // the share of requests that fail: half before forwarding, half after
	dropOnce bool
	// faults decide, per single (non-batch) request carrying a method, what
	// the node is made to do; rewrites change answers, batch elements too.
	faults   map[string]func(params json.RawMessage) *fault
	rewrites map[string]func(params, result json.RawMessage) json.RawMessage
	arrived  map[string]int // requests that reached serve, per method (counted before any hold)
	// syncSend: eth_sendRawTransactionSync reaches the node. Off by default
	// (answered "method not found", single or in a batch, as by a node or
	// provider without it), so that the faults set on eth_sendRawTransaction
	// apply to every broadcast.
	syncSend bool
	// delay holds every request this long before forwarding it (a remote
	// node); trips logs every HTTP request, one round trip each.
	delay time.Duration
	trips []roundTrip
}

// roundTrip is one HTTP request through the proxy: one JSON-RPC call or
// one batch.
type roundTrip struct {
	start, end time.Time
	methods    []string
}

// tripsSince are the round trips logged from mark (len of the log then) on.
func (p *rpcProxy) tripsSince(mark int) []roundTrip {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]roundTrip(nil), p.trips[mark:]...)
}

// mark is the position of the next round trip in the log.
func (p *rpcProxy) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.trips)
}

// sequential counts round trips one after another: a trip that starts
// before the previous one ended runs beside it and adds none.
func sequential(trips []roundTrip) int {
	n := 0
	var end time.Time
	for _, t := range trips {
		if n == 0 || !t.start.Before(end) {
			n++
			end = t.end
		} else if t.end.After(end) {
			end = t.end
		}
	}
	return n
}

// fault is what a node does with one request instead of answering it
// honestly.
type fault struct {
	forward bool   // send it to the node first (then lie about the answer)
	errMsg  string // answer this JSON-RPC error ("" none)
	errData string // with this error data (a revert's, 0x-hex)
	http502 bool   // answer HTTP 502 (after forwarding, when forward)
	result  json.RawMessage
}

// setFault makes single requests of method go through f (nil: honest).
func (p *rpcProxy) setFault(method string, f func(params json.RawMessage) *fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f == nil {
		delete(p.faults, method)
		return
	}
	p.faults[method] = f
}

// rewrite makes the answers to method (single or in a batch) pass through f.
func (p *rpcProxy) rewrite(method string, f func(params, result json.RawMessage) json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f == nil {
		delete(p.rewrites, method)
		return
	}
	p.rewrites[method] = f
}

// arrivedCount is how many requests carrying method reached the proxy.
func (p *rpcProxy) arrivedCount(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.arrived[method]
}

// failRandomly makes a share of all requests fail, reproducibly from seed:
// half are refused before reaching the node, half are forwarded and their
// answer lost.
func (p *rpcProxy) failRandomly(seed int64, share float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rng, p.flaky = rand.New(rand.NewSource(seed)), share
}

// hold makes requests carrying method wait until unhold; a held request
// whose client disconnects is dropped unforwarded.
func (p *rpcProxy) hold(method string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held[method] = true
	p.release = make(chan struct{})
}

// heldWaiting is how many held requests are still waiting: after their
// client died, 0 once the proxy has seen every one of them go (and dropped
// it, never to reach the node).
func (p *rpcProxy) heldWaiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting
}

// unhold lets held requests through and stops holding.
func (p *rpcProxy) unhold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = map[string]bool{}
	if p.release != nil {
		close(p.release)
		p.release = nil
	}
}

// dropAnswer forwards requests carrying method but loses the node's answer.
func (p *rpcProxy) dropAnswer(method string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropped[method] = true
}

func newRPCProxy(t *testing.T, upstream string) *rpcProxy {
	t.Helper()
	p := &rpcProxy{t: t, upstream: upstream, override: map[string]json.RawMessage{}, calls: map[string]int{},
		held: map[string]bool{}, dropped: map[string]bool{}, faults: map[string]func(json.RawMessage) *fault{},
		rewrites: map[string]func(json.RawMessage, json.RawMessage) json.RawMessage{}, arrived: map[string]int{}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve)) // binds 127.0.0.1
	t.Cleanup(p.srv.Close)
	return p
}

// set makes method answer result (JSON) from now on; nil restores it.
func (p *rpcProxy) set(method string, result json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if result == nil {
		delete(p.override, method)
		return
	}
	p.override[method] = result
}

func (p *rpcProxy) count(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[method]
}

type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func (p *rpcProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	batch := bytes.HasPrefix(bytes.TrimSpace(body), []byte("["))
	var reqs []rpcMsg
	if batch {
		err = json.Unmarshal(body, &reqs)
	} else {
		var one rpcMsg
		err = json.Unmarshal(body, &one)
		reqs = []rpcMsg{one}
	}
	if err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	trip := roundTrip{start: time.Now()}
	for _, q := range reqs {
		trip.methods = append(trip.methods, q.Method)
	}
	defer func() {
		trip.end = time.Now()
		p.mu.Lock()
		p.trips = append(p.trips, trip)
		sort.Slice(p.trips, func(i, j int) bool { return p.trips[i].start.Before(p.trips[j].start) })
		p.mu.Unlock()
	}()
	p.mu.Lock()
	delay, syncSend := p.delay, p.syncSend
	p.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	// Without the broadcast that waits, its calls are answered "method not
	// found" here and the rest of a batch goes on.
	var noMethod []rpcMsg
	if !syncSend {
		kept := reqs[:0:0]
		for _, q := range reqs {
			if q.Method == "eth_sendRawTransactionSync" {
				noMethod = append(noMethod, rpcMsg{JSONRPC: "2.0", ID: q.ID, Error: json.RawMessage(`{"code":-32601,"message":"the method eth_sendRawTransactionSync does not exist/is not available"}`)})
				continue
			}
			kept = append(kept, q)
		}
		if len(noMethod) > 0 {
			if len(kept) == 0 {
				w.Header().Set("Content-Type", "application/json")
				if batch {
					_ = json.NewEncoder(w).Encode(noMethod)
				} else {
					_ = json.NewEncoder(w).Encode(noMethod[0])
				}
				return
			}
			reqs = kept
			body, _ = json.Marshal(reqs)
		}
	}
	p.mu.Lock()
	for _, q := range reqs {
		p.arrived[q.Method]++
	}
	var f *fault
	if decide := p.faults[reqs[0].Method]; !batch && decide != nil {
		f = decide(reqs[0].Params)
	}
	if p.rng != nil {
		roll := p.rng.Float64()
		if roll < p.flaky/2 {
			p.mu.Unlock()
			http.Error(w, "flaky: refused", http.StatusBadGateway)
			return
		}
		if roll < p.flaky {
			p.dropOnce = true
		}
	}
	dropOnce := p.dropOnce
	p.dropOnce = false
	wait, drop := (<-chan struct{})(nil), dropOnce
	for _, q := range reqs {
		if p.held[q.Method] {
			wait = p.release
		}
		drop = drop || p.dropped[q.Method]
	}
	if wait != nil {
		p.waiting++
	}
	p.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-r.Context().Done():
		}
		p.mu.Lock()
		p.waiting--
		p.mu.Unlock()
		if r.Context().Err() != nil {
			return // the client went away: never forwarded
		}
	}
	if f != nil && !f.forward {
		p.answerFault(w, reqs[0], f)
		return
	}
	resp, err := http.Post(p.upstream, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, "upstream", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if f != nil {
		p.answerFault(w, reqs[0], f)
		return
	}
	if drop {
		http.Error(w, "answer lost", http.StatusBadGateway)
		return
	}
	var answers []rpcMsg
	if batch {
		_ = json.Unmarshal(out, &answers)
	} else {
		var one rpcMsg
		_ = json.Unmarshal(out, &one)
		answers = []rpcMsg{one}
	}
	methods := map[string]string{}
	p.mu.Lock()
	for _, q := range reqs {
		methods[string(q.ID)] = q.Method
		p.calls[q.Method]++
	}
	params := map[string]json.RawMessage{}
	for _, q := range reqs {
		params[string(q.ID)] = q.Params
	}
	for i, a := range answers {
		if res, ok := p.override[methods[string(a.ID)]]; ok {
			answers[i].Result, answers[i].Error = res, nil
		}
		if rw := p.rewrites[methods[string(a.ID)]]; rw != nil && a.Error == nil {
			answers[i].Result = rw(params[string(a.ID)], a.Result)
		}
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if batch {
		_ = json.NewEncoder(w).Encode(append(answers, noMethod...))
	} else {
		_ = json.NewEncoder(w).Encode(answers[0])
	}
}

// answerFault answers one request as f says.
func (p *rpcProxy) answerFault(w http.ResponseWriter, q rpcMsg, f *fault) {
	p.mu.Lock()
	p.calls[q.Method]++
	p.mu.Unlock()
	if f.http502 {
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	}
	a := rpcMsg{JSONRPC: "2.0", ID: q.ID, Result: f.result}
	if f.errMsg != "" {
		e := map[string]any{"code": -32000, "message": f.errMsg}
		if f.errData != "" {
			e["code"], e["data"] = 3, f.errData
		}
		b, _ := json.Marshal(e)
		a.Result, a.Error = nil, b
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(a)
}
