package engine

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// BenchmarkConcurrentConfirms is ETH sends previewed and confirmed by 8
// goroutines at once on one engine whose records are a journal on disk,
// against the dev chain: what the one release path (every settlement in a
// locked update) costs a busy wallet. Its figure is confirms per second.
func BenchmarkConcurrentConfirms(b *testing.B) {
	ctx := context.Background()
	d, err := devnet.Start(ctx, devnet.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	c, err := chain.NewFromRPC(ctx, d.RPC(), "embedded dev chain")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	dir := b.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	j, err := journal.Open(dir, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	lots := func() map[common.Address]*big.Int {
		return map[common.Address]*big.Int{policy.NativeAsset: new(big.Int).Mul(big.NewInt(1e18), big.NewInt(1000))}
	}
	e := New(Deps{Chain: c, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Minute, 1024, nil),
		Limits: caps.Limits{PerTx: lots(), PerSession: lots(), PerDay: lots()}, Capped: true, Journal: j, Session: "bench", ReceiptTimeout: 30 * time.Second})
	to := common.HexToAddress("0x00000000000000000000000000000000000be9c4")
	var n atomic.Int64
	b.SetParallelism(4) // 4 × GOMAXPROCS goroutines
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			call := chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(1)}
			built, ref := e.Build(ctx, call, to, func(c chain.Call) caps.Spend { return caps.Spend{policy.NativeAsset: c.MaxCost()} }, nil)
			if ref != nil {
				b.Error(ref)
				return
			}
			p := &Plan{Legs: []Leg{{Label: "send", Call: built.Call}}, Spend: built.Spend, Recipient: &to,
				Effects: []Effect{{Asset: ETH, From: signer.DevAddress, To: to, Amount: big.NewInt(1)}}}
			canonical := []byte(fmt.Sprintf("send %d", n.Add(1)))
			token, _, ref := e.Issue("wallet_send", canonical, p)
			if ref != nil {
				b.Error(ref)
				return
			}
			out, ref := e.Confirm(ctx, TokenMode{}, token, "wallet_send", canonical)
			if ref != nil && ref.Code != CodeTxOutstanding {
				b.Error(ref)
				return
			}
			if out != nil && out.Status != StatusConfirmed {
				b.Errorf("status %s", out.Status)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "confirms/s")
}
