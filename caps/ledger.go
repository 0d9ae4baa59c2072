package caps

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Limits are the caps, in base units, per window and asset. An asset absent
// from a window's map is unlimited in that window; an asset absent from every
// map is uncapped. A zero cap means nothing of the asset may be spent in that
// window; NewLedger also reads a nil or negative cap as zero.
type Limits struct {
	PerTx, PerSession, PerDay map[common.Address]*big.Int
}

// window returns the caps of w (nil for an unknown window).
func (lim *Limits) window(w Window) map[common.Address]*big.Int {
	switch w {
	case PerTx:
		return lim.PerTx
	case PerSession:
		return lim.PerSession
	case PerDay:
		return lim.PerDay
	default:
		return nil
	}
}

// Spend is what one intent may spend (for a reservation) or did spend (for a
// settlement), in base units per asset. The caller includes ETH for gas: an
// ETH send is value + gasLimit × maxFeePerGas; an ERC-20 send is the token
// amount and the ETH fee. Zero and nil amounts are ignored.
type Spend map[common.Address]*big.Int

// WindowUsage is the state of one asset in one window.
type WindowUsage struct {
	Window Window
	// Limit is the cap; nil means unlimited in this window.
	Limit *big.Int
	// Used is what the window holds, settled plus reserved. It is always 0
	// for PerTx, where each reservation starts afresh.
	Used *big.Int
	// Remaining is Limit - Used, never below 0; nil means unlimited.
	Remaining *big.Int
}

// Ledger records spends and refuses those that would pass a cap. It is safe
// for concurrent use. Its zero value (and a nil *Ledger) refuses every Check
// and Reserve with CodeNoLedger; build a working one with NewLedger.
type Ledger struct {
	mu            sync.Mutex
	ready         bool // set only by NewLedger; false fails closed
	limits        Limits
	allowUncapped bool
	now           func() time.Time
	// session holds, per asset, what the ledger has recorded over its
	// lifetime (settled plus reserved); zero sums are absent.
	session Spend
	day     dayLog
	// store, when set, keeps the PerDay window instead of day: persisted
	// and shared by every process on the same state (see DayStore).
	store DayStore
	// ids numbers reservations for the store.
	ids    uint64
	prefix string
}

// DayStore keeps the PerDay window across restarts and processes. A Ledger
// calls it with its own lock held; Reserve must be atomic across processes
// (check and record under one lock), so that two processes can never
// together pass a per-day cap.
type DayStore interface {
	// Reserve sums every change recorded at or after since (by any
	// process), calls check with that sum, and if check passes records
	// change dated at under id.
	Reserve(id string, at, since time.Time, change Spend, check func(day Spend) error) error
	// Correct records the one change that ends reservation id (its
	// settlement or release), dated like the reservation, decided under
	// the store's lock. When id has already ended (another process or
	// session settled or released it) it records nothing and returns the
	// change that ended it; otherwise it returns change. On an error
	// nothing was recorded.
	Correct(id string, at time.Time, change Spend) (recorded Spend, err error)
	// Sum returns what every process recorded at or after since.
	Sum(since time.Time) (Spend, error)
}

// NewLedgerWithStore is NewLedger with the PerDay window kept by store.
// prefix makes this process's reservation ids unique among processes.
func NewLedgerWithStore(l Limits, allowUncapped bool, now func() time.Time, store DayStore, prefix string) *Ledger {
	led := NewLedger(l, allowUncapped, now)
	led.store, led.prefix = store, prefix
	return led
}

// NewLedger returns a ledger enforcing a deep copy of l. When allowUncapped is
// false, a spend of an asset with no cap in any window is refused with
// CodeUncapped; when true it passes (and is still recorded, so Usage shows
// it). now is the clock for the per-day window; nil means time.Now.
func NewLedger(l Limits, allowUncapped bool, now func() time.Time) *Ledger {
	if now == nil {
		now = time.Now
	}
	return &Ledger{
		ready: true,
		limits: Limits{
			PerTx:      copyCaps(l.PerTx),
			PerSession: copyCaps(l.PerSession),
			PerDay:     copyCaps(l.PerDay),
		},
		allowUncapped: allowUncapped,
		now:           now,
		session:       make(Spend),
	}
}

// copyCaps deep-copies one window's caps, reading nil or negative caps as
// zero so that a malformed cap refuses rather than allows.
func copyCaps(m map[common.Address]*big.Int) map[common.Address]*big.Int {
	out := make(map[common.Address]*big.Int, len(m))
	for a, v := range m {
		if v == nil || v.Sign() < 0 {
			out[a] = new(big.Int)
			continue
		}
		out[a] = new(big.Int).Set(v)
	}
	return out
}

