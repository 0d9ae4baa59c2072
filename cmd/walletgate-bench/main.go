// Command walletgate-bench measures what a user of walletgate feels: cold
// start, per-tool latency and the part of it spent outside RPC, RPC round
// trips per operation beside the minimum each needs, time from a
// transaction's broadcast to walletgate reporting it, and memory.
//
//	go run ./cmd/walletgate-bench [-n 10] [-bin PATH] [-json FILE]
//	go run ./cmd/walletgate-bench journal [-sizes 0,100000,1000000] [-n 5] [-bin PATH]
//	go run ./cmd/walletgate-bench journal-gen DIR N
//	go run ./cmd/walletgate-bench relay [-n 200] [-bin PATH]
//
// It builds walletgate, walletgate-devnet and the floor server (unless -bin
// is given), starts walletgate-devnet on 127.0.0.1, puts an RPC-counting
// proxy on 127.0.0.1 in front of it, and spawns walletgate over stdio
// against the proxy; beside it, in the same run, the floor (floor/: a
// one-tool mcp-go server linking go-ethereum's client packages). Everything it starts
// listens on loopback only and is stopped when it ends, on error and on
// Ctrl-C too. See BENCHMARKS.md for what each figure means.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

const modulePath = "github.com/walletgate/walletgate"

// Caps large enough that no measured operation is refused.
var benchEnvCaps = []string{
	"WALLETGATE_CAP_PER_TX=ETH=1,USDT=1000,DAI=1000,WETH=1",
	"WALLETGATE_CAP_PER_SESSION=ETH=1000,USDT=1000000,DAI=1000000,WETH=1000",
	"WALLETGATE_CAP_PER_DAY=ETH=1000,USDT=1000000,DAI=1000000,WETH=1000",
}

// recipient of the sends: an account without code.
const recipient = "0x0000000000000000000000000000000000be4c01"

func main() {
	os.Exit(run())
}

func run() int {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "journal":
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return cmdJournalBench(ctx, os.Args[2:])
		case "journal-gen":
			return cmdJournalGen(os.Args[2:])
		case "relay":
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return cmdRelayBench(ctx, os.Args[2:])
		}
	}
	n := flag.Int("n", 10, "samples per figure: fresh spawns for cold start, calls per tool")
	bin := flag.String("bin", "", "walletgate binary to measure (default: build ./cmd/walletgate into a temporary directory)")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	devnetBin := flag.String("devnet-bin", "", "walletgate-devnet binary (or a walletgate to run `walletgate devnet` from); default: the one built or beside -bin")
	floorBin := flag.String("floor-bin", "", "floor server binary (default: build ./cmd/walletgate-bench/floor)")
	startupOnly := flag.Bool("startup-only", false, "measure only cold start and idle memory beside the floor")
	previews := flag.Int("previews", 1000, "wallet_send previews before the second memory reading")
	delay := flag.Duration("delay", 0, "hold every request to the node this long (a remote node: round trips cost what they would there), e.g. 150ms")
	secondChain := flag.Bool("second-chain", false, "serve a second dev chain (walletgate-devnet --chain-id 31337, behind its own proxy with the same -delay) beside the first: WALLETGATE_CHAIN_ID=1337,31337")
	coldOnly := flag.Bool("cold-only", false, "measure only the cold start (spawn → initialize → tools/list)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "walletgate-bench: unexpected argument %q\n", flag.Arg(0))
		return 2
	}
	if *n < 1 || *n > 1000 {
		fmt.Fprintln(os.Stderr, "walletgate-bench: -n must be between 1 and 1000")
		return 2
	}
	if *previews < 0 || *previews > 100_000 {
		fmt.Fprintln(os.Stderr, "walletgate-bench: -previews must be between 0 and 100000")
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	b := &bench{n: *n, previews: *previews, ops: map[string][]sample{}, delay: *delay}
	defer b.cleanup()
	b.floorBin, b.startupOnly, b.secondChain, b.coldOnly = *floorBin, *startupOnly, *secondChain, *coldOnly
	rep, err := b.run(ctx, *bin, *devnetBin)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "walletgate-bench: interrupted; stopping what it started")
		} else {
			fmt.Fprintln(os.Stderr, "walletgate-bench:", err)
		}
		return 1
	}
	printTable(os.Stdout, rep)
	if *jsonOut != "" {
		out, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonOut, append(out, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "walletgate-bench: write JSON:", err)
			return 1
		}
		fmt.Fprintf(os.Stdout, "\nJSON written to %s\n", *jsonOut)
	}
	return 0
}

