package terminal_test

// The approvals terminal driven with bytes, no pty: a real broker behind a
// real approvals socket, the person's keys written into a pipe, the screen
// read from a buffer. Every wait is for text on the screen (or for the pipe
// to be read), never for time.

import (
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/approval"
	"github.com/walletgate/walletgate/approval/terminal"
)

var info = approval.ServerInfo{PID: 4242, Wallet: "0x00000000000000000000000000000000000000aa", ChainID: 1337, Network: "walletgate dev chain"}

// screen is what the terminal wrote; fed is signalled on every write.
type screen struct {
	mu  sync.Mutex
	b   strings.Builder
	fed chan struct{}
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.b.Write(p)
	s.mu.Unlock()
	select {
	case s.fed <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// session is one Run: its server's broker and socket, its keys and screen.
type session struct {
	t      *testing.T
	broker *approval.Broker
	svc    *approval.Service
	dir    string
	keys   *io.PipeWriter
	screen *screen
	done   chan error
}

// approvalsDir is a fresh 0700 directory short enough for a socket path.
func approvalsDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wgt")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, approval.PrepareDir(dir))
	return dir
}

// listen starts a server's approvals socket in dir.
func listen(t *testing.T, dir string, b *approval.Broker) *approval.Service {
	t.Helper()
	svc, err := approval.ListenSocket(approval.SocketPath(dir, info.PID), b, info)
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close() })
	return svc
}

// start runs the terminal on a new server's approvals directory; keys
// says whether In is read key by key (a terminal in raw mode).
func start(t *testing.T, keys bool, width int) *session {
	t.Helper()
	s := &session{t: t, broker: approval.NewBroker(approval.Options{}), dir: approvalsDir(t), screen: &screen{fed: make(chan struct{}, 1)}, done: make(chan error, 1)}
	s.svc = listen(t, s.dir, s.broker)
	s.run(terminal.Config{Keys: keys, Width: func() int { return width }})
	return s
}

func (s *session) run(c terminal.Config) {
	in, keys := io.Pipe()
	s.keys = keys
	c.In, c.Out, c.Poll = in, s.screen, 5*time.Millisecond
	if c.Dir == "" && c.Socket == "" {
		c.Dir = s.dir
	}
	go func() { s.done <- terminal.Run(c) }()
	s.t.Cleanup(func() { keys.Close() })
}

// expect waits until the screen after from matches re and returns the
// match and where it ended.
func (s *session) expect(from int, re *regexp.Regexp) ([]string, int) {
	s.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		out := s.screen.String()
		if loc := re.FindStringSubmatchIndex(out[from:]); loc != nil {
			var groups []string
			for i := 0; i+1 < len(loc); i += 2 {
				groups = append(groups, out[from+loc[i]:from+loc[i+1]])
			}
			return groups, from + loc[1]
		}
		select {
		case <-s.screen.fed:
		case err := <-s.done:
			s.t.Fatalf("the terminal ended (%v) without showing %s; it shows:\n%s", err, re, out[from:])
		case <-deadline:
			s.t.Fatalf("the terminal never showed %s; it shows:\n%s", re, out[from:])
		}
	}
}

// typeKeys writes keys and returns once the terminal has handled them: the
// empty write that follows is taken only by the terminal's next read.
func (s *session) typeKeys(keys string) {
	s.t.Helper()
	_, err := io.WriteString(s.keys, keys)
	require.NoError(s.t, err)
	_, err = s.keys.Write(nil)
	require.NoError(s.t, err)
}

// ended waits for Run to return.
func (s *session) ended() error {
	s.t.Helper()
	select {
	case err := <-s.done:
		return err
	case <-time.After(20 * time.Second):
		s.t.Fatal("the terminal did not end")
		return nil
	}
}

// preview lists a preview of a send of amount to the recipient.
func (s *session) preview(name, amount string) (string, [32]byte) {
	s.t.Helper()
	var fp [32]byte
	copy(fp[:], name)
	id, err := s.broker.Add(approval.Request{Tool: "wallet_send", Fingerprint: fp, Token: "tok-" + name, Expires: time.Now().Add(5 * time.Minute)},
		func(string) approval.Display {
			return approval.Display{Title: "Send " + amount + " USDT", Action: "Send " + amount + " USDT", Network: "walletgate dev chain, chain id 1337", Marker: "local dev chain",
				Party:   &approval.Party{Role: "Recipient", Address: "0x252F548BFEA5C0A7b9E1d56F4E2a3e0b7c1d9A43", Kind: "an account without code", Checksum: "checksum ok"},
				Amounts: []approval.Amount{{Label: "Send", Rounded: amount + " USDT"}}, CapsLeft: []string{"USDT per transaction: 92.75 of 100 left"},
				Simulation: "Succeeds against block 7", Wallet: info.Wallet, Text: "Action:    send " + amount + " USDT"}
		})
	require.NoError(s.t, err)
	return id, fp
}

