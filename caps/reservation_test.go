package caps

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func newTestLedger(clock *fakeClock) *Ledger {
	return NewLedger(Limits{
		PerTx:      capsOf(eth, 1000, usdc, 1000),
		PerSession: capsOf(eth, 100, usdc, 100),
		PerDay:     capsOf(eth, 100, usdc, 100),
	}, false, clock.now)
}

func TestReleaseReturns(t *testing.T) {
	l := newTestLedger(newFakeClock())
	r, err := l.Reserve(spendOf(eth, 100, usdc, 100))
	require.NoError(t, err)
	requireCode(t, l.Check(spendOf(eth, 1)), CodeExceeded)
	r.Release()
	requireUsed(t, l, eth, 0, 0)
	requireUsed(t, l, usdc, 0, 0)
	_, err = l.Reserve(spendOf(eth, 100, usdc, 100))
	require.NoError(t, err)
}

func TestSettle(t *testing.T) {
	tests := []struct {
		name            string
		reserve, actual Spend
		wantETH         int64
		wantUSDC        int64
	}{
		{"smaller actual frees the difference", spendOf(eth, 80), spendOf(eth, 30), 30, 0},
		{"equal actual", spendOf(eth, 80), spendOf(eth, 80), 80, 0},
		{"reverted token send spends only its fee", spendOf(eth, 20, usdc, 50), spendOf(eth, 7), 7, 0},
		{"explicit zero token", spendOf(eth, 20, usdc, 50), spendOf(eth, 7, usdc, 0), 7, 0},
		{"nil actual settles to zero", spendOf(eth, 20, usdc, 50), nil, 0, 0},
		{"more than reserved is recorded, even past the cap", spendOf(eth, 90), spendOf(eth, 120), 120, 0},
		{"an asset not reserved is recorded", spendOf(eth, 10), spendOf(eth, 10, usdc, 5), 10, 5},
		{"negative actual keeps the reservation", spendOf(eth, 20, usdc, 50), spendOf(eth, 7, usdc, -1), 7, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestLedger(newFakeClock())
			r, err := l.Reserve(tt.reserve)
			require.NoError(t, err)
			r.Settle(tt.actual)
			requireUsed(t, l, eth, tt.wantETH, tt.wantETH)
			requireUsed(t, l, usdc, tt.wantUSDC, tt.wantUSDC)
		})
	}
}

func TestSettleFreesRoomForNextSpend(t *testing.T) {
	l := newTestLedger(newFakeClock())
	r, err := l.Reserve(spendOf(eth, 100))
	require.NoError(t, err)
	requireCode(t, l.Check(spendOf(eth, 71)), CodeExceeded)
	r.Settle(spendOf(eth, 30))
	require.NoError(t, l.Check(spendOf(eth, 70)))
	requireCode(t, l.Check(spendOf(eth, 71)), CodeExceeded)
}

func TestFinishTwiceIsNoOp(t *testing.T) {
	settle := func(r *Reservation) { r.Settle(spendOf(eth, 10)) }
	settleMore := func(r *Reservation) { r.Settle(spendOf(eth, 90)) }
	release := func(r *Reservation) { r.Release() }
	tests := []struct {
		name          string
		first, second func(*Reservation)
		want          int64
	}{
		{"settle then settle", settle, settleMore, 10},
		{"settle then release", settle, release, 10},
		{"release then release", release, release, 0},
		{"release then settle", release, settleMore, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTestLedger(newFakeClock())
			r, err := l.Reserve(spendOf(eth, 50))
			require.NoError(t, err)
			tt.first(r)
			tt.second(r)
			requireUsed(t, l, eth, tt.want, tt.want)
		})
	}
}

func TestNilReservationIsNoOp(t *testing.T) {
	var r *Reservation
	r.Settle(spendOf(eth, 1))
	r.Release()
	(&Reservation{}).Release()
}

func TestUnsettledReservationStaysCounted(t *testing.T) {
	clock := newFakeClock()
	l := newTestLedger(clock)
	_, err := l.Reserve(spendOf(eth, 60)) // outcome never learned
	require.NoError(t, err)
	r, err := l.Reserve(spendOf(eth, 40))
	require.NoError(t, err)
	r.Release()
	clock.advance(time.Hour)
	requireUsed(t, l, eth, 60, 60)
	require.NoError(t, l.Check(spendOf(eth, 40)))
	requireCode(t, l.Check(spendOf(eth, 41)), CodeExceeded)
}
