package caps

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConcurrentReserveNeverOvershoots(t *testing.T) {
	const (
		workers = 200
		limit   = 50
		rounds  = 20
	)
	for round := range rounds {
		l := NewLedger(Limits{PerSession: capsOf(usdc, limit), PerDay: capsOf(eth, 1_000_000)}, false, newFakeClock().now)
		var ok, refused atomic.Int64
		var start, wg sync.WaitGroup
		start.Add(1)
		for range workers {
			wg.Go(func() {
				start.Wait()
				_, err := l.Reserve(spendOf(usdc, 1, eth, 1))
				if err != nil {
					var ce *Error
					if !asError(err, &ce) || ce.Code != CodeExceeded || ce.Window != PerSession {
						t.Errorf("unexpected error: %v", err)
					}
					refused.Add(1)
					return
				}
				ok.Add(1)
			})
		}
		start.Done()
		wg.Wait()
		require.EqualValues(t, limit, ok.Load(), "round %d", round)
		require.EqualValues(t, workers-limit, refused.Load(), "round %d", round)
		requireUsed(t, l, usdc, limit, limit)
		requireUsed(t, l, eth, limit, limit) // the refused ones reserved no ETH either
	}
}

// TestConcurrentMixedUse runs every method at once, for the race detector,
// and checks the books balance afterwards.
func TestConcurrentMixedUse(t *testing.T) {
	clock := newFakeClock()
	l := NewLedger(Limits{PerTx: capsOf(eth, 10), PerSession: capsOf(eth, 1_000_000)}, false, clock.now)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			for range 20 {
				r, err := l.Reserve(spendOf(eth, 10))
				if err != nil {
					t.Errorf("reserve: %v", err)
					return
				}
				_ = l.Check(spendOf(eth, 5))
				_ = l.Usage(eth)
				_ = l.Assets()
				_ = l.Capped(eth)
				switch i % 3 {
				case 0:
					r.Settle(spendOf(eth, 4))
				case 1:
					r.Release()
				default:
					// left counted
				}
				r.Settle(spendOf(eth, 9)) // no-op or the first settle
			}
		})
	}
	wg.Wait()
	// Of i = 0..49, 17 settle to 4, 17 release, and 16 leave the
	// reservation counted and then settle it to 9.
	want := int64(17*20*4 + 16*20*9)
	requireUsed(t, l, eth, want, want)
}