// bench holds what one run started and measured.
type bench struct {
	n, previews int
	cleanups    []func()
	proxy       *countingProxy
	devnet      devnetInfo
	env         []string
	ops         map[string][]sample
	floorBin    string
	startupOnly bool
	secondChain bool // -second-chain
	coldOnly    bool // -cold-only
	buildDir    string
	delay       time.Duration // per request to the node (-delay)
}

func (b *bench) onCleanup(f func()) { b.cleanups = append(b.cleanups, f) }

func (b *bench) cleanup() {
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		b.cleanups[i]()
	}
	b.cleanups = nil
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "walletgate-bench: "+format+"\n", a...)
}

// sample is one measured tool call.
type sample struct {
	Latency  time.Duration
	Upstream time.Duration
	W        window
	// writes
	SendToAnswer  time.Duration
	SendToReceipt time.Duration
	Included      bool
}

func (b *bench) run(ctx context.Context, binFlag, devnetBin string) (*report, error) {
	rep := &report{N: b.n, Machine: machineInfo(), DelayMS: b.delay.Milliseconds()}
	bin := binFlag
	if bin == "" {
		built, err := b.build(ctx)
		if err != nil {
			return nil, err
		}
		bin = built
	} else if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	rep.Binary = bin
	if st, err := os.Stat(bin); err == nil {
		rep.BinaryKiB = st.Size() / 1024
	}
	if out, err := exec.CommandContext(ctx, bin, "version").Output(); err == nil {
		rep.WalletgateVersion = strings.TrimSpace(string(out))
	}
	rep.Commit = gitCommit()

	if devnetBin == "" {
		devnetBin = filepath.Join(filepath.Dir(bin), "walletgate-devnet")
	}
	if b.floorBin == "" {
		built, err := b.buildPkg(ctx, "./cmd/walletgate-bench/floor", "floor")
		if err != nil {
			return nil, err
		}
		b.floorBin = built
	}
	logf("starting walletgate-devnet on 127.0.0.1")
	keyDir, err := os.MkdirTemp("", "walletgate-bench-key-")
	if err != nil {
		return nil, err
	}
	b.onCleanup(func() { os.RemoveAll(keyDir) })
	dp, info, _, err := startDevnet(ctx, devnetBin, filepath.Join(keyDir, "dev.key"))
	if err != nil {
		return nil, err
	}
	b.onCleanup(func() { dp.stop(os.Interrupt, nil, 10*time.Second) })
	b.devnet = info
	if info.Swaps != "on" {
		logf("swaps are off on the devnet (%s): swap figures are skipped", info.Swaps)
	}

	p, err := startProxy(info.RPC, b.delay)
	if err != nil {
		return nil, err
	}
	b.onCleanup(p.Close)
	b.proxy = p
	// A journal of its own: the bench must not touch the user's state.
	stateDir, err := os.MkdirTemp("", "walletgate-bench-state-")
	if err != nil {
		return nil, err
	}
	b.onCleanup(func() { os.RemoveAll(stateDir) })
	rpc, ids := p.URL(), "1337"
	if b.secondChain {
		logf("starting a second walletgate-devnet (--chain-id 31337) behind its own proxy")
		dp2, info2, _, err := startDevnet(ctx, devnetBin, filepath.Join(keyDir, "dev.key"), "--chain-id", "31337")
		if err != nil {
			return nil, err
		}
		b.onCleanup(func() { dp2.stop(os.Interrupt, nil, 10*time.Second) })
		p2, err := startProxy(info2.RPC, b.delay)
		if err != nil {
			return nil, err
		}
		b.onCleanup(p2.Close)
		rpc, ids = rpc+","+p2.URL(), "1337,31337"
		rep.SecondChain = true
	}
	b.env = cleanEnv(append([]string{
		"WALLETGATE_RPC=" + rpc,
		"WALLETGATE_CHAIN_ID=" + ids,
		"WALLETGATE_KEY_FILE=" + info.KeyFile,
		"WALLETGATE_STATE_DIR=" + stateDir,
	}, benchEnvCaps...)...)
	if b.coldOnly {
		logf("cold start: %d fresh spawns", b.n)
		cs, err := b.coldStart(ctx, bin)
		if err != nil {
			return nil, err
		}
		rep.ColdStart = cs
		return rep, nil
	}

	logf("beside the floor: %d spawns each of the floor, walletgate with a key and watch-only, alternated", b.n)
	vs, err := b.versusRun(ctx, bin, b.floorBin)
	if err != nil {
		return nil, err
	}
	rep.Versus = &vs
	if b.startupOnly {
		return rep, nil
	}

	logf("cold start: %d fresh spawns", b.n)
	cs, err := b.coldStart(ctx, bin)
	if err != nil {
		return nil, err
	}
	rep.ColdStart = cs

	logf("per-tool figures: %d calls each", b.n)
	mem, err := b.session(ctx, bin, info.Swaps == "on")
	if err != nil {
		return nil, err
	}
	rep.Memory = mem
	rep.Operations = b.operations()
	rep.Inclusion = b.inclusion()
	if d := p.droppedEvents(); d > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the proxy's event log was full: %d round trips were forwarded but not recorded", d))
	}
	return rep, nil
}

