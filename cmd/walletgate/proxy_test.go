package main_test

import (
	"bytes"
	"encoding/json"
	"io"
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
}

func newRPCProxy(t *testing.T, upstream string) *rpcProxy {
	t.Helper()
	p := &rpcProxy{t: t, upstream: upstream, override: map[string]json.RawMessage{}, calls: map[string]int{}}
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
	resp, err := http.Post(p.upstream, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, "upstream", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
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
