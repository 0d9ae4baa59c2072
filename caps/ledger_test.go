package caps

import (
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

func TestWindowString(t *testing.T) {
	require.Equal(t, "per transaction", PerTx.String())
	require.Equal(t, "per session", PerSession.String())
	require.Equal(t, "per day", PerDay.String())
	require.Equal(t, "Window(0)", Window(0).String())
}

func TestCapBoundaries(t *testing.T) {
	tests := []struct {
		name    string
		limits  Limits
		prior   int64         // USDC reserved, and left counted, before the request (0 = none)
		advance time.Duration // clock movement between prior and request
		request int64
		// want is the refusing window with its limit and used amount; a zero
		// Window means the request passes.
		want                Window
		wantLimit, wantUsed int64
	}{
		{name: "per tx equal passes", limits: Limits{PerTx: capsOf(usdc, 100)}, request: 100},
		{name: "per tx one more refused", limits: Limits{PerTx: capsOf(usdc, 100)}, request: 101, want: PerTx, wantLimit: 100},
		{name: "per tx ignores prior spends", limits: Limits{PerTx: capsOf(usdc, 100)}, prior: 100, request: 100},
		{name: "per session equal passes", limits: Limits{PerSession: capsOf(usdc, 100)}, prior: 60, request: 40},
		{name: "per session one more refused", limits: Limits{PerSession: capsOf(usdc, 100)}, prior: 60, request: 41, want: PerSession, wantLimit: 100, wantUsed: 60},
		{name: "per session ignores time", limits: Limits{PerSession: capsOf(usdc, 100)}, prior: 60, advance: 48 * time.Hour, request: 41, want: PerSession, wantLimit: 100, wantUsed: 60},
		{name: "per day equal passes", limits: Limits{PerDay: capsOf(usdc, 100)}, prior: 60, request: 40},
		{name: "per day one more refused", limits: Limits{PerDay: capsOf(usdc, 100)}, prior: 60, request: 41, want: PerDay, wantLimit: 100, wantUsed: 60},
		{name: "per day forgets after 24h", limits: Limits{PerDay: capsOf(usdc, 100)}, prior: 60, advance: 25 * time.Hour, request: 100},
		{name: "tightest window refuses", limits: Limits{PerTx: capsOf(usdc, 50), PerSession: capsOf(usdc, 100), PerDay: capsOf(usdc, 80)}, prior: 40, request: 41, want: PerDay, wantLimit: 80, wantUsed: 40},
		{name: "per tx reported first", limits: Limits{PerTx: capsOf(usdc, 10), PerSession: capsOf(usdc, 5)}, request: 11, want: PerTx, wantLimit: 10},
		{name: "zero cap refuses one unit", limits: Limits{PerTx: capsOf(usdc, 0)}, request: 1, want: PerTx},
		{name: "unlimited window beside capped one", limits: Limits{PerTx: capsOf(usdc, 1000), PerDay: capsOf(eth, 1)}, prior: 900, request: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, reserve := range []bool{false, true} {
				clock := newFakeClock()
				l := NewLedger(tt.limits, false, clock.now)
				if tt.prior > 0 {
					_, err := l.Reserve(spendOf(usdc, int(tt.prior)))
					require.NoError(t, err, "prior spend")
				}
				clock.advance(tt.advance)
				var err error
				if reserve {
					_, err = l.Reserve(spendOf(usdc, int(tt.request)))
				} else {
					err = l.Check(spendOf(usdc, int(tt.request)))
				}
				if tt.want == 0 {
					require.NoError(t, err, "reserve=%v", reserve)
					continue
				}
				ce := requireCode(t, err, CodeExceeded)
				want := &Error{
					Code: CodeExceeded, Asset: usdc, Window: tt.want,
					Limit: n(tt.wantLimit), Used: n(tt.wantUsed),
					Remaining: n(max(tt.wantLimit-tt.wantUsed, 0)), Requested: n(tt.request),
				}
				require.Equal(t, want.Error(), ce.Error(), "reserve=%v", reserve)
				require.Equal(t, want.Asset, ce.Asset)
				require.Equal(t, want.Window, ce.Window)
				for _, pair := range [][2]*big.Int{{want.Limit, ce.Limit}, {want.Used, ce.Used}, {want.Remaining, ce.Remaining}, {want.Requested, ce.Requested}} {
					require.Zero(t, pair[0].Cmp(pair[1]), "want %s, got %s", pair[0], pair[1])
				}
			}
		})
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"per tx", &Error{Code: CodeExceeded, Asset: eth, Window: PerTx, Limit: n(100), Used: n(0), Remaining: n(100), Requested: n(101)},
			"spend of 101 base units of ETH exceeds its per transaction cap of 100 base units"},
		{"per day", &Error{Code: CodeExceeded, Asset: usdc, Window: PerDay, Limit: n(100), Used: n(40), Remaining: n(60), Requested: n(61)},
			"spend of 61 base units of token 0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48 exceeds its per day cap of 100 base units: 40 already used (settled or reserved), 60 remaining"},
		{"uncapped", &Error{Code: CodeUncapped, Asset: dai, Requested: n(5)},
			"spend of 5 base units of token 0x6B175474E89094C44Da98b954EedeAC495271d0F is refused: it has no cap in any window, and uncapped assets are not allowed"},
		{"invalid", &Error{Code: CodeInvalidSpend, Asset: eth, Requested: n(-1)},
			"spend of -1 base units of ETH is refused: an amount must not be negative"},
		{"no ledger", &Error{Code: CodeNoLedger},
			"spend refused: no spend ledger is configured, so nothing may be spent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.err.Error())
		})
	}
}

