package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

type report struct {
	Machine           machine           `json:"machine"`
	Binary            string            `json:"binary"`
	BinaryKiB         int64             `json:"binary_kib"`
	WalletgateVersion string            `json:"walletgate_version"`
	Commit            string            `json:"commit,omitempty"`
	N                 int               `json:"n"`
	SecondChain       bool              `json:"second_chain,omitempty"`
	DelayMS           int64             `json:"delay_ms,omitempty"` // per request to the node
	Versus            *versus           `json:"versus_floor,omitempty"`
	ColdStart         coldStart         `json:"cold_start"`
	Operations        []opReport        `json:"operations"`
	Inclusion         []inclusionReport `json:"inclusion"`
	Memory            memory            `json:"memory"`
	Notes             []string          `json:"notes,omitempty"`
}

type intStats struct {
	First  int     `json:"first"`
	Median float64 `json:"median"`
	Min    int     `json:"min"`
	Max    int     `json:"max"`
}

type opReport struct {
	Op            string         `json:"op"`
	Samples       int            `json:"samples"`
	LatencyMS     stats          `json:"latency_ms"`
	RPCMS         stats          `json:"rpc_ms"`
	OutsideRPCMS  stats          `json:"outside_rpc_ms"`
	ProxyAddedMS  stats          `json:"proxy_added_ms"`
	RoundTrips    intStats       `json:"round_trips"`
	Calls         intStats       `json:"calls"`
	Methods       map[string]int `json:"methods_last"`
	Sequence      []string       `json:"round_trips_last"`
	FirstSequence []string       `json:"round_trips_first,omitempty"`
	Minimum       minimum        `json:"minimum"`
	Ratio         *float64       `json:"ratio_round_trips,omitempty"`
	WithinOne     bool           `json:"within_one_round_trip"`
}

type inclusionReport struct {
	Op              string  `json:"op"`
	Samples         int     `json:"samples"`
	SendToAnswerMS  stats   `json:"send_to_answer_ms"`
	SendToReceiptMS stats   `json:"send_to_first_receipt_ms"`
	ReceiptPolls    stats   `json:"receipt_lookups_after_send"`
	NullLookups     stats   `json:"receipt_lookups_answered_null"`
	RawTxs          float64 `json:"transactions_per_confirm"`
}

func ints(xs []sample, f func(sample) int) intStats {
	if len(xs) == 0 {
		return intStats{}
	}
	vals := mapSlice(xs, func(s sample) float64 { return float64(f(s)) })
	st := summary(vals)
	return intStats{First: f(xs[0]), Median: st.Median, Min: int(st.Min), Max: int(st.Max)}
}

func (b *bench) operations() []opReport {
	var out []opReport
	for _, op := range opOrder {
		xs := b.ops[op]
		if len(xs) == 0 {
			continue
		}
		r := opReport{Op: op, Samples: len(xs)}
		r.LatencyMS = summary(mapSlice(xs, func(s sample) float64 { return ms(s.Latency) }))
		r.RPCMS = summary(mapSlice(xs, func(s sample) float64 { return ms(s.Upstream) }))
		r.OutsideRPCMS = summary(mapSlice(xs, func(s sample) float64 { return ms(s.Latency - s.Upstream) }))
		r.ProxyAddedMS = summary(mapSlice(xs, func(s sample) float64 { return ms(s.W.ProxyAdded) }))
		r.RoundTrips = ints(xs, func(s sample) int { return s.W.RoundTrips })
		r.Calls = ints(xs, func(s sample) int { return s.W.Calls })
		last := xs[len(xs)-1]
		r.Methods, r.Sequence = last.W.Methods, last.W.Sequence
		if !slices.Equal(xs[0].W.Sequence, last.W.Sequence) {
			r.FirstSequence = xs[0].W.Sequence
		}
		r.Minimum = minimums[op]
		if r.Minimum.RoundTrips > 0 {
			ratio := round3(r.RoundTrips.Median / float64(r.Minimum.RoundTrips))
			r.Ratio = &ratio
		}
		r.WithinOne = r.RoundTrips.Median <= float64(r.Minimum.RoundTrips+1)
		out = append(out, r)
	}
	return out
}

