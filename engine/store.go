package engine

// The caps' per-day window kept in the records, and the nonce allocation
// that rides in the same locked step. Rules: a reservation's first nonce is
// chosen inside the same Update (under the journal's lock, across processes)
// that checks the day window and records the reservation, so two processes
// on one wallet and state directory never pick the same nonce; an
// allocation is recorded before anything is signed with it.

import (
	"errors"
	"time"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/journal/records"
)

// allocRequest asks the store to take a nonce with the next reservation.
// stuck is set, and nothing recorded, when the nonce would leave a gap behind
// a transaction the node may never fill (see nextNonce).
type allocRequest struct {
	chainNonce uint64
	nonce      uint64
	done       bool
	stuck      *txState
}

// store is the caps.DayStore kept in the Recorder. alloc is set by
// Engine.reserve, under Engine.reserveMu, for the one Ledger.Reserve call it
// makes; the Ledger calls Reserve with its own lock held, within that call.
type store struct {
	rec   Recorder
	now   func() time.Time
	bound time.Duration
	alloc *allocRequest
	// tier, when set (by Engine.reserve or reserveSignature, under
	// Engine.reserveMu), is the rolling threshold a reservation confirmed
	// by a token must pass, checked in the same locked step.
	tier func(live *records.Live, since time.Time, change caps.Spend) error
}

func (d *store) Reserve(id string, at, since time.Time, change caps.Spend, check func(caps.Spend) error) error {
	return d.rec.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
		day, err := daySum(live, since)
		if err != nil {
			return err
		}
		if err := check(day); err != nil {
			return err
		}
		rec := CapRecord{V: records.Version, ID: id, At: at.UTC(), Change: EncodeSpend(change)}
		if d.tier != nil {
			if err := d.tier(live, since, change); err != nil {
				return err
			}
			rec.By = ConfirmedByToken
		}
		req := d.alloc
		if req != nil {
			w, err := readState(live)
			if err != nil {
				return err
			}
			n, stuck := w.nextNonce(req.chainNonce, d.now(), d.bound)
			if stuck != nil {
				req.stuck = stuck
				return errNonceGap
			}
			rec.Nonce = &n
		}
		if _, err := appendRecord(KindCapReserve, rec); err != nil {
			return err
		}
		if req != nil {
			req.nonce, req.done = *rec.Nonce, true
		}
		return nil
	})
}

func (d *store) Sum(since time.Time) (sum caps.Spend, err error) {
	err = d.rec.View(func(live *records.Live) error {
		sum, err = daySum(live, since)
		return err
	})
	return sum, err
}

// errNoAllocation is a reservation that came back without its nonce: the
// ledger did not reach the store. It fails closed.
var errNoAllocation = errors.New("the reservation was recorded without a nonce")

// errNonceGap is a reservation refused because its nonce would leave a gap
// (allocRequest.stuck says behind which transaction).
var errNonceGap = errors.New("the next nonce would leave a gap behind a transaction the node may never fill")
