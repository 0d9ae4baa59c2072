package caps

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDayLog(t *testing.T) {
	var d dayLog
	require.Empty(t, d.sumSince(t0), "zero value is empty")

	d.add(t0.Add(2*time.Hour), spendOf(eth, 5))
	d.add(t0, spendOf(eth, 10, usdc, 3))      // out of order: sorted in
	d.add(t0, Spend{eth: n(-4), usdc: n(-3)}) // a correction of the t0 spend
	d.add(t0.Add(time.Hour), Spend{})         // nothing recorded

	require.Equal(t, Spend{eth: n(11)}, d.sumSince(t0), "usdc nets to zero and is absent")
	require.Len(t, d.entries, 3)
	require.Equal(t, Spend{eth: n(5)}, d.sumSince(t0.Add(time.Nanosecond)), "the t0 spend and its correction leave together")
	require.Len(t, d.entries, 1)
	require.Empty(t, d.sumSince(t0.Add(3*time.Hour)))
	require.Empty(t, d.entries)
}