// Check reports whether s would fit right now in every window of every asset,
// without reserving anything; it is for previews. The answer can change before
// a later Reserve, which checks again. Errors are *Error.
func (l *Ledger) Check(s Spend) error {
	if l == nil {
		return errNoLedger()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ready {
		return errNoLedger()
	}
	now := l.now()
	day, err := l.daySumLocked(now)
	if err != nil {
		return err
	}
	_, err = l.checkLocked(s, day)
	return err
}

// daySumLocked is the PerDay window's sum at now, from the store if any.
func (l *Ledger) daySumLocked(now time.Time) (Spend, error) {
	if l.store == nil {
		return l.day.sumSince(now.Add(-DayLength)), nil
	}
	day, err := l.store.Sum(now.Add(-DayLength))
	if err != nil {
		return nil, &Error{Code: CodeNoLedger, Cause: err}
	}
	return day, nil
}

// Reserve checks s like Check and, if it fits, records all of it in every
// window, atomically: either every asset is reserved or nothing is. The
// reservation counts until it is settled or released, and forever if neither
// happens. Errors are *Error.
func (l *Ledger) Reserve(s Spend) (*Reservation, error) {
	if l == nil {
		return nil, errNoLedger()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ready {
		return nil, errNoLedger()
	}
	now := l.now()
	if l.store == nil {
		want, err := l.checkLocked(s, l.day.sumSince(now.Add(-DayLength)))
		if err != nil {
			return nil, err
		}
		l.recordLocked(now, want)
		return &Reservation{l: l, at: now, spend: want}, nil
	}
	want, err := validSpend(s)
	if err != nil {
		return nil, err
	}
	l.ids++
	id := fmt.Sprintf("%s-%d", l.prefix, l.ids)
	err = l.store.Reserve(id, now, now.Add(-DayLength), want, func(day Spend) error {
		return l.checkCapsLocked(want, day)
	})
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, &Error{Code: CodeNoLedger, Cause: err}
	}
	addSpend(l.session, copySpend(want), 1)
	return &Reservation{l: l, at: now, spend: want, id: id}, nil
}

// Capped reports whether asset has a cap (possibly zero) in any window. When
// the ledger allows uncapped assets, false means the caller must say plainly
// that no cap applies. The zero Ledger caps nothing (and refuses everything).
func (l *Ledger) Capped(asset common.Address) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cappedLocked(asset)
}

// Usage returns the state of asset in each window, in the order PerTx,
// PerSession, PerDay. An uncapped asset gets nil Limit and Remaining in every
// window. The zero Ledger returns nil.
func (l *Ledger) Usage(asset common.Address) []WindowUsage {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ready {
		return nil
	}
	day, err := l.daySumLocked(l.now())
	if err != nil {
		// Unknown: show the day window as full rather than guess.
		day = nil
		for _, lim := range []map[common.Address]*big.Int{l.limits.PerDay} {
			if v, ok := lim[asset]; ok {
				day = Spend{asset: new(big.Int).Set(v)}
			}
		}
	}
	out := make([]WindowUsage, 0, len(windows))
	for _, w := range windows {
		used := new(big.Int).Set(l.usedLocked(w, asset, day))
		u := WindowUsage{Window: w, Used: used}
		if limit, ok := l.limits.window(w)[asset]; ok {
			u.Limit = new(big.Int).Set(limit)
			u.Remaining = remaining(limit, used)
		}
		out = append(out, u)
	}
	return out
}

// Limits returns asset's cap in each window, in the order PerTx,
// PerSession, PerDay (nil where it has none). It reads the configuration
// only, never the spend, so it does not wait on the journal. The zero Ledger
// returns nil.
func (l *Ledger) Limits(asset common.Address) []*big.Int {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*big.Int, 0, len(windows))
	for _, w := range windows {
		var lim *big.Int
		if v, ok := l.limits.window(w)[asset]; ok {
			lim = new(big.Int).Set(v)
		}
		out = append(out, lim)
	}
	return out
}

