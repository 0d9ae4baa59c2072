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
	// failCorrect fails every Correct; ended holds each reservation's one
	// correction (the journal's EndReservation, in memory).
	failCorrect error
	ended       map[string]Spend
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

func (m *memStore) Correct(id string, at time.Time, change Spend) (Spend, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failCorrect != nil {
		return nil, m.failCorrect
	}
	if done, ok := m.ended[id]; ok {
		return copySpend(done), nil
	}
	if m.ended == nil {
		m.ended = map[string]Spend{}
	}
	m.ended[id] = copySpend(change)
	m.entries = append(m.entries, dayEntry{at: at, spend: copySpend(change)})
	return copySpend(change), nil
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

func TestAFailedCorrectionKeepsTheLargerAmountCountedAndSaysSo(t *testing.T) {
	store := &memStore{}
	l := NewLedgerWithStore(Limits{PerSession: capsOf(usdc, 100), PerDay: capsOf(usdc, 100)}, false, newFakeClock().now, store, "a")
	released, err := l.Reserve(spendOf(usdc, 40))
	require.NoError(t, err)
	settledUp, err := l.Reserve(spendOf(usdc, 10))
	require.NoError(t, err)
	store.failCorrect = errors.New("disk full")
	// A release that cannot be recorded: nothing is given back anywhere.
	require.Error(t, released.Release())
	// A settlement above the reservation that cannot be recorded: the
	// session counts the larger amount; the store still holds the reserved.
	require.Error(t, settledUp.Settle(spendOf(usdc, 15)))
	requireUsed(t, l, usdc, 55, 50)
}

func TestAReservationEndsOnceWhoeverEndsItFirst(t *testing.T) {
	store := &memStore{}
	clk := newFakeClock()
	lim := Limits{PerSession: capsOf(usdc, 100), PerDay: capsOf(usdc, 100)}
	a := NewLedgerWithStore(lim, false, clk.now, store, "a")
	res, err := a.Reserve(spendOf(usdc, 60))
	require.NoError(t, err)
	// Another process settles it first, at 25 (it saw the receipt).
	recorded, err := store.Correct(res.ID(), res.At(), spendOf(usdc, -35))
	require.NoError(t, err)
	require.Equal(t, int64(-35), recorded[usdc].Int64())
	// The holder's own release, racing it, changes nothing in the store and
	// takes the recorded correction into its session window.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); require.NoError(t, res.Release()) }()
	}
	wg.Wait()
	requireUsed(t, a, usdc, 25, 25)
}
