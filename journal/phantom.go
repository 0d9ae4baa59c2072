package journal

// Phantom reservations: a cap reservation with no signed transaction after
// it, left by a process that died between reserving and signing (or whose
// signed record could not be written). A transaction is journaled as signed,
// and fsync'd, before it is broadcast, so nothing was sent for such a
// reservation: releasing it is safe once its process is gone — and only then,
// since a live process may be about to sign. Its nonce is given back with it:
// nothing was signed with that nonce, and a nonce held for a dead process
// leaves a hole every later transaction would wait behind.

import "github.com/walletgate/walletgate/journal/records"

// ReleasePhantoms releases, under the exclusive lock, every open reservation
// whose process is gone: alive(pid) is false, or pid is this process's own
// but the session another (a restart that reused the pid, as in a container
// where walletgate is pid 1). Each release is a cap_correct record, dated like
// the reservation, negating it, with Reason ReasonPhantom. It returns the
// reservations released; on an error, those released before it.
func (j *Journal) ReleasePhantoms(alive func(pid int) bool) ([]records.OpenReservation, error) {
	var released []records.OpenReservation
	err := j.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
		var gone []records.OpenReservation
		for _, o := range live.Reservations {
			if o.Session == j.session {
				continue
			}
			if o.PID == j.pid || !alive(o.PID) {
				gone = append(gone, o)
			}
		}
		for _, o := range gone {
			if _, _, err := records.ReleaseReservation(live, appendRecord, o.ID, records.ReasonPhantom); err != nil {
				return err
			}
			if err := records.FreeNonces(live, appendRecord, o.ID, j.now().UTC()); err != nil {
				return err
			}
			released = append(released, o)
		}
		return nil
	})
	return released, err
}
