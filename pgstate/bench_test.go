package pgstate_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/walletgate/walletgate/internal/pgtest"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/pgstate"
)

// reserver is what a reservation needs of the state: the engine's
// Recorder.
type reserver interface {
	Update(func(*records.Live, records.AppendFunc) error) error
}

// BenchmarkReservation measures one reservation (the day-cap check, the
// record and its nonce in one Update) on the local journal and on
// PostgreSQL (fsync on, over a unix socket), interleaved in the same run,
// and reports each one's median and p99 and the median added by the
// database. Run: go test -run '^$' -bench Reservation -benchtime 2000x ./pgstate/
func BenchmarkReservation(b *testing.B) {
	pg := pgtest.StartDurable(b)
	j, err := journal.Open(filepath.Join(b.TempDir(), "journal"), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	r, err := pgstate.Open(b.Context(), pgstate.Options{URL: pg.URL, ChainID: 1337, Genesis: chainGenesis, Address: wallet, Session: "bench", Host: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	stores := []struct {
		name string
		rec  reserver
		took []time.Duration
	}{{name: "journal", rec: j}, {name: "postgres", rec: r}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range stores {
			s := &stores[k]
			start := time.Now()
			if _, _, err := reserve(s.rec, fmt.Sprintf("r%d", i), 1<<62); err != nil {
				b.Fatal(err)
			}
			s.took = append(s.took, time.Since(start))
		}
	}
	b.StopTimer()
	var p50 [2]time.Duration
	for k, s := range stores {
		slices.Sort(s.took)
		p50[k] = s.took[len(s.took)/2]
		b.ReportMetric(float64(p50[k].Microseconds()), s.name+"-p50-µs")
		b.ReportMetric(float64(s.took[len(s.took)*99/100].Microseconds()), s.name+"-p99-µs")
	}
	b.ReportMetric(float64((p50[1] - p50[0]).Microseconds()), "added-p50-µs")
}
