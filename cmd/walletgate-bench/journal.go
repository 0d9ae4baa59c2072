package main

// The journal at any age: `walletgate-bench journal` generates realistic
// journals of several sizes and measures, side by side in one run, what a
// user feels of their history — start-up to tools/list, memory, a preview,
// `audit verify`, and how long a second process's open holds up the first.
// `walletgate-bench journal-gen DIR N` only writes a journal of N records.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/walletgate/walletgate/journal"

	"github.com/walletgate/walletgate/journal/records"
)

// genSpan is how long a generated history lasts: a year of use.
const genSpan = 365 * 24 * time.Hour

// generate appends n records to the journal in dir, shaped like a year of an
// assistant's use ending now: mostly reads (a tool_start and a tool_end
// each), and every 20th call a write — preview, then reserve, signed,
// broadcast, receipt and settlement — with a session start and end every
// 2,000 records. Every transaction gets its receipt: a journal that leaves
// some open would make start-up wait on the node, which is not what is
// measured here. The clock advances evenly, so the day window holds about a
// day's worth.
func generate(dir string, n int, segment int64) error {
	if n == 0 {
		return os.MkdirAll(dir, 0o700)
	}
	step := genSpan / time.Duration(n)
	t := time.Now().Add(-genSpan)
	clock := func() time.Time { t = t.Add(step); return t }
	j, err := journal.OpenOptions(dir, "generated", clock, journal.Options{SegmentSize: segment})
	if err != nil {
		return err
	}
	defer j.Close()
	written := 0
	app := func(kind string, data any, synced bool) error {
		if written >= n {
			return io.EOF
		}
		written++
		var err error
		if synced {
			_, err = j.Append(kind, data)
		} else {
			_, err = j.AppendUnsynced(kind, data)
		}
		return err
	}
	v := records.Version
	for call := 0; ; call++ {
		var err error
		step := func(kind string, data any) {
			if err == nil {
				// Durable only where walletgate makes it so, and sparingly,
				// to keep generating a million records quick.
				err = app(kind, data, call%2000 == 0 && kind == records.KindSigned)
			}
		}
		id := fmt.Sprintf("gen-%d", call)
		if call%1000 == 0 {
			step(records.KindSessionStart, records.SessionStart{V: v, Version: "bench", PID: 1, ChainID: 1337, Wallet: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", Signer: "dev"})
		}
		tool := "wallet_balance"
		if call%20 == 0 {
			tool = "wallet_send"
		}
		step(records.KindToolStart, records.ToolStart{V: v, Call: id, Tool: tool, ArgsSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"})
		if call%20 == 0 {
			step(records.KindPreview, records.Preview{V: v, Tool: tool, Fingerprint: "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752", Legs: 1, Spend: map[string]string{"ETH": "10000000000000000"}})
			at := t
			tx := fmt.Sprintf("0x%064x", call)
			step(records.KindCapReserve, records.CapChange{V: v, ID: id, At: at, Change: map[string]string{"ETH": "10042000000000000"}})
			step(records.KindSigned, records.Signed{V: v, Tool: tool, Leg: "transfer", Reservation: id, Tx: tx, Nonce: uint64(call / 20), From: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
				Raw: "0x02f87283053a3980843b9aca00847735940082520894000000000000000000000000000000000000be4c01872386f26fc1000080c001a0" + strings.Repeat("ab", 64)})
			step(records.KindBroadcast, records.Broadcast{V: v, Tx: tx, Outcome: records.BroadcastAccepted})
			step(records.KindReceipt, records.Receipt{V: v, Tx: tx, Status: 1, Block: uint64(call), GasUsed: 21000, Fee: "21000000000000"})
			step(records.KindCapCorrect, records.CapChange{V: v, ID: id, At: at, Change: map[string]string{"ETH": "-21000000000000"}})
		}
		step(records.KindToolEnd, records.ToolEnd{V: v, Call: id, Tool: tool, Outcome: "ok", MS: 4})
		if call%1000 == 999 {
			step(records.KindSessionEnd, records.SessionEnd{V: v, PID: 1})
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// cmdJournalGen is `walletgate-bench journal-gen DIR N`.
func cmdJournalGen(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: walletgate-bench journal-gen DIR N")
		return 2
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 {
		fmt.Fprintln(os.Stderr, "walletgate-bench: N must be a number of records")
		return 2
	}
	if err := generate(args[0], n, 0); err != nil {
		fmt.Fprintln(os.Stderr, "walletgate-bench:", err)
		return 1
	}
	return 0
}

// journalRow is one size's figures.
type journalRow struct {
	Records      int     `json:"records"`
	Segments     int     `json:"segments"`
	GenerateS    float64 `json:"generate_s"`
	ToolsListMS  stats   `json:"tools_list_ms"`
	Load         float64 `json:"load_average_1m"` // the median over the spawn rounds
	RSSKiB       int64   `json:"rss_kib"`
	PreviewMS    stats   `json:"preview_ms"`
	JournalOpsUS stats   `json:"preview_journal_work_us"`
	VerifyS      float64 `json:"audit_verify_s"`
	VerifyCPUS   float64 `json:"audit_verify_cpu_s"`
	BlockedMS    float64 `json:"second_open_blocks_ms"`
	BaselineMS   float64 `json:"append_max_without_open_ms"`
}

// cmdJournalBench is `walletgate-bench journal`.
func cmdJournalBench(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("journal", flag.ContinueOnError)
	sizes := fs.String("sizes", "0,100000,1000000", "journal sizes in records, measured side by side")
	n := fs.Int("n", 5, "samples per figure")
	bin := fs.String("bin", "", "walletgate binary (default: build ./cmd/walletgate)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var counts []int
	for _, s := range strings.Split(*sizes, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || c < 0 {
			fmt.Fprintf(os.Stderr, "walletgate-bench: bad size %q\n", s)
			return 2
		}
		counts = append(counts, c)
	}
	b := &bench{n: *n, ops: map[string][]sample{}}
	defer b.cleanup()
	rows, err := b.journalRun(ctx, *bin, counts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "walletgate-bench:", err)
		return 1
	}
	fmt.Printf("%-9s %-8s %-6s %-22s %-9s %-11s %-16s %-17s %-s\n", "records", "segments", "load", "tools/list ms med/min", "RSS MiB", "preview ms", "journal work µs", "verify s wall/cpu", "append max ms: during 2nd open / without")
	for _, r := range rows {
		fmt.Printf("%-9d %-8d %-6.1f %-22s %-9.1f %-11.1f %-16.0f %-17s %.1f / %.1f\n", r.Records, r.Segments, r.Load,
			fmt.Sprintf("%.1f / %.1f", r.ToolsListMS.Median, r.ToolsListMS.Min), float64(r.RSSKiB)/1024,
			r.PreviewMS.Median, r.JournalOpsUS.Median, fmt.Sprintf("%.2f / %.2f", r.VerifyS, r.VerifyCPUS), r.BlockedMS, r.BaselineMS)
	}
	return 0
}

func (b *bench) journalRun(ctx context.Context, binFlag string, counts []int) ([]journalRow, error) {
	bin := binFlag
	if bin == "" {
		built, err := b.build(ctx)
		if err != nil {
			return nil, err
		}
		bin = built
	}
	keyDir, err := os.MkdirTemp("", "walletgate-bench-key-")
	if err != nil {
		return nil, err
	}
	b.onCleanup(func() { os.RemoveAll(keyDir) })
	dp, info, _, err := startDevnet(ctx, filepath.Join(filepath.Dir(bin), "walletgate-devnet"), filepath.Join(keyDir, "dev.key"))
	if err != nil {
		return nil, err
	}
	b.onCleanup(func() { dp.stop(os.Interrupt, nil, 10*time.Second) })

	// Every journal first; then each figure is sampled round-robin over the
	// sizes, so that a busy moment of a shared machine falls on all alike.
	rows := make([]journalRow, len(counts))
	dirs := make([]string, len(counts))
	envs := make([][]string, len(counts))
	for k, count := range counts {
		root, err := os.MkdirTemp("", "walletgate-bench-journal-")
		if err != nil {
			return nil, err
		}
		b.onCleanup(func() { os.RemoveAll(root) })
		dirs[k] = filepath.Join(root, fmt.Sprintf("%d-%s", info.ChainID, info.DevAccount))
		logf("generating a journal of %d records", count)
		t0 := time.Now()
		if err := generate(dirs[k], count, 0); err != nil {
			return nil, err
		}
		rows[k] = journalRow{Records: count, GenerateS: round3(time.Since(t0).Seconds())}
		segs, _ := journal.Segments(dirs[k])
		rows[k].Segments = len(segs)
		envs[k] = cleanEnv(append([]string{"WALLETGATE_RPC=" + info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE=" + info.KeyFile, "WALLETGATE_STATE_DIR=" + root}, benchEnvCaps...)...)
	}
	load := []float64{}
	list := make([][]float64, len(counts))
	preview := make([][]float64, len(counts))
	for i := 0; i < b.n; i++ {
		load = append(load, loadAverage())
		for k := range counts {
			c, t0, err := spawnWalletgate(bin, envs[k])
			if err != nil {
				return nil, err
			}
			if _, err := c.initialize(ctx); err != nil {
				c.close()
				return nil, err
			}
			_, _, tList, err := c.request(ctx, "tools/list", map[string]any{}, 60*time.Second)
			if err != nil {
				c.close()
				return nil, err
			}
			list[k] = append(list[k], ms(tList.Sub(t0)))
			if i == b.n-1 {
				if m, err := readMem(c.p.pid()); err == nil {
					rows[k].RSSKiB = m.VmRSSKiB
				}
			}
			_, s, e, err := c.callTool(ctx, "wallet_send", map[string]any{"to": recipient, "amount": "0.0001", "asset": "ETH"}, 60*time.Second)
			c.close()
			if err != nil {
				return nil, err
			}
			preview[k] = append(preview[k], ms(e.Sub(s)))
		}
	}
	for k := range counts {
		rows[k].ToolsListMS, rows[k].PreviewMS = summary(list[k]), summary(preview[k])
		rows[k].Load = round3(summary(load).Median)
	}

	for k := range counts {
		// A preview's journal work, in process: the day window read under
		// the lock, the call's start, and the preview record appended.
		j, err := journal.Open(dirs[k], "bench", nil)
		if err != nil {
			return nil, err
		}
		var work []float64
		for i := 0; i < 50; i++ {
			t0 := time.Now()
			err := j.View(func(l *records.Live) error { _ = len(l.Caps); return nil })
			if err == nil {
				_, err = j.AppendUnsynced(records.KindToolStart, records.ToolStart{V: records.Version, Call: "bench", Tool: "wallet_send"})
			}
			if err == nil {
				_, err = j.Append(records.KindPreview, records.Preview{V: records.Version, Tool: "wallet_send", Legs: 1, Spend: map[string]string{"ETH": "1"}})
			}
			if err != nil {
				j.Close()
				return nil, err
			}
			work = append(work, float64(time.Since(t0).Microseconds()))
		}
		rows[k].JournalOpsUS = summary(work)
		rows[k].BaselineMS, rows[k].BlockedMS, err = secondOpen(j, dirs[k])
		j.Close()
		if err != nil {
			return nil, err
		}
	}

	// audit verify, three rounds: the fastest, and its CPU time, which a
	// busy machine inflates less than the wall time.
	for round := 0; round < 3; round++ {
		for k := range counts {
			t0 := time.Now()
			cmd := exec.CommandContext(ctx, bin, "audit", "verify", filepath.Join(dirs[k], journal.FileName))
			cmd.Env = envs[k]
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("audit verify: %v: %s", err, out)
			}
			wall := round3(time.Since(t0).Seconds())
			if round == 0 || wall < rows[k].VerifyS {
				rows[k].VerifyS = wall
				rows[k].VerifyCPUS = round3((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds())
			}
		}
	}
	for _, r := range rows {
		logf("%d records: %+v", r.Records, r)
	}
	return rows, nil
}

// secondOpen measures the longest Append of j while nothing else happens,
// then while another Journal (as a second process would) opens dir.
func secondOpen(j *journal.Journal, dir string) (baseline, during float64, err error) {
	measure := func(during func() error) (float64, error) {
		var (
			wg    sync.WaitGroup
			stop  = make(chan struct{})
			ready = make(chan struct{})
			worst time.Duration
			aerr  error
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				if i == 20 {
					close(ready) // appending steadily before the open starts
				}
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				if _, err := j.AppendUnsynced(records.KindToolEnd, records.ToolEnd{V: records.Version, Call: "bench", Tool: "wallet_balance", Outcome: "ok"}); err != nil {
					aerr = err
					if i < 20 {
						close(ready)
					}
					return
				}
				worst = max(worst, time.Since(t0))
				time.Sleep(200 * time.Microsecond)
			}
		}()
		<-ready
		err := during()
		time.Sleep(20 * time.Millisecond) // an append waiting on the open finishes
		close(stop)
		wg.Wait()
		if err == nil {
			err = aerr
		}
		return ms(worst), err
	}
	if baseline, err = measure(func() error { time.Sleep(500 * time.Millisecond); return nil }); err != nil {
		return 0, 0, err
	}
	during, err = measure(func() error {
		for range 5 {
			other, err := journal.Open(dir, "second", nil)
			if err != nil {
				return err
			}
			if err := other.Close(); err != nil {
				return err
			}
		}
		return nil
	})
	return baseline, during, err
}

// loadAverage is the 1-minute load average, to read the figures by: the
// machine may be shared.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
