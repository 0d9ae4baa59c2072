package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// maxEvents bounds the proxy's log of round trips. The bench makes a few
// thousand; past the bound the proxy still forwards but stops recording, and
// the report says so.
const maxEvents = 200_000

// maxBody bounds one request or response body the proxy handles.
const maxBody = 32 << 20

// rtEvent is one HTTP round trip through the proxy: one JSON-RPC request, or
// one batch of them.
type rtEvent struct {
	Start, End time.Time // around the upstream exchange (request sent → response read)
	// Handler is the proxy's whole handling of the request, read to written:
	// Handler minus (End - Start) is what the proxy itself adds.
	Handler time.Duration
	Methods []string // the JSON-RPC methods it carried, in order
	Batch   bool
	// SendRawAt is when the upstream answer to an eth_sendRawTransaction in
	// this round trip was read (zero if there was none).
	SendRawAt time.Time
	// Receipts counts eth_getTransactionReceipt elements; ReceiptsFound
	// those the node answered with a receipt (not null).
	Receipts, ReceiptsFound int
}

// countingProxy forwards JSON-RPC over HTTP to one upstream node, unchanged,
// and records every round trip. It listens on 127.0.0.1 only.
type countingProxy struct {
	upstream string
	// delay holds every request this long before forwarding it, inside its
	// upstream exchange: a node that far away (-delay).
	delay  time.Duration
	client *http.Client
	ln     net.Listener
	srv    *http.Server

	mu      sync.Mutex
	events  []rtEvent
	dropped int
}

func startProxy(upstream string, delay time.Duration) (*countingProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: listen on 127.0.0.1: %w", err)
	}
	p := &countingProxy{
		upstream: upstream,
		client: &http.Client{
			Timeout: 2 * time.Minute,
			Transport: &http.Transport{
				Proxy:               nil, // never through an HTTP(S)_PROXY: loopback only
				MaxIdleConns:        32,
				MaxIdleConnsPerHost: 32,
				IdleConnTimeout:     time.Minute,
			},
		},
		ln:    ln,
		delay: delay,
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the proxy's address for WALLETGATE_RPC.
func (p *countingProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *countingProxy) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
	p.client.CloseIdleConnections()
}

// mark is the position to take a window of events from.
func (p *countingProxy) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.events)
}

// since returns a copy of the events recorded from mark on.
func (p *countingProxy) since(mark int) []rtEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	if mark > len(p.events) {
		return nil
	}
	return append([]rtEvent(nil), p.events[mark:]...)
}

func (p *countingProxy) droppedEvents() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

type rpcReq struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

type rpcResp struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
}

func (p *countingProxy) serve(w http.ResponseWriter, r *http.Request) {
	hStart := time.Now()
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	ev := rtEvent{}
	var reqs []rpcReq
	trim := bytes.TrimSpace(body)
	if bytes.HasPrefix(trim, []byte("[")) {
		ev.Batch = true
		_ = json.Unmarshal(trim, &reqs)
	} else {
		var one rpcReq
		if json.Unmarshal(trim, &one) == nil {
			reqs = []rpcReq{one}
		}
	}
	receiptIDs := map[string]bool{}
	sendRaw := false
	for _, q := range reqs {
		ev.Methods = append(ev.Methods, q.Method)
		switch q.Method {
		case "eth_getTransactionReceipt":
			ev.Receipts++
			receiptIDs[string(q.ID)] = true
		case "eth_sendRawTransaction", "eth_sendRawTransactionSync":
			sendRaw = true
		}
	}

	ev.Start = time.Now()
	if p.delay > 0 {
		select {
		case <-time.After(p.delay):
		case <-r.Context().Done():
		}
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, p.upstream, bytes.NewReader(body))
	if err != nil {
		http.Error(w, "upstream request", http.StatusBadGateway)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	var out []byte
	status := http.StatusBadGateway
	ctype := "text/plain"
	if err == nil {
		out, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
		status = resp.StatusCode
		ctype = resp.Header.Get("Content-Type")
	}
	ev.End = time.Now()
	if sendRaw {
		ev.SendRawAt = ev.End
	}
	if err != nil {
		p.record(ev)
		http.Error(w, "upstream exchange failed", http.StatusBadGateway)
		return
	}
	if len(receiptIDs) > 0 {
		ev.ReceiptsFound = countFound(out, receiptIDs)
	}
	if ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	w.WriteHeader(status)
	_, _ = w.Write(out)
	ev.Handler = time.Since(hStart)
	p.record(ev)
}

// countFound counts the answers to the given request ids whose result is not
// null.
func countFound(out []byte, ids map[string]bool) int {
	var resps []rpcResp
	trim := bytes.TrimSpace(out)
	if bytes.HasPrefix(trim, []byte("[")) {
		_ = json.Unmarshal(trim, &resps)
	} else {
		var one rpcResp
		if json.Unmarshal(trim, &one) == nil {
			resps = []rpcResp{one}
		}
	}
	n := 0
	for _, a := range resps {
		if ids[string(a.ID)] && len(a.Result) > 0 && string(a.Result) != "null" {
			n++
		}
	}
	return n
}

func (p *countingProxy) record(ev rtEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.events) >= maxEvents {
		p.dropped++
		return
	}
	p.events = append(p.events, ev)
}

