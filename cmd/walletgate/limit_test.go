package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/semaphore"
)

// A service connection's long line draws on the budget it shares: within
// it, the line passes whole and what it borrowed is given back once read;
// over it, the line is dropped (oversizedLine) and the next one passes.
func TestALongLineDrawsOnTheSharedBudget(t *testing.T) {
	const own, budget = 64 << 10, 256 << 10
	b := semaphore.NewWeighted(budget)
	fits := strings.Repeat("a", 200<<10) + "\n"
	over := strings.Repeat("b", 400<<10) + "\n"
	l := newBudgetLineLimiter(strings.NewReader(fits+over+"{}\n"), maxMessageBytes, own, b)
	out, err := io.ReadAll(l)
	require.NoError(t, err)
	require.Equal(t, fits+oversizedLine+"{}\n", string(out))
	require.True(t, b.TryAcquire(budget), "all that was borrowed is given back")

	// Another connection holds the budget: a line over own is dropped.
	l = newBudgetLineLimiter(strings.NewReader(fits+"{}\n"), maxMessageBytes, own, b)
	out, err = io.ReadAll(l)
	require.NoError(t, err)
	require.Equal(t, oversizedLine+"{}\n", string(out))
	b.Release(budget)

	// Without a budget only the message bound counts.
	l = newLineLimiter(bytes.NewReader([]byte(over)), maxMessageBytes)
	out, err = io.ReadAll(l)
	require.NoError(t, err)
	require.Equal(t, over, string(out))
}