func (b *bench) inclusion() []inclusionReport {
	var out []inclusionReport
	for _, op := range []string{opSendETHConfirm, opSendTokConfirm, opSwapConfirmFirst, opSwapConfirm} {
		var xs []sample
		for _, s := range b.ops[op] {
			if s.Included {
				xs = append(xs, s)
			}
		}
		if len(xs) == 0 {
			continue
		}
		out = append(out, inclusionReport{
			Op:              op,
			Samples:         len(xs),
			SendToAnswerMS:  summary(mapSlice(xs, func(s sample) float64 { return ms(s.SendToAnswer) })),
			SendToReceiptMS: summary(mapSlice(xs, func(s sample) float64 { return ms(s.SendToReceipt) })),
			ReceiptPolls:    summary(mapSlice(xs, func(s sample) float64 { return float64(s.W.ReceiptPollsAfter) })),
			NullLookups:     summary(mapSlice(xs, func(s sample) float64 { return float64(s.W.NullAfter) })),
			RawTxs:          summary(mapSlice(xs, func(s sample) float64 { return float64(s.W.SendRawTxs) })).Median,
		})
	}
	return out
}

func f1(x float64) string { return fmt.Sprintf("%.1f", x) }

func rtCell(s intStats) string {
	med := fmt.Sprintf("%g", s.Median)
	if s.Min != s.Max {
		med += fmt.Sprintf(" (%d–%d)", s.Min, s.Max)
	}
	return med
}

