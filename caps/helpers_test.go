package caps

import (
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

var (
	eth  = common.Address{}
	usdc = common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	dai  = common.HexToAddress("0x6B175474E89094C44Da98b954EedeAC495271d0F")
	t0   = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// fakeClock is a settable clock for the PerDay window.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: t0} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func n(v int64) *big.Int { return big.NewInt(v) }

// capsOf builds one window's caps from asset, amount pairs.
func capsOf(pairs ...any) map[common.Address]*big.Int {
	m := make(map[common.Address]*big.Int)
	for i := 0; i < len(pairs); i += 2 {
		m[pairs[i].(common.Address)] = n(int64(pairs[i+1].(int)))
	}
	return m
}

// spendOf builds a Spend from asset, amount pairs.
func spendOf(pairs ...any) Spend { return Spend(capsOf(pairs...)) }

// used returns what window w of asset holds, per Usage.
func used(t *testing.T, l *Ledger, asset common.Address, w Window) *big.Int {
	t.Helper()
	for _, u := range l.Usage(asset) {
		if u.Window == w {
			return u.Used
		}
	}
	t.Fatalf("Usage(%s) has no %s window", asset.Hex(), w)
	return nil
}

// requireUsed asserts the session and day usage of asset.
func requireUsed(t *testing.T, l *Ledger, asset common.Address, session, day int64) {
	t.Helper()
	require.Equal(t, n(session).String(), used(t, l, asset, PerSession).String(), "%s used per session", assetName(asset))
	require.Equal(t, n(day).String(), used(t, l, asset, PerDay).String(), "%s used per day", assetName(asset))
}

// requireCode asserts that err is an *Error with code and returns it.
func requireCode(t *testing.T, err error, code string) *Error {
	t.Helper()
	require.Error(t, err)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, code, ce.Code, "error: %v", err)
	return ce
}

// asError is errors.As without the testing package, for goroutines.
func asError(err error, target **Error) bool { return errors.As(err, target) }
