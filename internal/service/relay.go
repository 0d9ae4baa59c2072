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
	go func() {
		defer close(gone)
		r := bufio.NewReaderSize(conn, 64<<10)
		for {
			line, err := readLine(r)
			if len(line) > 0 {
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
			if _, werr := conn.Write(line); werr != nil {
				<-gone
				answerLine(out, line, down(serviceClosed(werr)))
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