func printTable(w io.Writer, r *report) {
	commit := ""
	if r.Commit != "" {
		commit = ", commit " + r.Commit
	}
	where := "all over loopback"
	if r.DelayMS > 0 {
		where = fmt.Sprintf("over loopback, every request to the node held %d ms", r.DelayMS)
	}
	if r.SecondChain {
		where += "; two chains (1337 and 31337, each node behind its own proxy), round trips counted at the first"
	}
	fmt.Fprintf(w, "walletgate-bench — %s%s; %s/%s, %d CPUs (%s), %s; N=%d; %s\n\n",
		r.WalletgateVersion, commit, r.Machine.OS, r.Machine.Arch, r.Machine.CPUs, r.Machine.CPU, r.Machine.GoVersion, r.N, where)

	if v := r.Versus; v != nil {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "beside the floor (medians)	spawn→tools/list ms	p10–p90	×floor (≤%.1f)	idle RSS MiB	×floor (≤%.1f)	binary MiB	packages	\n", v.TargetColdStart, v.TargetIdleRSS)
		for _, t := range v.Targets {
			fmt.Fprintf(tw, "%s\t%s\t%s–%s\t%s\t%.1f\t%s\t%.1f\t%d\t\n", t.Name, f1(t.ToolsListMS.Median), f1(t.ToolsListMS.P10), f1(t.ToolsListMS.P90),
				verdict(t.ColdRatio, t.ColdWithin), t.IdleRSSKiB.Median/1024, verdict(t.RSSRatio, t.RSSWithin), float64(t.BinaryKiB)/1024, t.Packages)
		}
		tw.Flush()
		fmt.Fprintf(w, "%s\n\n", v.Note)
		if r.ColdStart.ToolsListMS.N == 0 {
			return
		}
	}
	cs := r.ColdStart
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "cold start (ms, %d fresh spawns)\tmedian\tp10\tp90\tmin\tmax\t\n", cs.InitializeMS.N)
	for _, row := range []struct {
		name string
		s    stats
	}{{"spawn → initialize answer", cs.InitializeMS}, {"spawn → tools/list answer", cs.ToolsListMS}, {"  of which RPC before initialize", cs.UpstreamBeforeInit}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", row.name, f1(row.s.Median), f1(row.s.P10), f1(row.s.P90), f1(row.s.Min), f1(row.s.Max))
	}
	tw.Flush()
	fmt.Fprintf(w, "RPC before the initialize answer: %d round trip(s) %v (minimum 0: %s)\n", cs.RoundTripsBefore, cs.MethodsBefore, cs.MinRoundTripsNote)
	fmt.Fprintf(w, "tools listed: %s\n\n", strings.Join(cs.Tools, ", "))
	if len(r.Operations) == 0 {
		return // -cold-only
	}

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "operation (medians)\tn\tlatency ms\tp10–p90\tRPC ms\toutside RPC ms\t(proxy)\tround trips\t1st\tcalls\tmin RT\tmin calls\tRT/min\t\n")
	for _, o := range r.Operations {
		ratio := "—"
		if o.Ratio != nil {
			ratio = fmt.Sprintf("%.2f", *o.Ratio)
		} else if o.RoundTrips.Median == 0 {
			ratio = "at min"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s–%s\t%s\t%s\t%s\t%s\t%d\t%g\t%d\t%d\t%s\t\n", o.Op, o.Samples, f1(o.LatencyMS.Median), f1(o.LatencyMS.P10), f1(o.LatencyMS.P90),
			f1(o.RPCMS.Median), f1(o.OutsideRPCMS.Median), f1(o.ProxyAddedMS.Median), rtCell(o.RoundTrips), o.RoundTrips.First, o.Calls.Median, o.Minimum.RoundTrips, o.Minimum.Calls, ratio)
	}
	tw.Flush()
	fmt.Fprintf(w, "RPC ms: wall time with an upstream exchange in flight (measured at the proxy). outside RPC = latency − RPC ms: walletgate's own work,\n"+
		"the stdio hop, the proxy's own handling (its share in brackets) and, for confirms, the sleeps between receipt polls.\n"+
		"round trips = HTTP requests (median, range, 1st call); calls = JSON-RPC calls, batch elements counted one by one.\n")

	fmt.Fprintf(w, "\nround trips of each operation (last call; one entry per HTTP request, [..] = a batch)\n")
	for _, o := range r.Operations {
		if len(o.Sequence) == 0 && len(o.FirstSequence) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s: %s\n", o.Op, seq(o.Sequence))
		if len(o.FirstSequence) > 0 {
			fmt.Fprintf(w, "    1st call: %s\n", seq(o.FirstSequence))
		}
	}

	if len(r.Inclusion) > 0 {
		fmt.Fprintf(w, "\n")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "inclusion (ms, from the proxy reading the last eth_sendRawTransaction answer)\tn\tto answer\tp10–p90\tto 1st receipt\treceipt lookups\tof them null\ttxs\t\n")
		for _, in := range r.Inclusion {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s–%s\t%s\t%g\t%g\t%g\t\n", in.Op, in.Samples, f1(in.SendToAnswerMS.Median), f1(in.SendToAnswerMS.P10), f1(in.SendToAnswerMS.P90),
				f1(in.SendToReceiptMS.Median), in.ReceiptPolls.Median, in.NullLookups.Median, in.RawTxs)
		}
		tw.Flush()
	}

	m := r.Memory
	fmt.Fprintf(w, "\nmemory of the walletgate process (MiB)\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tVmRSS\tVmHWM (peak)\tRssAnon\tRssFile\t\n")
	for _, row := range []struct {
		name string
		m    memInfo
	}{{"idle, after initialize", m.Idle}, {"after the per-tool figures", m.AfterOps}, {fmt.Sprintf("after %d more previews", m.Previews), m.AfterPreviews}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", row.name, mib(row.m.VmRSSKiB), mib(row.m.VmHWMKiB), mib(row.m.RssAnonKiB), mib(row.m.RssFileKiB))
	}
	tw.Flush()
	fmt.Fprintf(w, "RssAnon is what walletgate allocated (heap, stacks); RssFile the mapped binary (%s MiB on disk), which the kernel may count in 2 MiB pieces.\n", mib(r.BinaryKiB))
	if m.Previews > 0 {
		fmt.Fprintf(w, "those previews: median %s ms (p10 %s, p90 %s), %g round trips each, %.1f s for the loop (with one ARGS_MISMATCH confirm each)\n",
			f1(m.PreviewMS.Median), f1(m.PreviewMS.P10), f1(m.PreviewMS.P90), m.PreviewRoundTrips, m.PreviewLoopSeconds)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func seq(s []string) string {
	if len(s) == 0 {
		return "(no RPC)"
	}
	var parts []string
	for i, x := range s {
		parts = append(parts, fmt.Sprintf("%d) %s", i+1, x))
	}
	return strings.Join(parts, "  ")
}

func mib(kib int64) string { return fmt.Sprintf("%.1f", float64(kib)/1024) }

// verdict prints a ratio to the floor and whether it meets its target.
func verdict(ratio float64, ok bool) string {
	if ratio == 0 {
		return "—"
	}
	if ok {
		return fmt.Sprintf("%.2f ok", ratio)
	}
	return fmt.Sprintf("%.2f OVER", ratio)
}