// Assets returns every asset with a cap (possibly zero) in any window: ETH
// first, then tokens in ascending address order. The zero Ledger returns nil.
func (l *Ledger) Assets() []common.Address {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := make(map[common.Address]bool)
	for _, w := range windows {
		for a := range l.limits.window(w) {
			seen[a] = true
		}
	}
	if len(seen) == 0 {
		return nil
	}
	out := make([]common.Address, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	sortAssets(out)
	return out
}

// checkLocked validates s and checks it against every cap, day being the
// PerDay window's current sum. It returns the spend to record: a copy of s
// without zero or nil amounts.
func (l *Ledger) checkLocked(s Spend, day Spend) (Spend, error) {
	want, err := validSpend(s)
	if err != nil {
		return nil, err
	}
	if err := l.checkCapsLocked(want, day); err != nil {
		return nil, err
	}
	return want, nil
}

// validSpend copies s without zero or nil amounts, refusing negative ones.
func validSpend(s Spend) (Spend, error) {
	assets := make([]common.Address, 0, len(s))
	for a, v := range s {
		if v != nil && v.Sign() != 0 {
			assets = append(assets, a)
		}
	}
	sortAssets(assets) // so the same spend always gets the same error
	want := make(Spend, len(assets))
	for _, a := range assets {
		v := s[a]
		if v.Sign() < 0 {
			return nil, &Error{Code: CodeInvalidSpend, Asset: a, Requested: new(big.Int).Set(v)}
		}
		want[a] = new(big.Int).Set(v)
	}
	return want, nil
}

// copySpend deep-copies s.
func copySpend(s Spend) Spend {
	out := make(Spend, len(s))
	for a, v := range s {
		out[a] = new(big.Int).Set(v)
	}
	return out
}

// checkCapsLocked checks a valid spend against every window.
func (l *Ledger) checkCapsLocked(want Spend, day Spend) error {
	assets := make([]common.Address, 0, len(want))
	for a := range want {
		assets = append(assets, a)
	}
	sortAssets(assets)
	var total big.Int
	for _, a := range assets {
		req := want[a]
		if !l.cappedLocked(a) {
			if !l.allowUncapped {
				return &Error{Code: CodeUncapped, Asset: a, Requested: new(big.Int).Set(req)}
			}
			continue
		}
		for _, w := range windows {
			limit, ok := l.limits.window(w)[a]
			if !ok {
				continue
			}
			used := l.usedLocked(w, a, day)
			if total.Add(used, req).Cmp(limit) > 0 {
				return &Error{
					Code:      CodeExceeded,
					Asset:     a,
					Window:    w,
					Limit:     new(big.Int).Set(limit),
					Used:      new(big.Int).Set(used),
					Remaining: remaining(limit, used),
					Requested: new(big.Int).Set(req),
					Fits:      l.fitsLocked(a, day),
				}
			}
		}
	}
	return nil
}

// fitsLocked is the most of asset one spend could ask for now and pass
// every window that caps it: the least remaining among them.
func (l *Ledger) fitsLocked(asset common.Address, day Spend) *big.Int {
	var fits *big.Int
	for _, w := range windows {
		limit, ok := l.limits.window(w)[asset]
		if !ok {
			continue
		}
		r := remaining(limit, l.usedLocked(w, asset, day))
		if fits == nil || r.Cmp(fits) < 0 {
			fits = r
		}
	}
	if fits == nil { // not reached: an exceeded asset has a cap
		fits = new(big.Int)
	}
	return fits
}

// recordLocked adds the signed change s, dated at, to the session and day
// windows. It takes ownership of s.
func (l *Ledger) recordLocked(at time.Time, s Spend) {
	for a, v := range s {
		if v.Sign() == 0 {
			delete(s, a)
		}
	}
	addSpend(l.session, copySpend(s), 1)
	l.day.add(at, s)
}

// usedLocked returns what window w holds of asset (not a copy). day is the
// day log's current sum.
func (l *Ledger) usedLocked(w Window, asset common.Address, day Spend) *big.Int {
	var v *big.Int
	switch w {
	case PerSession:
		v = l.session[asset]
	case PerDay:
		v = day[asset]
	}
	if v == nil {
		return new(big.Int)
	}
	return v
}

func (l *Ledger) cappedLocked(asset common.Address) bool {
	for _, w := range windows {
		if _, ok := l.limits.window(w)[asset]; ok {
			return true
		}
	}
	return false
}

// remaining returns limit - used, or 0 if used is over the limit (which
// settling more than was reserved can cause).
func remaining(limit, used *big.Int) *big.Int {
	r := new(big.Int).Sub(limit, used)
	if r.Sign() < 0 {
		r.SetInt64(0)
	}
	return r
}

// sortAssets sorts addresses ascending, which puts ETH (the zero address)
// first.
func sortAssets(as []common.Address) {
	slices.SortFunc(as, func(a, b common.Address) int { return bytes.Compare(a[:], b[:]) })
}
