package journal

import "fmt"

// UnavailableError means the journal cannot be trusted, so nothing may be
// written (and no action taken) until an operator acts. Reason says what is
// wrong, with the path and, for a broken line, its number; Fix says what to
// do. Callers show both; reads that do not need the journal keep working.
type UnavailableError struct {
	Path, Reason, Fix string

	err error // the cause, if any: a *BrokenError, an fsync error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("journal unavailable: %s; to fix: %s", e.Reason, e.Fix)
}

// Unwrap returns the cause, such as the *BrokenError of a broken line.
func (e *UnavailableError) Unwrap() error { return e.err }

// restoreFix is the Fix for a journal whose content is wrong or gone.
func restoreFix(dir, path string) string {
	return fmt.Sprintf("run `walletgate audit verify %s` to see what is wrong; then restore %s and %s from a backup, or move the state directory %s aside to start a new journal — which resets the per-day caps", path, FileName, HeadName, dir)
}
