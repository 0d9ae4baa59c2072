package caps

import (
	"fmt"
	"time"
)

// Window is a span over which a cap limits spending. The zero Window is not a
// window; it appears only in errors that are not about a window.
type Window int

const (
	// PerTx limits what a single reservation (one intent) may spend.
	PerTx Window = iota + 1
	// PerSession limits what the ledger records over its lifetime, which is
	// the lifetime of the process.
	PerSession
	// PerDay limits what the ledger records in any rolling 24 hours (DayLength).
	PerDay
)

// DayLength is the length of the rolling PerDay window.
const DayLength = 24 * time.Hour

// windows lists every window in the order checks and Usage report them.
var windows = [...]Window{PerTx, PerSession, PerDay}

// Windows lists the windows in the order Usage and Limits report them.
func Windows() []Window { return append([]Window(nil), windows[:]...) }

// String returns "per transaction", "per session" or "per day".
func (w Window) String() string {
	switch w {
	case PerTx:
		return "per transaction"
	case PerSession:
		return "per session"
	case PerDay:
		return "per day"
	default:
		return fmt.Sprintf("Window(%d)", int(w))
	}
}