func TestZeroLedgerDenies(t *testing.T) {
	var zero Ledger
	var nilLedger *Ledger
	for name, l := range map[string]*Ledger{"zero value": &zero, "nil": nilLedger} {
		t.Run(name, func(t *testing.T) {
			for _, s := range []Spend{nil, {}, spendOf(eth, 1)} {
				requireCode(t, l.Check(s), CodeNoLedger)
				r, err := l.Reserve(s)
				requireCode(t, err, CodeNoLedger)
				require.Nil(t, r)
			}
			require.Nil(t, l.Usage(eth))
			require.Nil(t, l.Assets())
			require.False(t, l.Capped(eth))
		})
	}
}

func TestAllOrNothingAcrossAssets(t *testing.T) {
	l := NewLedger(Limits{
		PerTx:      capsOf(eth, 1000, usdc, 1000),
		PerSession: capsOf(eth, 100, usdc, 50),
		PerDay:     capsOf(eth, 100, usdc, 100),
	}, false, newFakeClock().now)
	_, err := l.Reserve(spendOf(eth, 10, usdc, 10))
	require.NoError(t, err)

	// ETH fits (10+30 ≤ 100); USDC does not (10+41 > 50).
	_, err = l.Reserve(spendOf(eth, 30, usdc, 41))
	ce := requireCode(t, err, CodeExceeded)
	require.Equal(t, usdc, ce.Asset)
	require.Equal(t, PerSession, ce.Window)
	requireUsed(t, l, eth, 10, 10)
	requireUsed(t, l, usdc, 10, 10)

	// The same holds when the asset that does not fit sorts first.
	_, err = l.Reserve(spendOf(eth, 91, usdc, 40))
	ce = requireCode(t, err, CodeExceeded)
	require.Equal(t, eth, ce.Asset)
	requireUsed(t, l, eth, 10, 10)
	requireUsed(t, l, usdc, 10, 10)

	// Exactly filling both passes.
	_, err = l.Reserve(spendOf(eth, 90, usdc, 40))
	require.NoError(t, err)
	requireUsed(t, l, eth, 100, 100)
	requireUsed(t, l, usdc, 50, 50)
}

func TestCheckDoesNotReserve(t *testing.T) {
	l := NewLedger(Limits{PerSession: capsOf(eth, 10)}, false, newFakeClock().now)
	for range 3 {
		require.NoError(t, l.Check(spendOf(eth, 10)))
	}
	requireUsed(t, l, eth, 0, 0)
	_, err := l.Reserve(spendOf(eth, 10))
	require.NoError(t, err)
	requireCode(t, l.Check(spendOf(eth, 1)), CodeExceeded)
}

func TestUncapped(t *testing.T) {
	limits := Limits{PerTx: capsOf(eth, 100), PerDay: capsOf(usdc, 100)}
	t.Run("refused by default", func(t *testing.T) {
		l := NewLedger(limits, false, newFakeClock().now)
		require.False(t, l.Capped(dai))
		requireCode(t, l.Check(spendOf(dai, 1)), CodeUncapped)
		_, err := l.Reserve(spendOf(eth, 1, dai, 1))
		ce := requireCode(t, err, CodeUncapped)
		require.Equal(t, dai, ce.Asset)
		require.Zero(t, n(1).Cmp(ce.Requested))
		requireUsed(t, l, eth, 0, 0)
	})
	t.Run("allowed with opt-in", func(t *testing.T) {
		l := NewLedger(limits, true, newFakeClock().now)
		require.False(t, l.Capped(dai))
		require.True(t, l.Capped(eth))
		require.True(t, l.Capped(usdc))
		_, err := l.Reserve(spendOf(eth, 1, dai, 1_000_000))
		require.NoError(t, err)
		// Still recorded, so Usage can say what was spent, with no limit.
		for _, u := range l.Usage(dai) {
			require.Nil(t, u.Limit, u.Window.String())
			require.Nil(t, u.Remaining, u.Window.String())
		}
		requireUsed(t, l, dai, 1_000_000, 1_000_000)
	})
	t.Run("zero amount of an uncapped asset is ignored", func(t *testing.T) {
		l := NewLedger(limits, false, newFakeClock().now)
		require.NoError(t, l.Check(Spend{dai: n(0), usdc: nil, eth: n(1)}))
	})
}

