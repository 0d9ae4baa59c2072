package engine

import (
	"fmt"
	"math/big"
	"time"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/journal/records"
)

// reserve reserves spend on the caps and, in the same locked step of the
// records, takes the first nonce at or above chainNonce that nothing holds.
// reserve reserves spend on the caps and, in the same locked step of the
// records, takes the first nonce at or above chainNonce that nothing holds.
// fee is the plan's max network fee in ETH, for a refusal to say what fits.
func (e *Engine) reserve(spend caps.Spend, fee *big.Int, chainNonce uint64, by string) (*caps.Reservation, uint64, *Refusal) {
	if ref := e.usdGuard(spend); ref != nil {
		return nil, 0, ref
	}
	e.reserveMu.Lock()
	defer e.reserveMu.Unlock()
	req := &allocRequest{chainNonce: chainNonce}
	e.store.alloc = req
	e.store.tier = e.tierFor(by)
	res, err := e.ledger.Reserve(spend)
	e.store.alloc, e.store.tier = nil, nil
	if t := req.stuck; t != nil {
		return nil, 0, stuckRefusal(t)
	}
	if ref, ok := tierRefusal(err); ok {
		return nil, 0, ref
	}
	if err != nil {
		return nil, 0, e.capsRefusal(err, fee)
	}
	if !req.done {
		if rerr := res.Release(); rerr != nil {
			return nil, 0, e.LedgerUnavailable(fmt.Errorf("%w; and its release could not be recorded: %w", errNoAllocation, rerr))
		}
		return nil, 0, e.LedgerUnavailable(errNoAllocation)
	}
	reached("reserved") // recorded, nothing signed yet
	return res, req.nonce, nil
}

// allocate takes the first free nonce at or above floor for a later leg of
// reservation id, recorded before anything is signed with it; at is the
// allocation's date, from which the leg's deadline runs (one clock for both).
func (e *Engine) allocate(id string, floor uint64) (n uint64, at time.Time, err error) {
	err = e.rec.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
		w, err := readState(live)
		if err != nil {
			return err
		}
		var stuck *txState
		if n, stuck = w.nextNonce(floor, e.now(), e.bounds.Confirm); stuck != nil {
			return fmt.Errorf("nonce %d: %w: %s (nonce %d)", n, errNonceGap, stuck.Tx, stuck.Nonce)
		}
		at = e.now().UTC()
		_, err = appendRecord(KindNonce, NonceRecord{V: records.Version, Reservation: id, Nonce: n, At: at})
		return err
	})
	return n, at, err
}

// stuckRefusal refuses a write whose nonce would wait behind t, a
// transaction whose outcome is not known and which nobody is broadcasting.
func stuckRefusal(t *txState) *Refusal {
	return Refuse(CodeTxOutstanding, "an earlier transaction of this wallet, %s (nonce %d, %s), has an unknown outcome and nobody is broadcasting it: its bytes may still reach the node, so walletgate signs nothing else for nonce %d, and a new transaction would wait behind it unseen. Nothing was signed or sent. Call the tool again without confirm: the next confirm follows it up first (walletgate re-sends its identical signed bytes) — check the node (WALLETGATE_RPC) if it stays unknown.",
		t.Tx, t.Nonce, t.Tool, t.Nonce)
}
