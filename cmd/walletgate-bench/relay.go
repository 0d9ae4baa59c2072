package main

// walletgate-bench relay: what `walletgate connect` and the service's
// socket add to a call, beside plain stdio, in the same run: one walletgate
// over stdio and one `walletgate service run --env` reached through
// `walletgate connect`, both on the same dev chain, called in turn.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

func cmdRelayBench(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	n := fs.Int("n", 60, "calls per tool and transport (at most 64: the previews pending in one session)")
	bin := fs.String("bin", "", "walletgate binary (default: build ./cmd/walletgate)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	b := &bench{n: *n, ops: map[string][]sample{}}
	defer b.cleanup()
	if err := b.relayRun(ctx, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "walletgate-bench:", err)
		return 1
	}
	return 0
}

func (b *bench) relayRun(ctx context.Context, bin string) error {
	if bin == "" {
		built, err := b.build(ctx)
		if err != nil {
			return err
		}
		bin = built
	}
	tmp, err := os.MkdirTemp("", "walletgate-bench-relay-")
	if err != nil {
		return err
	}
	b.onCleanup(func() { os.RemoveAll(tmp) })
	dp, info, _, err := startDevnet(ctx, filepath.Join(filepath.Dir(bin), "walletgate-devnet"), filepath.Join(tmp, "dev.key"))
	if err != nil {
		return err
	}
	b.onCleanup(func() { dp.stop(os.Interrupt, nil, 10*time.Second) })
	envFor := func(state string) []string {
		return cleanEnv(append([]string{"WALLETGATE_RPC=" + info.RPC, "WALLETGATE_CHAIN_ID=1337", "WALLETGATE_KEY_FILE=" + info.KeyFile, "WALLETGATE_STATE_DIR=" + filepath.Join(tmp, state)}, benchEnvCaps...)...)
	}
	direct, _, err := spawnWalletgate(bin, envFor("direct"))
	if err != nil {
		return err
	}
	b.onCleanup(direct.close)
	sock := filepath.Join(tmp, "mcp.sock")
	svc := exec.Command(bin, "service", "run", "--env", "--socket", sock)
	svc.Env = envFor("service")
	svcErr := &tailBuffer{max: 64 << 10}
	svc.Stderr = svcErr
	sp, err := startProc(svc)
	if err != nil {
		return err
	}
	b.onCleanup(func() { sp.stop(os.Interrupt, nil, 10*time.Second) })
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the service did not listen within a minute; its stderr:\n" + svcErr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	relayed, _, err := spawnWith(bin, []string{"connect", "--socket", sock}, cleanEnv())
	if err != nil {
		return err
	}
	b.onCleanup(relayed.close)
	for _, c := range []*mcpClient{direct, relayed} {
		if _, err := c.initialize(ctx); err != nil {
			return err
		}
	}
	type figure struct{ direct, relayed []float64 }
	calls := []struct {
		name string
		args map[string]any
	}{{"wallet_address", map[string]any{}}, {"wallet_balance", map[string]any{}}, {"wallet_send (preview)", map[string]any{"to": recipient, "amount": "0.0001", "asset": "ETH"}}}
	figs := make([]figure, len(calls))
	for i := 0; i < b.n; i++ {
		for k, call := range calls {
			name := call.name
			if k == 2 {
				name = "wallet_send"
			}
			for j, c := range []*mcpClient{direct, relayed} {
				if i%2 == 1 { // each goes first half the time
					c = []*mcpClient{relayed, direct}[j]
				}
				r, s, e, err := c.callTool(ctx, name, call.args, 60*time.Second)
				if err != nil {
					return err
				}
				if r.IsError {
					return fmt.Errorf("%s answered an error: %s", name, r.text())
				}
				if c == direct {
					figs[k].direct = append(figs[k].direct, ms(e.Sub(s)))
				} else {
					figs[k].relayed = append(figs[k].relayed, ms(e.Sub(s)))
				}
			}
		}
	}
	fmt.Printf("%-24s %-22s %-22s %s\n", "call (n each)", "stdio ms med/p90", "connect ms med/p90", "added ms (median)")
	for k, call := range calls {
		d, r := summary(figs[k].direct), summary(figs[k].relayed)
		fmt.Printf("%-24s %-22s %-22s %+.3f\n", fmt.Sprintf("%s (%d)", call.name, d.N), fmt.Sprintf("%.3f / %.3f", d.Median, d.P90), fmt.Sprintf("%.3f / %.3f", r.Median, r.P90), r.Median-d.Median)
	}
	return nil
}