func (s *session) state(id string) approval.State {
	v, ok := s.broker.Get(id)
	require.True(s.t, ok)
	return v.State
}

func TestTerminalApprovesShowsTheCodeAndHowItEnded(t *testing.T) {
	s := start(t, true, 52)
	_, pos := s.expect(0, regexp.MustCompile(`Connected to walletgate \(pid 4242, wallet\s+`+info.Wallet))
	_, pos = s.expect(pos, regexp.MustCompile(`Waiting for previews`))
	id, fp := s.preview("one", "7.25")
	_, pos = s.expect(pos, regexp.MustCompile(`Approve preview `+id+`\?`))
	shown := s.screen.String()
	for _, line := range strings.Split(shown, "\n") {
		require.LessOrEqual(t, len([]rune(line)), 52, "a line wider than the terminal: %q", line)
	}
	for _, f := range []string{"Everything walletgate checked:", "LOCAL DEV CHAIN", "Send: 7.25 USDT", "Caps left after this:", "Simulation: Succeeds against block 7",
		"0x252F", "548B", "FEA5", "C0A7", "b9E1", "d56F", "4E2a", "3e0b", "7c1d", "9A43"} {
		require.Contains(t, shown, f, "whole words, wrapped at spaces")
	}
	require.Equal(t, approval.Pending, s.state(id), "nothing is decided before the person answers")

	s.typeKeys("a\r")
	m, pos := s.expect(pos, regexp.MustCompile(`APPROVED\. Give the assistant this one-time code:\s+ ?(\d{3}-\d{3})`))
	_, pos = s.expect(pos, regexp.MustCompile(`Waiting for the assistant to use the code`))
	require.Equal(t, approval.Approved, s.state(id))

	token, err := s.broker.Redeem(m[1], fp)
	require.NoError(t, err)
	require.Equal(t, "tok-one", token, "the code shown confirms this preview")
	_, pos = s.expect(pos, regexp.MustCompile(`The assistant used the code; waiting for the outcome`))
	s.broker.Finish(m[1], fp, approval.Outcome{Status: "confirmed", Summary: "sent 7.25 USDT", TxHashes: []string{"0xabc"}, Block: 9, Effects: []string{"7.25 USDT to 0x252F…9A43"}, Fee: "0.000042 ETH"})
	_, pos = s.expect(pos, regexp.MustCompile(`SENT AND VERIFIED: preview `+id+` — sent 7\.25 USDT\s+Transaction: 0xabc\s+Included in block 9\.\s+Verified on chain: 7\.25 USDT to 0x252F…9A43\s+Network fees paid: 0\.000042 ETH\.`))
	_, _ = s.expect(pos, regexp.MustCompile(`Waiting for previews`))
	s.typeKeys("q\r")
	require.NoError(t, s.ended())
}

// Keys typed ahead never decide a preview the person has not seen: an "a"
// meant for one preview, typed three times in one go, approves that one
// only, and the keys after its Enter are dropped unseen.
func TestTerminalTypeaheadDecidesNothing(t *testing.T) {
	s := start(t, true, 120)
	_, pos := s.expect(0, regexp.MustCompile(`Waiting for previews`))
	first, _ := s.preview("first", "1")
	_, pos = s.expect(pos, regexp.MustCompile(`Approve preview `+first+`\?`))
	second, _ := s.preview("second", "0.5")
	from := pos
	s.typeKeys("a\ra\ra\r")
	_, pos = s.expect(pos, regexp.MustCompile(`Waiting for the assistant to use the code`))
	require.Equal(t, approval.Approved, s.state(first))
	require.Equal(t, approval.Pending, s.state(second), "the keys typed ahead did not decide the next preview")
	s.typeKeys("\r") // go on without waiting for the code's use
	_, pos = s.expect(pos, regexp.MustCompile(`Approve preview `+second+`\?`))
	require.NotRegexp(t, `(?m)^a(\r|=|$)`, s.screen.String()[from:pos], "keys typed ahead are dropped unseen, not echoed")
	require.Equal(t, approval.Pending, s.state(second))
	s.typeKeys("r\r")
	_, pos = s.expect(pos, regexp.MustCompile(`REJECTED\. Preview `+second+` will never be signed`))
	require.Equal(t, approval.Rejected, s.state(second))
	_, _ = s.expect(pos, regexp.MustCompile(`Waiting for previews`))
	s.typeKeys("\x03") // Ctrl-C ends the session
	require.NoError(t, s.ended())
}

