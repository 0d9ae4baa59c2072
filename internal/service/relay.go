package service

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
)

// MaxLine bounds one JSON-RPC message through the relay (the server's own
// bound is the same).
const MaxLine = 4 << 20

// DownCode is the JSON-RPC error code the relay answers with while the
// service cannot be reached.
const DownCode = -32001

// Relay copies MCP messages, line by line, between stdio and the service:
// dial opens the connection. It holds nothing of the wallet: no key, no
// journal, no configuration. While the service cannot be reached (dial
// failed, or the service closed the connection) every request read from
// stdin is answered with a JSON-RPC error whose message is down(err):
// stdout carries JSON-RPC only, whatever happens. It returns when stdin
// ends (and the service has answered what it was sent) or stdout fails.
func Relay(stdin io.Reader, stdout io.Writer, dial func() (net.Conn, error), down func(error) string) error {
	out := &lockedWriter{w: stdout}
	in := bufio.NewReaderSize(stdin, 64<<10)
	conn, err := dial()
	if err != nil {
		return answerDown(in, out, down(err))
	}
	defer conn.Close()
	gone := make(chan struct{}) // the service closed the connection
	var goneErr error
	pending := &inFlight{ids: map[string]json.RawMessage{}}
	go func() {
		defer close(gone)
		defer func() {
			// What the service was sent and did not answer is answered
			// here: a client waits for nothing.
			for _, id := range pending.drain() {
				_ = answerID(out, id, down(serviceClosed(goneErr)))
			}
		}()
		r := bufio.NewReaderSize(conn, 64<<10)
		for {
			line, err := readLine(r)
			if len(line) > 0 {
				if id, _ := topLevel(line, false); id != nil {
					pending.done(id)
				}
				if _, werr := out.Write(line); werr != nil {
					goneErr = werr
					return
				}
			}
			if err != nil {
				goneErr = err
				return
			}
		}
	}()
	for {
		line, err := readLine(in)
		if len(line) > 0 {
			select {
			case <-gone:
				answerLine(out, line, down(serviceClosed(goneErr)))
				continue
			default:
			}
			id, request := topLevel(line, true)
			if request && !pending.add(id) {
				answerLine(out, line, down(serviceClosed(goneErr)))
				continue
			}
			if _, werr := conn.Write(line); werr != nil {
				<-gone // it answers the line, pending
			}
		}
		if err != nil {
			if cw, ok := conn.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
				<-gone // the answers still under way
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// errServiceClosed says the service ended the connection.
var errServiceClosed = errors.New("the service closed the connection")

func serviceClosed(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return errServiceClosed
	}
	return err
}

// readLine reads one line (with its newline; the last may lack it), bounded
// by MaxLine: a longer line is cut there and the rest dropped up to its end.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) <= MaxLine {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil && len(buf) > 0 && buf[len(buf)-1] != '\n' {
			buf = append(buf, '\n') // a cut line still ends
		}
		return buf, err
	}
}

// answerDown answers every request read from in with the error msg, until in
// ends.
func answerDown(in *bufio.Reader, out io.Writer, msg string) error {
	for {
		line, err := readLine(in)
		if len(line) > 0 {
			if werr := answerLine(out, line, msg); werr != nil {
				return werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// answerLine answers the request on line (nothing for a notification or a
// response) with a JSON-RPC error saying msg.
func answerLine(out io.Writer, line []byte, msg string) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	id := json.RawMessage("null")
	if err := json.Unmarshal(line, &req); err == nil {
		if req.Method == "" || len(req.ID) == 0 || string(req.ID) == "null" {
			return nil // a notification or a response: nothing to answer
		}
		id = req.ID
	}
	return answerID(out, id, msg)
}

// answerID writes a JSON-RPC error for the request id saying msg.
func answerID(out io.Writer, id json.RawMessage, msg string) error {
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	resp.Error.Code, resp.Error.Message = DownCode, msg
	b, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}

// lockedWriter writes each line in one Write, one at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// inFlight are the ids of the requests sent to the service and not yet
// answered. Once drained (the service is gone) it takes no more.
type inFlight struct {
	mu     sync.Mutex
	ids    map[string]json.RawMessage
	closed bool
}

// add records a request sent; false once the service is gone.
func (f *inFlight) add(id json.RawMessage) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.ids[string(id)] = id
	return true
}

func (f *inFlight) done(id json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.ids, string(id))
}

// drain returns the unanswered ids and takes no more.
func (f *inFlight) drain() []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	var ids []json.RawMessage
	for _, id := range f.ids {
		ids = append(ids, id)
	}
	clear(f.ids)
	return ids
}

// topLevel reads a message's id (nil when it has none, or null) and whether
// it is a request (it has a method and an id), reading its top-level keys
// only as far as needed: a response's id comes first, and what follows it is
// not walked.
func topLevel(line []byte, wantMethod bool) (id json.RawMessage, request bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	method := false
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		switch k {
		case "id":
			if string(v) != "null" {
				id = v
			}
		case "method":
			method = true
		}
		if id != nil && (!wantMethod || method) {
			break
		}
	}
	return id, id != nil && method
}

// MaxConnsPerUser and MaxConns bound the service's connections open at
// once, per desktop user and in all: a session is one connection, and what
// a connection holds (its unfinished message, its goroutines, a file
// descriptor) is bounded by them.
const (
	MaxConnsPerUser = 16
	MaxConns        = 64
)
