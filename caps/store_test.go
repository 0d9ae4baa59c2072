package caps

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// memStore is an in-memory DayStore shared by several ledgers, standing in
// for the journal that several processes share (the journal's own tests and
// walletgate's end-to-end tests cover the real one).
type memStore struct {
	mu      sync.Mutex
	entries []dayEntry
	fail    error
}

func (m *memStore) sum(since time.Time) Spend {
	total := make(Spend)
	for _, e := range m.entries {
		if !e.at.Before(since) {
			addSpend(total, copySpend(e.spend), 1)
		}
	}
	return total
}

func (m *memStore) Reserve(id string, at, since time.Time, change Spend, check func(Spend) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if err := check(m.sum(since)); err != nil {
		return err
	}
	m.entries = append(m.entries, dayEntry{at: at, spend: copySpend(change)})
	return nil
}

func (m *memStore) Correct(id string, at time.Time, change Spend) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = append(m.entries, dayEntry{at: at, spend: copySpend(change)})
	return nil
}

func (m *memStore) Sum(since time.Time) (Spend, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	return m.sum(since), nil
}

func TestStoreSharedByTwoLedgersNeverPassesTheDayCap(t *testing.T) {
	for round := 0; round < 10; round++ {
		store := &memStore{}
		clk := newFakeClock()
		lim := Limits{PerDay: capsOf(usdc, 50)}
		a := NewLedgerWithStore(lim, false, clk.now, store, "a")
		b := NewLedgerWithStore(lim, false, clk.now, store, "b")
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for i := 0; i < 100; i++ {
			l := a
			if i%2 == 1 {
				l = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := l.Reserve(spendOf(usdc, 1)); err == nil {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Equal(t, 50, ok, "round %d", round)
	}
}

func TestStoreKeepsTheDayAcrossLedgers(t *testing.T) {
	store := &memStore{}
	clk := newFakeClock()
	lim := Limits{PerSession: capsOf(usdc, 100), PerDay: capsOf(usdc, 100)}
	first := NewLedgerWithStore(lim, false, clk.now, store, "first")
	r, err := first.Reserve(spendOf(usdc, 70))
	require.NoError(t, err)
	r.Settle(spendOf(usdc, 60))

	// A restart: a new ledger (fresh session) on the same store.
	second := NewLedgerWithStore(lim, false, clk.now, store, "second")
	requireCode(t, second.Check(spendOf(usdc, 41)), CodeExceeded)
	require.NoError(t, second.Check(spendOf(usdc, 40)))
	requireUsed(t, second, usdc, 0, 60)
	r2, err := second.Reserve(spendOf(usdc, 40))
	require.NoError(t, err)
	r2.Release()
	requireUsed(t, second, usdc, 0, 60)

	clk.advance(DayLength + time.Second)
	require.NoError(t, second.Check(spendOf(usdc, 100)), "a day later the window is empty")
}

func TestStoreFailureFailsClosed(t *testing.T) {
	store := &memStore{fail: errors.New("journal is tampered")}
	l := NewLedgerWithStore(Limits{PerDay: capsOf(usdc, 100)}, false, newFakeClock().now, store, "x")
	e := requireCode(t, l.Check(spendOf(usdc, 1)), CodeNoLedger)
	require.ErrorContains(t, e, "journal is tampered")
	_, err := l.Reserve(spendOf(usdc, 1))
	requireCode(t, err, CodeNoLedger)
}
