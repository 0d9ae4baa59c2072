package main

// walletgate beside the floor: the same run, the same proxy and devnet,
// spawns alternated (floor, with a key, watch-only) so that a machine that
// gets busier part-way through slows all three alike. The targets are the
// issue's: cold start to tools/list at most 1.2× the floor's, idle RSS at
// most 1.5×, both with a key and watch-only.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Targets, as ratios of the floor's medians.
const (
	targetColdStart = 1.2
	targetIdleRSS   = 1.5
)

// devAddress is the dev account (signer.DevAddress), for the watch-only runs.
const devAddress = "0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c"

type versusTarget struct {
	Name          string  `json:"name"`
	ToolsListMS   stats   `json:"tools_list_ms"`
	IdleRSSKiB    stats   `json:"idle_rss_kib"`
	ColdRatio     float64 `json:"cold_start_ratio,omitempty"`
	RSSRatio      float64 `json:"idle_rss_ratio,omitempty"`
	ColdWithin    bool    `json:"cold_start_within_target"`
	RSSWithin     bool    `json:"idle_rss_within_target"`
	BinaryKiB     int64   `json:"binary_kib"`
	Packages      int     `json:"packages,omitempty"`
	PackagesSrc   string  `json:"packages_of,omitempty"`
	InitializeMS  stats   `json:"initialize_ms"`
	ToolsAnswered int     `json:"tools"`
}

type versus struct {
	TargetColdStart float64        `json:"target_cold_start_ratio"`
	TargetIdleRSS   float64        `json:"target_idle_rss_ratio"`
	Targets         []versusTarget `json:"targets"`
	Note            string         `json:"note"`
}

// versusRun measures the floor, walletgate with a key and walletgate
// watch-only, n spawns each, interleaved.
func (b *bench) versusRun(ctx context.Context, bin, floorBin string) (versus, error) {
	v := versus{TargetColdStart: targetColdStart, TargetIdleRSS: targetIdleRSS,
		Note: "Medians over alternated spawns against the same devnet behind the same proxy. Cold start: spawn → tools/list answered (initialize first). Idle RSS: VmRSS 500 ms after initialize."}
	watch := make([]string, 0, len(b.env))
	for _, kv := range b.env {
		if !strings.HasPrefix(kv, "WALLETGATE_KEY_FILE=") {
			watch = append(watch, kv)
		}
	}
	watch = append(watch, "WALLETGATE_ADDRESS="+devAddress)
	type target struct {
		name, bin, pkg string
		env            []string
		list, init     []float64
		rss            []float64
		tools          int
	}
	targets := []*target{
		{name: "floor (one-tool mcp-go + go-ethereum client)", bin: floorBin, pkg: "./cmd/walletgate-bench/floor", env: b.env},
		{name: "walletgate, with a key", bin: bin, pkg: "./cmd/walletgate", env: b.env},
		{name: "walletgate, watch-only", bin: bin, pkg: "./cmd/walletgate", env: watch},
	}
	for i := 0; i < b.n; i++ {
		for _, t := range targets {
			c, t0, err := spawnWalletgate(t.bin, t.env)
			if err != nil {
				return v, err
			}
			tInit, err := c.initialize(ctx)
			if err != nil {
				c.close()
				return v, fmt.Errorf("%s: %w; stderr:\n%s", t.name, err, c.stderr.String())
			}
			_, _, tList, err := c.request(ctx, "tools/list", map[string]any{}, 30*time.Second)
			if err != nil {
				c.close()
				return v, fmt.Errorf("%s: tools/list: %w", t.name, err)
			}
			t.init = append(t.init, ms(tInit.Sub(t0)))
			t.list = append(t.list, ms(tList.Sub(t0)))
			if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
				c.close()
				return v, err
			}
			m, err := readMem(c.p.pid())
			c.close()
			if err != nil {
				return v, err
			}
			t.rss = append(t.rss, float64(m.VmRSSKiB))
		}
	}
	floor := summary(targets[0].list).Median
	floorRSS := summary(targets[0].rss).Median
	for _, t := range targets {
		r := versusTarget{Name: t.name, ToolsListMS: summary(t.list), InitializeMS: summary(t.init), IdleRSSKiB: summary(t.rss)}
		if st, err := os.Stat(t.bin); err == nil {
			r.BinaryKiB = st.Size() / 1024
		}
		if b.buildDir != "" && filepath.Dir(t.bin) == b.buildDir { // built here from this tree
			r.Packages, r.PackagesSrc = countPackages(ctx, t.pkg), t.pkg
		}
		if floor > 0 && floorRSS > 0 {
			r.ColdRatio = round3(r.ToolsListMS.Median / floor)
			r.RSSRatio = round3(r.IdleRSSKiB.Median / floorRSS)
			r.ColdWithin, r.RSSWithin = r.ColdRatio <= targetColdStart, r.RSSRatio <= targetIdleRSS
		}
		v.Targets = append(v.Targets, r)
	}
	return v, nil
}

// countPackages is `go list -deps PKG | wc -l` from the module root, or 0
// outside the source tree.
func countPackages(ctx context.Context, pkg string) int {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" || strings.TrimSpace(string(out)) == os.DevNull {
		return 0
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", pkg)
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	list, err := cmd.Output()
	if err != nil {
		return 0
	}
	return len(strings.Fields(string(list)))
}
