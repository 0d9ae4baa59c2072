package caps

import (
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// BenchmarkReserve measures a reservation and its settlement, the work of one
// confirmed write. The clock moves a minute per iteration, so the rolling day
// holds 1,440 spends at most: a very busy day, and a steady state rather than
// a log that grows with b.N.
func BenchmarkReserve(b *testing.B) {
	clock := newFakeClock()
	huge := new(big.Int).Lsh(big.NewInt(1), 200)
	l := NewLedger(Limits{
		PerTx:      map[common.Address]*big.Int{eth: huge, usdc: huge},
		PerSession: map[common.Address]*big.Int{eth: huge, usdc: huge},
		PerDay:     map[common.Address]*big.Int{eth: huge, usdc: huge},
	}, false, clock.now)
	s := spendOf(eth, 21000*30_000_000_000, usdc, 25_000_000)
	b.ReportAllocs()
	for b.Loop() {
		r, err := l.Reserve(s)
		if err != nil {
			b.Fatal(err)
		}
		r.Settle(spendOf(eth, 21000*20_000_000_000))
		clock.advance(time.Minute)
	}
}
