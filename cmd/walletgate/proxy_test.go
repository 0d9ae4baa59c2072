package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
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
	dropped  map[string]bool // method -> forwarded, but the answer is lost (HTTP 502)
	rng      *rand.Rand      // when set, requests fail at random
	flaky    float64         // the share of requests that fail: half before forwarding, half after
	dropOnce bool
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
		held: map[string]bool{}, dropped: map[string]bool{}}
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
	p.mu.Lock()
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
	p.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-r.Context().Done():
			return // the client went away: never forwarded
		}
	}
	resp, err := http.Post(p.upstream, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, "upstream", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
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
	for i, a := range answers {
		if res, ok := p.override[methods[string(a.ID)]]; ok {
			answers[i].Result, answers[i].Error = res, nil
		}
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if batch {
		_ = json.NewEncoder(w).Encode(answers)
	} else {
		_ = json.NewEncoder(w).Encode(answers[0])
	}
}