// build compiles walletgate and walletgate-devnet (beside it, where --dev
// looks) from the module in the working directory.
func (b *bench) build(ctx context.Context) (string, error) {
	bin, err := b.buildPkg(ctx, "./cmd/walletgate", "walletgate")
	if err != nil {
		return "", err
	}
	if _, err := b.buildPkg(ctx, "./cmd/walletgate-devnet", "walletgate-devnet"); err != nil {
		return "", err
	}
	return bin, nil
}

// buildPkg compiles pkg of the module in the working directory into the
// bench's temporary directory as name.
func (b *bench) buildPkg(ctx context.Context, pkg, name string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w (run from the walletgate repository, or give -bin, -devnet-bin and -floor-bin)", err)
	}
	gomod := strings.TrimSpace(string(out))
	src, err := os.ReadFile(gomod)
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(src)), "module "+modulePath+"\n") {
		return "", fmt.Errorf("the working directory is not in the walletgate module (%s): run from the repository, or give -bin, -devnet-bin and -floor-bin", gomod)
	}
	if b.buildDir == "" {
		dir, err := os.MkdirTemp("", "walletgate-bench-")
		if err != nil {
			return "", err
		}
		b.onCleanup(func() { os.RemoveAll(dir) })
		b.buildDir = dir
	}
	bin := filepath.Join(b.buildDir, name)
	linked := bin + ".linked"
	logf("building %s into %s", pkg, b.buildDir)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", linked, pkg)
	cmd.Dir = filepath.Dir(gomod)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %w", pkg, err)
	}
	if err := install(linked, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// install copies a freshly linked binary with plain writes, as cp, tar, a
// package manager or an MCP bundle's unpacking leaves it, and removes the
// linker's file. The Go linker writes its output through mmap, which leaves
// the file in the page cache in 2 MiB folios that the kernel maps whole at
// the first touch: measured from the linker's file, walletgate's idle RSS
// was 5 MiB higher (the floor's 0.5 MiB), memory that no installed copy of
// the binary shows.
func install(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(struct{ io.Writer }{dst}, src); err != nil { // plain writes, no copy_file_range
		dst.Close()
		return fmt.Errorf("install %s: %w", to, err)
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("install %s: %w", to, err)
	}
	return os.Remove(from)
}

// ---- cold start ----

type coldStart struct {
	InitializeMS       stats    `json:"initialize_ms"`
	ToolsListMS        stats    `json:"tools_list_ms"`
	RoundTripsBefore   int      `json:"rpc_round_trips_before_initialize_answer"`
	CallsBefore        int      `json:"rpc_calls_before_initialize_answer"`
	MethodsBefore      []string `json:"rpc_before_initialize_answer"`
	RoundTripsTotal    int      `json:"rpc_round_trips_until_tools_list_answer"`
	Tools              []string `json:"tools"`
	MinRoundTripsNote  string   `json:"minimum"`
	UpstreamBeforeInit stats    `json:"rpc_ms_before_initialize_answer"`
}

func (b *bench) coldStart(ctx context.Context, bin string) (coldStart, error) {
	var initMS, listMS, rpcMS []float64
	var cs coldStart
	for i := 0; i < b.n; i++ {
		mark := b.proxy.mark()
		c, t0, err := spawnWalletgate(bin, b.env)
		if err != nil {
			return cs, err
		}
		tInit, err := c.initialize(ctx)
		if err != nil {
			c.close()
			return cs, fmt.Errorf("cold start %d: %w", i+1, err)
		}
		raw, _, tList, err := c.request(ctx, "tools/list", map[string]any{}, 30*time.Second)
		c.close()
		if err != nil {
			return cs, fmt.Errorf("cold start %d: %w", i+1, err)
		}
		initMS = append(initMS, ms(tInit.Sub(t0)))
		listMS = append(listMS, ms(tList.Sub(t0)))
		var before []rtEvent
		evs := b.proxy.since(mark)
		for _, e := range evs {
			if e.End.Before(tInit) {
				before = append(before, e)
			}
		}
		w := summarise(before)
		rpcMS = append(rpcMS, ms(w.Upstream))
		if i == 0 {
			cs.RoundTripsBefore, cs.CallsBefore, cs.MethodsBefore = w.RoundTrips, w.Calls, w.Sequence
			cs.RoundTripsTotal = len(evs)
			var tl struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			_ = json.Unmarshal(raw, &tl)
			for _, t := range tl.Tools {
				cs.Tools = append(cs.Tools, t.Name)
			}
		}
	}
	cs.InitializeMS, cs.ToolsListMS, cs.UpstreamBeforeInit = summary(initMS), summary(listMS), summary(rpcMS)
	cs.MinRoundTripsNote = minimums[opStartup].Reason
	return cs, nil
}

// ---- one long session: per-tool figures and memory ----

type memory struct {
	Idle               memInfo `json:"idle_after_initialize"`
	AfterOps           memInfo `json:"after_tool_figures"`
	AfterPreviews      memInfo `json:"after_previews"`
	Previews           int     `json:"previews"`
	PreviewMS          stats   `json:"preview_ms"`
	PreviewRoundTrips  float64 `json:"preview_round_trips_median"`
	PreviewLoopSeconds float64 `json:"preview_loop_seconds"`
	Note               string  `json:"note"`
}

func (b *bench) session(ctx context.Context, bin string, swaps bool) (memory, error) {
	var mem memory
	c, _, err := spawnWalletgate(bin, b.env)
	if err != nil {
		return mem, err
	}
	b.onCleanup(c.close)
	if _, err := c.initialize(ctx); err != nil {
		return mem, err
	}
	if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
		return mem, err
	}
	if mem.Idle, err = readMem(c.p.pid()); err != nil {
		return mem, err
	}
	if _, _, _, err := c.request(ctx, "tools/list", map[string]any{}, 30*time.Second); err != nil {
		return mem, err
	}

	const readTimeout, writeTimeout = 60 * time.Second, 5 * time.Minute
	call := func(op, tool string, args map[string]any, timeout time.Duration) (toolResult, error) {
		mark := b.proxy.mark()
		r, sent, recv, err := c.callTool(ctx, tool, args, timeout)
		if err != nil {
			return r, err
		}
		if r.IsError {
			return r, fmt.Errorf("%s %v: refused: %s", tool, args, r.text())
		}
		w := summarise(b.proxy.since(mark))
		s := sample{Latency: recv.Sub(sent), Upstream: w.Upstream, W: w}
		if !w.LastSendRaw.IsZero() {
			s.SendToAnswer = recv.Sub(w.LastSendRaw)
			if !w.FirstReceiptAfter.IsZero() {
				s.SendToReceipt = w.FirstReceiptAfter.Sub(w.LastSendRaw)
				s.Included = true
			}
		}
		b.ops[op] = append(b.ops[op], s)
		return r, nil
	}
	type previewOut struct {
		Status       string `json:"status"`
		ConfirmToken string `json:"confirm_token"`
	}
	type confirmOut struct {
		Status string `json:"status"`
		TxHash string `json:"tx_hash"`
	}
	twoStep := func(previewOp, confirmOp, tool string, args map[string]any) (string, error) {
		r, err := call(previewOp, tool, args, writeTimeout)
		if err != nil {
			return "", err
		}
		var pv previewOut
		if err := json.Unmarshal(r.Structured, &pv); err != nil || pv.ConfirmToken == "" {
			return "", fmt.Errorf("%s: preview without confirm_token: %s", tool, r.text())
		}
		confirm := map[string]any{"confirm": pv.ConfirmToken}
		for k, v := range args {
			confirm[k] = v
		}
		r, err = call(confirmOp, tool, confirm, writeTimeout)
		if err != nil {
			return "", err
		}
		var co confirmOut
		if err := json.Unmarshal(r.Structured, &co); err != nil || co.Status != "confirmed" {
			return "", fmt.Errorf("%s: confirm did not confirm: %s", tool, r.text())
		}
		return co.TxHash, nil
	}

	for i := 0; i < b.n; i++ {
		if _, err := call(opAddress, "wallet_address", map[string]any{}, readTimeout); err != nil {
			return mem, err
		}
	}
	for i := 0; i < b.n; i++ {
		if _, err := call(opPolicy, "wallet_policy", map[string]any{}, readTimeout); err != nil {
			return mem, err
		}
	}
	for i := 0; i < b.n; i++ {
		if _, err := call(opBalance, "wallet_balance", map[string]any{}, readTimeout); err != nil {
			return mem, err
		}
	}
	if swaps {
		for i := 0; i < b.n; i++ {
			if _, err := call(opQuote, "wallet_swap_quote", map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "10"}, readTimeout); err != nil {
				return mem, err
			}
		}
	}
	logf("sends: %d ETH and %d USDT, each previewed and confirmed", b.n, b.n)
	for i := 0; i < b.n; i++ {
		if _, err := twoStep(opSendETHPreview, opSendETHConfirm, "wallet_send", map[string]any{"to": recipient, "amount": "0.001"}); err != nil {
			return mem, err
		}
	}
	var hashes []string
	for i := 0; i < b.n; i++ {
		h, err := twoStep(opSendTokPreview, opSendTokConfirm, "wallet_send", map[string]any{"to": recipient, "amount": "1", "asset": "USDT"})
		if err != nil {
			return mem, err
		}
		hashes = append(hashes, h)
	}
	for i := 0; i < b.n; i++ {
		r, err := call(opVerify, "wallet_verify_tx", map[string]any{"tx": hashes[i], "expected_to": recipient, "expected_amount": "1", "asset": "USDT"}, readTimeout)
		if err != nil {
			return mem, err
		}
		var v struct {
			Status      string `json:"status"`
			AmountMatch *bool  `json:"amount_match"`
		}
		if json.Unmarshal(r.Structured, &v) != nil || v.Status != "success" || v.AmountMatch == nil || !*v.AmountMatch {
			return mem, fmt.Errorf("wallet_verify_tx %s did not verify the send: %s", hashes[i], r.text())
		}
	}
	if swaps {
		logf("swaps: 1 + %d USDT→WETH, each previewed and confirmed (approve + swap)", b.n)
		swapArgs := map[string]any{"token_in": "USDT", "token_out": "WETH", "amount_in": "10"}
		if _, err := twoStep(opSwapPreviewFirst, opSwapConfirmFirst, "wallet_swap", swapArgs); err != nil {
			return mem, err
		}
		for i := 0; i < b.n; i++ {
			if _, err := twoStep(opSwapPreview, opSwapConfirm, "wallet_swap", swapArgs); err != nil {
				return mem, err
			}
		}
	}
	if mem.AfterOps, err = readMem(c.p.pid()); err != nil {
		return mem, err
	}

	// Previews, each followed by a confirm with other arguments: the gate
	// spends the token (ARGS_MISMATCH, nothing sent), so outstanding tokens
	// stay under the gate's bound of 64 and every preview is a real one.
	logf("memory: %d wallet_send previews", b.previews)
	mem.Previews = b.previews
	var pvMS, pvRT []float64
	loopStart := time.Now()
	for i := 0; i < b.previews; i++ {
		mark := b.proxy.mark()
		r, sent, recv, err := c.callTool(ctx, "wallet_send", map[string]any{"to": recipient, "amount": "0.001"}, readTimeout)
		if err != nil {
			return mem, err
		}
		var pv previewOut
		if r.IsError || json.Unmarshal(r.Structured, &pv) != nil || pv.ConfirmToken == "" {
			return mem, fmt.Errorf("preview %d: %s", i+1, r.text())
		}
		pvMS = append(pvMS, ms(recv.Sub(sent)))
		pvRT = append(pvRT, float64(len(b.proxy.since(mark))))
		r, _, _, err = c.callTool(ctx, "wallet_send", map[string]any{"to": recipient, "amount": "0.002", "confirm": pv.ConfirmToken}, readTimeout)
		if err != nil {
			return mem, err
		}
		if !r.IsError || !strings.HasPrefix(r.text(), "ARGS_MISMATCH") {
			return mem, fmt.Errorf("abandoning preview %d: expected ARGS_MISMATCH, got: %s", i+1, r.text())
		}
	}
	mem.PreviewLoopSeconds = round3(time.Since(loopStart).Seconds())
	mem.PreviewMS = summary(pvMS)
	mem.PreviewRoundTrips = summary(pvRT).Median
	if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
		return mem, err
	}
	if mem.AfterPreviews, err = readMem(c.p.pid()); err != nil {
		return mem, err
	}
	mem.Note = "VmHWM is the peak resident set since the process started; VmRSS the resident set at the reading, RssAnon + RssFile: anonymous memory (heap, stacks) and file-backed pages (the mapped binary). Each preview is followed by a confirm with other arguments, which spends its token (ARGS_MISMATCH, nothing sent): the gate holds at most 64 outstanding tokens."
	c.close()
	return mem, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ---- machine ----

type machine struct {
	OS, Arch  string
	CPUs      int
	CPU       string
	GoVersion string
	Date      string
}

func machineInfo() machine {
	m := machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Date: time.Now().UTC().Format(time.RFC3339)}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// gitCommit is the working tree's commit, "+dirty" when it has changes; ""
// outside a git checkout.
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += "+dirty"
	}
	return c
}