func TestZeroCapAndAmounts(t *testing.T) {
	l := NewLedger(Limits{PerSession: capsOf(eth, 100, usdc, 0)}, false, newFakeClock().now)
	require.True(t, l.Capped(usdc), "a zero cap is a cap")
	require.NoError(t, l.Check(spendOf(usdc, 0, eth, 5)), "a zero amount passes a zero cap")
	require.NoError(t, l.Check(Spend{usdc: nil}), "a nil amount is ignored")
	ce := requireCode(t, l.Check(spendOf(usdc, 1)), CodeExceeded)
	require.Zero(t, ce.Limit.Sign())

	ce = requireCode(t, l.Check(spendOf(eth, -1)), CodeInvalidSpend)
	require.Equal(t, eth, ce.Asset)
	_, err := l.Reserve(spendOf(eth, 50, usdc, -1))
	requireCode(t, err, CodeInvalidSpend)
	requireUsed(t, l, eth, 0, 0)
}

func TestBadCapsFailClosed(t *testing.T) {
	l := NewLedger(Limits{PerTx: map[common.Address]*big.Int{eth: nil, usdc: n(-5)}}, false, nil)
	requireCode(t, l.Check(spendOf(eth, 1)), CodeExceeded)
	requireCode(t, l.Check(spendOf(usdc, 1)), CodeExceeded)
}

func TestLimitsDeepCopied(t *testing.T) {
	perTx := capsOf(eth, 100)
	limits := Limits{PerTx: perTx}
	l := NewLedger(limits, false, nil)
	perTx[eth].SetInt64(1_000_000)
	perTx[usdc] = n(5)
	requireCode(t, l.Check(spendOf(eth, 101)), CodeExceeded)
	require.False(t, l.Capped(usdc))

	// Nor can a caller reach the ledger through what it returns.
	u := l.Usage(eth)
	u[0].Limit.SetInt64(1_000_000)
	ce := requireCode(t, l.Check(spendOf(eth, 101)), CodeExceeded)
	ce.Limit.SetInt64(1_000_000)
	requireCode(t, l.Check(spendOf(eth, 101)), CodeExceeded)

	// Nor through the Spend it reserved.
	s := spendOf(eth, 100)
	_, err := l.Reserve(s)
	require.NoError(t, err)
	s[eth].SetInt64(0)
	requireUsed(t, l, eth, 100, 100)
}

func TestAssets(t *testing.T) {
	l := NewLedger(Limits{
		PerTx:      capsOf(usdc, 1),
		PerSession: capsOf(dai, 0),
		PerDay:     capsOf(eth, 1, usdc, 2),
	}, false, nil)
	// dai (0x6B…) sorts before usdc (0xA0…); ETH first.
	require.Equal(t, []common.Address{eth, dai, usdc}, l.Assets())
	require.Nil(t, NewLedger(Limits{}, true, nil).Assets())
}

func TestUsage(t *testing.T) {
	clock := newFakeClock()
	l := NewLedger(Limits{
		PerTx:      capsOf(eth, 70),
		PerSession: capsOf(eth, 200),
		PerDay:     capsOf(eth, 100),
	}, false, clock.now)
	r1, err := l.Reserve(spendOf(eth, 60))
	require.NoError(t, err)
	_, err = l.Reserve(spendOf(eth, 30))
	require.NoError(t, err)
	r1.Settle(spendOf(eth, 50))

	want := []WindowUsage{
		{Window: PerTx, Limit: n(70), Used: n(0), Remaining: n(70)},
		{Window: PerSession, Limit: n(200), Used: n(80), Remaining: n(120)},
		{Window: PerDay, Limit: n(100), Used: n(80), Remaining: n(20)},
	}
	require.Equal(t, want, l.Usage(eth))

	clock.advance(DayLength + time.Second)
	want[2] = WindowUsage{Window: PerDay, Limit: n(100), Used: n(0), Remaining: n(100)}
	require.Equal(t, want, l.Usage(eth))

	// An asset never spent and never capped.
	require.Equal(t, []WindowUsage{{Window: PerTx, Used: n(0)}, {Window: PerSession, Used: n(0)}, {Window: PerDay, Used: n(0)}}, l.Usage(usdc))

	// Limits are the caps alone, whatever was spent, in Usage's order.
	require.Equal(t, []*big.Int{n(70), n(200), n(100)}, l.Limits(eth))
	require.Equal(t, []*big.Int{nil, nil, nil}, l.Limits(usdc))
	require.Equal(t, []Window{PerTx, PerSession, PerDay}, Windows())
	l.Limits(eth)[0].SetInt64(1)
	require.Equal(t, n(70), l.Limits(eth)[0], "a copy: changing it changes no cap")
}

