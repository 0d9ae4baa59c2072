package approval

// The terminal's way in: a unix socket in the state directory, one JSON
// request per line and one JSON answer per line. Rules:
//   - The socket lives in a 0700 directory that belongs to this user and is
//     itself 0600; on Linux the peer's uid must also be ours. Whoever can
//     connect can approve, exactly like whoever holds the page's secret.
//   - Requests are bounded (64 KiB a line, idleTimeout between requests);
//     anything malformed — trailing data after the object included — is
//     answered with an error and changes nothing.
//   - Close ends the connections too: nothing is approved through a socket
//     after its server stopped answering.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/walletgate/walletgate/connlimit"
)

// Dir is where a state root keeps the running servers' sockets and page
// addresses.
func Dir(stateRoot string) string { return filepath.Join(stateRoot, "approvals") }

// SocketPath and URLPath are one server's files in Dir.
func SocketPath(dir string, pid int) string { return filepath.Join(dir, strconv.Itoa(pid)+".sock") }

// URLPath is the 0600 file holding one server's page address.
func URLPath(dir string, pid int) string { return filepath.Join(dir, strconv.Itoa(pid)+".url") }

// PrepareDir creates dir 0700 if needed and refuses one that another user
// owns or that others can enter.
func PrepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("approvals directory %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("approvals directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("approvals directory %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("approvals directory %s is open to other users (mode %04o); it must be 0700", dir, fi.Mode().Perm())
	}
	if !ownedByMe(fi) {
		return fmt.Errorf("approvals directory %s belongs to another user", dir)
	}
	return nil
}

// WriteURL writes the page address into a fresh 0600 file.
func WriteURL(path, url string) error {
	_ = os.Remove(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("approval page address file: %w", err)
	}
	_, werr := f.WriteString(url + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("approval page address file: %w", err)
	}
	return nil
}

// ServerInfo tells the terminal which server it is talking to.
type ServerInfo struct {
	PID     int    `json:"pid"`
	Wallet  string `json:"wallet"`
	ChainID uint64 `json:"chain_id"`
	Network string `json:"network"`
}

// request is one line from the terminal.
type request struct {
	Op string `json:"op"` // list, approve or reject
	ID string `json:"id,omitempty"`
}

// Answer is one line back.
type Answer struct {
	OK        bool        `json:"ok"`
	Server    *ServerInfo `json:"server,omitempty"`
	Approvals []View      `json:"approvals,omitempty"`
	Code      string      `json:"code,omitempty"`
	Expires   *time.Time  `json:"expires,omitempty"`
	ErrorCode string      `json:"error_code,omitempty"`
	Error     string      `json:"error,omitempty"`
}

const maxLine = 64 << 10

// maxSocketConns bounds the socket's connections open at once.
const maxSocketConns = 16

// unwrap is the connection as accepted, under a bounded listener's.
func unwrap(c net.Conn) net.Conn {
	if u, ok := c.(interface{ Unwrap() net.Conn }); ok {
		return u.Unwrap()
	}
	return c
}

// idleTimeout closes a connection that sent nothing for this long. The
// terminal polls twice a second, but sends nothing while the person reads a
// preview; its client redials when the server has hung up.
var idleTimeout = 5 * time.Minute