// window summarises the round trips of one operation.
type window struct {
	RoundTrips int
	Calls      int
	Methods    map[string]int
	Sequence   []string      // one entry per round trip: "m" or "[m1 m2×2 …]"
	Upstream   time.Duration // wall time with at least one upstream exchange in flight
	ProxyAdded time.Duration // the proxy's own handling time, beyond the upstream exchanges
	// For writes: the last eth_sendRawTransaction answer, the first receipt
	// seen after it, and the receipt lookups made after it.
	LastSendRaw       time.Time
	FirstReceiptAfter time.Time
	ReceiptPollsAfter int
	NullAfter         int // of those, answered null (not yet included)
	SendRawTxs        int
}

func summarise(evs []rtEvent) window {
	w := window{Methods: map[string]int{}}
	type iv struct{ a, b time.Time }
	var ivs []iv
	for _, e := range evs {
		w.RoundTrips++
		w.Calls += len(e.Methods)
		for _, m := range e.Methods {
			w.Methods[m]++
			if m == "eth_sendRawTransaction" || m == "eth_sendRawTransactionSync" {
				w.SendRawTxs++
			}
		}
		w.Sequence = append(w.Sequence, describe(e))
		if add := e.Handler - e.End.Sub(e.Start); add > 0 {
			w.ProxyAdded += add
		}
		ivs = append(ivs, iv{e.Start, e.End})
		if !e.SendRawAt.IsZero() {
			w.LastSendRaw = e.SendRawAt
			w.FirstReceiptAfter = time.Time{}
			w.ReceiptPollsAfter = 0
			w.NullAfter = 0
		}
		if !w.LastSendRaw.IsZero() && e.Start.After(w.LastSendRaw) && e.Receipts > 0 {
			w.ReceiptPollsAfter++
			w.NullAfter += e.Receipts - e.ReceiptsFound
			if e.ReceiptsFound > 0 && w.FirstReceiptAfter.IsZero() {
				w.FirstReceiptAfter = e.End
			}
		}
	}
	// Union of the upstream intervals: concurrent exchanges count once.
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].a.Before(ivs[j].a) })
	var cur iv
	for i, x := range ivs {
		if i == 0 {
			cur = x
			continue
		}
		if x.a.After(cur.b) {
			w.Upstream += cur.b.Sub(cur.a)
			cur = x
		} else if x.b.After(cur.b) {
			cur.b = x.b
		}
	}
	if len(ivs) > 0 {
		w.Upstream += cur.b.Sub(cur.a)
	}
	return w
}

// describe renders one round trip: a single method, or a batch with repeats
// folded ("[eth_call×3 eth_getBalance]").
func describe(e rtEvent) string {
	if !e.Batch && len(e.Methods) == 1 {
		return e.Methods[0]
	}
	var parts []string
	for i := 0; i < len(e.Methods); {
		j := i
		for j < len(e.Methods) && e.Methods[j] == e.Methods[i] {
			j++
		}
		if j-i > 1 {
			parts = append(parts, fmt.Sprintf("%s×%d", e.Methods[i], j-i))
		} else {
			parts = append(parts, e.Methods[i])
		}
		i = j
	}
	return "[" + strings.Join(parts, " ") + "]"
}