func TestRollingDay(t *testing.T) {
	tests := []struct {
		name    string
		after   time.Duration
		counted bool
	}{
		{"same moment", 0, true},
		{"23h59m later", 23*time.Hour + 59*time.Minute, true},
		{"exactly 24h later", DayLength, true},
		{"24h and 1ns later", DayLength + time.Nanosecond, false},
		{"24h and 1s later", DayLength + time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			l := NewLedger(Limits{PerDay: capsOf(eth, 100)}, false, clock.now)
			_, err := l.Reserve(spendOf(eth, 100))
			require.NoError(t, err)
			clock.advance(tt.after)
			err = l.Check(spendOf(eth, 1))
			if tt.counted {
				requireCode(t, err, CodeExceeded)
				requireUsed(t, l, eth, 100, 100)
			} else {
				require.NoError(t, err)
				requireUsed(t, l, eth, 100, 0)
			}
		})
	}
}

func TestRollingDayKeepsEachSpendsMoment(t *testing.T) {
	clock := newFakeClock()
	l := NewLedger(Limits{PerDay: capsOf(eth, 100)}, false, clock.now)
	r1, err := l.Reserve(spendOf(eth, 40)) // t0
	require.NoError(t, err)
	clock.advance(12 * time.Hour)
	_, err = l.Reserve(spendOf(eth, 50)) // t0+12h
	require.NoError(t, err)
	clock.advance(6 * time.Hour)
	r1.Settle(spendOf(eth, 30)) // settled at t0+18h, still dated t0
	requireUsed(t, l, eth, 80, 80)
	clock.advance(6*time.Hour + time.Second) // t0+24h+1s: the first spend leaves
	requireUsed(t, l, eth, 80, 50)
	require.NoError(t, l.Check(spendOf(eth, 50)))
	requireCode(t, l.Check(spendOf(eth, 51)), CodeExceeded)
	clock.advance(12 * time.Hour) // both gone
	requireUsed(t, l, eth, 80, 0)
}

// A refusal says the most that fits now: the least left in any window of the
// asset, whichever window refused; exactly that much then passes, and one
// base unit more does not.
func TestExceededSaysWhatFits(t *testing.T) {
	tests := []struct {
		name    string
		limits  Limits
		prior   int
		request int
		window  Window
		fits    int64
	}{
		{"the day is tightest", Limits{PerTx: capsOf(usdc, 50), PerSession: capsOf(usdc, 100), PerDay: capsOf(usdc, 80)}, 40, 41, PerDay, 40},
		{"per tx refuses, the session is tighter", Limits{PerTx: capsOf(usdc, 10), PerSession: capsOf(usdc, 5)}, 0, 11, PerTx, 5},
		{"per tx refuses and is tightest", Limits{PerTx: capsOf(usdc, 10), PerSession: capsOf(usdc, 100), PerDay: capsOf(usdc, 100)}, 30, 11, PerTx, 10},
		{"a window used up", Limits{PerTx: capsOf(usdc, 10), PerDay: capsOf(usdc, 30)}, 30, 1, PerDay, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger(tt.limits, false, newFakeClock().now)
			for left := tt.prior; left > 0; left -= 10 {
				_, err := l.Reserve(spendOf(usdc, min(left, 10)))
				require.NoError(t, err, "prior spend")
			}
			ce := requireCode(t, l.Check(spendOf(usdc, tt.request)), CodeExceeded)
			require.Equal(t, tt.window, ce.Window)
			require.NotNil(t, ce.Fits)
			require.Equal(t, tt.fits, ce.Fits.Int64())
			if tt.fits > 0 {
				require.NoError(t, l.Check(spendOf(usdc, int(tt.fits))), "exactly what fits passes")
			}
			requireCode(t, l.Check(spendOf(usdc, int(tt.fits)+1)), CodeExceeded)
		})
	}
}