// Lines (stdin not a terminal): reject, skip, a preview decided elsewhere
// meanwhile, an approval withdrawn; the end of input quits.
func TestTerminalRejectSkipWithdrawAndDecidedElsewhere(t *testing.T) {
	s := start(t, false, 80)
	_, pos := s.expect(0, regexp.MustCompile(`Waiting for previews`))

	id, _ := s.preview("rejected", "1")
	_, pos = s.expect(pos, regexp.MustCompile(`Approve preview `+id+`\?`))
	s.typeKeys("nonsense\n")
	_, pos = s.expect(pos, regexp.MustCompile(`Type a, r, s or q, then Enter\.`))
	// The answer goes to the prompt asked again: a line typed before it
	// opens is dropped, as typeahead.
	_, pos = s.expect(pos, regexp.MustCompile(`Approve preview `+id+`\?`))
	s.typeKeys("r\n")
	_, pos = s.expect(pos, regexp.MustCompile(`REJECTED\. Preview `+id+` will never be signed`))
	require.Equal(t, approval.Rejected, s.state(id))

	skipped, _ := s.preview("skipped", "2")
	_, pos = s.expect(pos, regexp.MustCompile(`Approve preview `+skipped+`\?`))
	s.typeKeys("s\n")
	_, pos = s.expect(pos, regexp.MustCompile(`Skipped `+skipped+` \(it stays pending`))
	_, pos = s.expect(pos, regexp.MustCompile(`Waiting for previews`))
	require.Equal(t, approval.Pending, s.state(skipped), "a skipped preview stays pending")

	elsewhere, _ := s.preview("elsewhere", "3")
	_, pos = s.expect(pos, regexp.MustCompile(`Approve preview `+elsewhere+`\?`))
	require.NoError(t, s.broker.Reject(elsewhere)) // on the page
	_, pos = s.expect(pos, regexp.MustCompile(`Preview `+elsewhere+` is rejected now \(decided on the page`))

	withdrawn, _ := s.preview("withdrawn", "4")
	_, pos = s.expect(pos, regexp.MustCompile(`Approve preview `+withdrawn+`\?`))
	s.typeKeys("a\n")
	_, pos = s.expect(pos, regexp.MustCompile(`Waiting for the assistant to use the code`))
	s.typeKeys("w\n")
	_, _ = s.expect(pos, regexp.MustCompile(`WITHDRAWN\. The code of preview `+withdrawn+` is worthless`))
	require.Equal(t, approval.Withdrawn, s.state(withdrawn))

	require.NoError(t, s.keys.Close())
	require.NoError(t, s.ended(), "the end of input quits")
}

// A terminal opened before any server waits for one; one named by its
// socket that does not answer is an error at once.
func TestTerminalWaitsForAServer(t *testing.T) {
	s := &session{t: t, broker: approval.NewBroker(approval.Options{}), dir: approvalsDir(t), screen: &screen{fed: make(chan struct{}, 1)}, done: make(chan error, 1)}
	s.run(terminal.Config{})
	_, pos := s.expect(0, regexp.MustCompile(`No walletgate with WALLETGATE_CONFIRM=human is running on\s+\S+\s+yet;\s+waiting for one`))
	listen(t, s.dir, s.broker)
	_, pos = s.expect(pos, regexp.MustCompile(`Connected to walletgate \(pid 4242`))
	id, _ := s.preview("late", "1")
	_, _ = s.expect(pos, regexp.MustCompile(`Approve preview `+id+`\?`))
	s.typeKeys("q\n")
	require.NoError(t, s.ended())

	err := terminal.Run(terminal.Config{In: strings.NewReader(""), Out: io.Discard, Socket: approval.SocketPath(approvalsDir(t), 1)})
	var ns *terminal.NoServerError
	require.ErrorAs(t, err, &ns)
}

// With one server's socket named, the terminal ends when that server stops.
func TestTerminalEndsWhenItsServerStops(t *testing.T) {
	s := &session{t: t, broker: approval.NewBroker(approval.Options{}), dir: approvalsDir(t), screen: &screen{fed: make(chan struct{}, 1)}, done: make(chan error, 1)}
	svc := listen(t, s.dir, s.broker)
	s.run(terminal.Config{Socket: approval.SocketPath(s.dir, info.PID)})
	_, _ = s.expect(0, regexp.MustCompile(`Waiting for previews`))
	require.NoError(t, svc.Close())
	err := s.ended()
	require.ErrorContains(t, err, "stopped")
	require.Contains(t, s.screen.String(), "A walletgate stopped answering")
}