// Service answers the terminal on a unix socket.
type Service struct {
	broker *Broker
	info   ServerInfo
	ln     net.Listener
	path   string
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// ListenSocket creates the socket at path (in a directory PrepareDir
// checked) and starts answering.
func ListenSocket(path string, broker *Broker, info ServerInfo) (*Service, error) {
	_ = os.Remove(path) // a previous process with our pid left it
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("approvals socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("approvals socket: %w", err)
	}
	// Out of file descriptors, it waits and accepts again; a terminal
	// holds one connection, a few at most.
	ln = &connlimit.Listener[struct{}]{Listener: ln, PerPeer: maxSocketConns, Total: maxSocketConns}
	s := &Service{broker: broker, info: info, ln: ln, path: path, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Close stops answering and removes the socket.
func (s *Service) Close() error {
	err := s.ln.Close()
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	_ = os.Remove(s.path)
	return err
}

func (s *Service) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func (s *Service) serve(c net.Conn) {
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.wg.Done()
	}()
	if err := peerIsMe(unwrap(c)); err != nil {
		writeAnswer(c, Answer{ErrorCode: "FORBIDDEN", Error: err.Error()})
		return
	}
	r := bufio.NewReaderSize(c, 4096)
	for {
		_ = c.SetDeadline(time.Now().Add(idleTimeout))
		line, err := readLine(r)
		if err != nil {
			if !errors.Is(err, errLong) {
				return
			}
			writeAnswer(c, Answer{ErrorCode: "BAD_REQUEST", Error: "request longer than 64 KiB"})
			return
		}
		if !writeAnswer(c, s.answer(line)) {
			return
		}
	}
}

func (s *Service) answer(line []byte) Answer {
	var req request
	dec := json.NewDecoder(strings.NewReader(string(line)))
	dec.DisallowUnknownFields()
	err := dec.Decode(&req)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		err = errors.New("trailing data")
	}
	if err != nil {
		return Answer{ErrorCode: "BAD_REQUEST", Error: "a request is one JSON object per line: {\"op\":\"list\"}, {\"op\":\"approve\",\"id\":\"…\"} or {\"op\":\"reject\",\"id\":\"…\"}"}
	}
	info := s.info
	switch req.Op {
	case "list":
		return Answer{OK: true, Server: &info, Approvals: s.broker.List()}
	case "approve":
		code, expires, err := s.broker.Approve(req.ID)
		if err != nil {
			return errAnswer(err)
		}
		return Answer{OK: true, Server: &info, Code: code, Expires: &expires}
	case "reject":
		if err := s.broker.Reject(req.ID); err != nil {
			return errAnswer(err)
		}
		return Answer{OK: true, Server: &info}
	}
	return Answer{ErrorCode: "BAD_REQUEST", Error: "unknown op; use list, approve or reject"}
}

func errAnswer(err error) Answer {
	var e *Error
	if errors.As(err, &e) {
		return Answer{ErrorCode: e.Code, Error: e.Message}
	}
	return Answer{ErrorCode: "FAILED", Error: err.Error()}
}

var errLong = errors.New("line too long")

func readLine(r *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			return nil, err
		}
		out = append(out, chunk...)
		if len(out) > maxLine {
			return nil, errLong
		}
		if !isPrefix {
			return out, nil
		}
	}
}

func writeAnswer(c net.Conn, a Answer) bool {
	b, err := json.Marshal(a)
	if err != nil {
		return false
	}
	_, err = c.Write(append(b, '\n'))
	return err == nil
}

// Client talks to one server's socket.
type Client struct {
	Path string
	conn net.Conn
	r    *bufio.Reader
}

// Dial connects to the socket at path.
func Dial(path string) (*Client, error) {
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return nil, err
	}
	return &Client{Path: path, conn: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

func (c *Client) roundTrip(req []byte) ([]byte, error) {
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write(append(req, '\n')); err != nil {
		return nil, err
	}
	return c.r.ReadBytes('\n')
}

// Do sends one request and reads its answer. If the server hung up an idle
// connection, it dials again once and repeats the request: a decision the
// server already took is then refused as not pending, never taken twice.
func (c *Client) Do(op, id string) (Answer, error) {
	b, _ := json.Marshal(request{Op: op, ID: id})
	line, err := c.roundTrip(b)
	if err != nil {
		conn, derr := net.DialTimeout("unix", c.Path, 2*time.Second)
		if derr != nil {
			return Answer{}, err
		}
		c.conn.Close()
		c.conn, c.r = conn, bufio.NewReaderSize(conn, 64<<10)
		if line, err = c.roundTrip(b); err != nil {
			return Answer{}, err
		}
	}
	var a Answer
	if err := json.Unmarshal(line, &a); err != nil {
		return Answer{}, fmt.Errorf("approvals socket: bad answer: %w", err)
	}
	return a, nil
}
