package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// Bounds on the engine's work. A confirm does nothing before its signature
// for longer than Confirm (a nonce taken longer ago than that is free for
// others again); from the signature to the journaled outcome of a broadcast
// it runs detached from the request, for at most Send.
type Bounds struct {
	Confirm time.Duration
	Send    time.Duration
}

// DefaultBounds are the bounds when Deps leaves them zero.
var DefaultBounds = Bounds{Confirm: 60 * time.Second, Send: 30 * time.Second}

// Deps is what the engine needs from the wiring.
type Deps struct {
	Chain   *chain.Client
	Signer  signer.Signer // nil: watch-only, nothing can be signed
	Address common.Address
	Gate    *gate.Gate
	// Limits are the resolved caps; Capped false means none were resolved,
	// and every write is refused.
	Limits        caps.Limits
	Capped        bool
	AllowUncapped bool
	// Known are the tokens of walletgate's table on this chain: every
	// effects-bound simulation reads the wallet's balance of each, so what
	// moves without a log (a wrap) shows in the preview.
	Known []common.Address
	// HumanAbove is WALLETGATE_HUMAN_ABOVE resolved: what writes confirmed
	// by a token alone may spend in a rolling day, per asset (tier.go).
	HumanAbove map[common.Address]*big.Int
	// Prices prices assets in USD for the USD windows (usd.go); nil with a
	// USD window capped refuses every write that spends (PRICE_UNAVAILABLE).
	Prices *Pricing
	// Journal, when set, keeps every record; JournalErr, when set, is why
	// the journal that should exist cannot be used: every write is then
	// refused. With neither, records are kept in memory.
	Journal    *journal.Journal
	JournalErr error
	// Recorder, when set, is used instead of Journal: the shared state in
	// PostgreSQL (package pgstate), or in tests a recorder that fails like a
	// full disk.
	Recorder Recorder
	// Rules are the operator's rules every write obeys (policy.WriteAllowed),
	// checked at preview, at confirm and on the effects; nil: none (tests).
	Rules *policy.WriteRules

	Confirmations  uint64
	ReceiptTimeout time.Duration
	Bounds         Bounds
	Session        string
	Logger         *slog.Logger
	Now            func() time.Time
}

// Engine runs the write pipeline. It is safe for concurrent use: mcp-go
// runs tool calls concurrently.
type Engine struct {
	chain   *chain.Client
	chainID *big.Int
	signer  signer.Signer
	address common.Address
	gate    *gate.Gate
	ledger  *caps.Ledger
	rec     Recorder
	recErr  error
	store   *store
	rules   *policy.WriteRules
	// humanAbove: what token-confirmed writes may spend in a day.
	humanAbove map[common.Address]*big.Int
	known      []common.Address // the table's tokens, probed in every trace
	pricing    *Pricing         // USD prices (usd.go)

	confirmations  uint64
	receiptTimeout time.Duration
	bounds         Bounds
	log            *slog.Logger
	now            func() time.Time

	// reserveMu makes the store's allocation request belong to exactly one
	// Ledger.Reserve call.
	reserveMu sync.Mutex
	// inflight counts confirms past their reservation.
	inflight sync.WaitGroup
	// sigs are this process's open signature reservations.
	sigs sigBook
}

// Drain waits, at most d, for confirms that reserved to finish: a process
// that stops (stdin closed, SIGTERM) does not cut a broadcast short.
func (e *Engine) Drain(d time.Duration) bool {
	done := make(chan struct{})
	go func() { e.inflight.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// New builds an engine.
func New(d Deps) *Engine {
	e := &Engine{chain: d.Chain, chainID: d.Chain.ChainID(), signer: d.Signer, address: d.Address, gate: d.Gate,
		rules: d.Rules, confirmations: d.Confirmations, receiptTimeout: d.ReceiptTimeout,
		bounds: d.Bounds, log: d.Logger, now: d.Now, recErr: d.JournalErr, humanAbove: d.HumanAbove, known: d.Known, pricing: d.Prices}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.bounds.Confirm <= 0 {
		e.bounds.Confirm = DefaultBounds.Confirm
	}
	if e.bounds.Send <= 0 {
		e.bounds.Send = DefaultBounds.Send
	}
	if e.confirmations == 0 {
		e.confirmations = 1
	}
	if e.receiptTimeout <= 0 {
		e.receiptTimeout = 60 * time.Second
	}
	switch {
	case d.Recorder != nil:
		e.rec = d.Recorder
	case d.Journal != nil:
		e.rec = d.Journal
	default:
		e.rec = &memRecorder{now: e.now}
	}
	e.store = &store{rec: e.rec, now: e.now, bound: e.bounds.Confirm}
	session := d.Session
	if session == "" {
		session = "s"
	}
	switch {
	case !d.Capped || d.JournalErr != nil:
		e.ledger = &caps.Ledger{} // the zero ledger refuses every spend
	default:
		e.ledger = caps.NewLedgerWithStore(d.Limits, d.AllowUncapped, e.now, e.store, session)
	}
	return e
}

// Ledger is the caps ledger the engine reserves on (for showing usage).
func (e *Engine) Ledger() *caps.Ledger { return e.ledger }

// Record appends to the records; its error must stop a write that depends
// on it.
func (e *Engine) Record(kind string, data any) error {
	if e.recErr != nil {
		return e.recErr
	}
	_, err := e.rec.Append(kind, data)
	return err
}

// CapsRefusal renders a caps error in the asset's units, for a request
// whose network fee is not part of what it asks (a signature).
func (e *Engine) CapsRefusal(err error) *Refusal { return e.capsRefusal(err, nil) }

// capsRefusal renders a caps error in the asset's units. fee is the
// request's max network fee in ETH (nil: none): what of an ETH cap the fee
// takes, so that the ETH value that fits is the caps' Fits minus it.
//
// A CAP_EXCEEDED says which cap refused, what the request needs, the most
// that fits now (in every window, fees included) and that caps are the
// operator's. It never coaches: no "split it", no way around a cap — a cap
// per transaction bounds each write, and splitting a refused payment is
// the user's and the operator's call, not the assistant's.
func (e *Engine) capsRefusal(err error, fee *big.Int) *Refusal {
	var ce *caps.Error
	if !errors.As(err, &ce) {
		return Refuse(caps.CodeNoLedger, "the spend ledger is unavailable (%s); no write can proceed. Nothing was signed or sent.", err)
	}
	if ce.Code == caps.CodeNoLedger {
		return e.LedgerUnavailable(ce.Cause)
	}
	as := e.asset(ce.Asset)
	amt := func(v *big.Int) string { return as.Format(v) + " " + as.Marked() }
	switch ce.Code {
	case caps.CodeExceeded:
		if !as.Native || (fee != nil && fee.Sign() <= 0) {
			fee = nil
		}
		needs := amt(ce.Requested)
		if fee != nil {
			value := new(big.Int).Sub(ce.Requested, fee)
			if value.Sign() > 0 {
				needs = fmt.Sprintf("up to %s (%s plus a max network fee of %s)", amt(ce.Requested), amt(value), amt(fee))
			} else {
				needs = fmt.Sprintf("up to %s for its max network fee", amt(ce.Requested))
			}
		} else if as.Native {
			needs += " (ETH spend counts the value plus the max network fee)"
		}
		which := fmt.Sprintf("more than its %s cap of %s", ce.Window, amt(ce.Limit))
		if ce.Window != caps.PerTx {
			which = fmt.Sprintf("more than its %s cap leaves: the cap is %s, %s is already used (settled or reserved), so %s is left", ce.Window, amt(ce.Limit), amt(ce.Used), amt(ce.Remaining))
		}
		return Refuse(ce.Code, "this needs %s, %s. %s Nothing was signed or sent. Caps are the operator's limits (%s); only the operator changes them: tell the user what was refused.",
			needs, which, fitsSentence(ce, fee, amt), windowVar(ce.Window))
	case caps.CodeUncapped:
		return Refuse(ce.Code, "%s (%s) has no spend cap configured, and walletgate refuses to spend an asset without a cap. Nothing was signed or sent. The operator can add one in every window (%s, %s and %s, e.g. %s=<amount>), or allow uncapped tokens with %s=true.",
			as.Marked(), as.Address.Hex(), policy.EnvCapPerTx, policy.EnvCapPerSession, policy.EnvCapPerDay, capKey(as), policy.EnvAllowUncappedTokens)
	}
	return Refuse(ce.Code, "%s. Nothing was signed or sent.", ce.Error())
}

// fitsSentence says the most of the refused asset that fits now, in every
// window; for ETH with a fee, the value that fits beside the fee.
func fitsSentence(ce *caps.Error, fee *big.Int, amt func(*big.Int) string) string {
	fits := ce.Fits
	if fits == nil { // an error built elsewhere: what its window leaves
		fits = ce.Remaining
	}
	if fee == nil {
		if fits.Sign() == 0 {
			return "Nothing of it fits now: one of its cap windows is used up."
		}
		return fmt.Sprintf("At most %s fits now (the least left in any of its cap windows).", amt(fits))
	}
	value := new(big.Int).Sub(fits, fee)
	if value.Sign() <= 0 {
		return fmt.Sprintf("No ETH value fits now: the max network fee of this write alone (%s) takes all that the ETH caps leave (%s).", amt(fee), amt(fits))
	}
	return fmt.Sprintf("At most %s fits now (the max network fee of this write, %s, counts too).", amt(value), amt(fee))
}

// LedgerUnavailable refuses a write because the journal cannot be trusted
// or written: it says what is wrong and what the operator should do.
func (e *Engine) LedgerUnavailable(cause error) *Refusal {
	if cause == nil {
		cause = e.recErr
	}
	var me *caps.MismatchError
	if errors.As(cause, &me) {
		return e.capsDiffer(me)
	}
	var ue *journal.UnavailableError
	if errors.As(cause, &ue) {
		return Refuse(caps.CodeNoLedger, "the spend journal cannot be used: %s. Writes are refused until this is fixed; reads keep working. Nothing was signed or sent. What to do: %s", ue.Reason, ue.Fix).
			Because("the spend journal cannot be used: %s. Writes are refused until this is fixed; reads keep working. What to do: %s", ue.Reason, ue.Fix)
	}
	if cause != nil {
		return Refuse(caps.CodeNoLedger, "the spend journal cannot be used (%s). Writes are refused until the operator acts (check WALLETGATE_STATE_DIR; run walletgate audit verify); reads keep working. Nothing was signed or sent.", cause).
			Because("the spend journal cannot be used (%s). Writes are refused until the operator acts (check WALLETGATE_STATE_DIR; run walletgate audit verify); reads keep working.", cause)
	}
	return Refuse(caps.CodeNoLedger, "no spend caps are in force, so walletgate refuses every write. Nothing was signed or sent. The operator sets them with WALLETGATE_CAP_PER_TX, _PER_SESSION and _PER_DAY.")
}

// capsDiffer refuses a write on a host whose caps differ from the caps in
// force for the wallet in the shared state, listing the difference.
func (e *Engine) capsDiffer(me *caps.MismatchError) *Refusal {
	var parts []string
	if me.Unreadable {
		parts = append(parts, "the caps stored there cannot be read by this walletgate")
	}
	for _, d := range me.Diffs {
		as := e.asset(d.Asset)
		unit := func(v *big.Int) string {
			if v == nil {
				return "unlimited"
			}
			return caps.FormatLimit(v, d.Decimals) + " " + as.Marked()
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s there, %s here (%s)", d.Window, as.Marked(), unit(d.Theirs), unit(d.Ours), windowVar(d.Window)))
	}
	if me.Uncapped {
		parts = append(parts, fmt.Sprintf("%s: %v there, %v here", policy.EnvAllowUncappedTokens, me.TheirsUncapped, !me.TheirsUncapped))
	}
	diff := strings.Join(parts, "; ")
	return Refuse(caps.CodeCapsDiffer, "this host's caps differ from the caps in force for this wallet in the shared state %s, which every host on the wallet enforces: %s. Writes are refused on this host until its caps match; reads keep working. Nothing was signed or sent. Caps are the operator's: give every host the same caps (README: Shared state in PostgreSQL).", me.Where, diff).
		Because("this host's caps differ from the caps in force for this wallet in the shared state %s: %s", me.Where, diff)
}

func windowVar(w caps.Window) string {
	switch w {
	case caps.PerTx:
		return policy.EnvCapPerTx
	case caps.PerSession:
		return policy.EnvCapPerSession
	}
	return policy.EnvCapPerDay
}

func capKey(as Asset) string {
	if as.Native {
		return "ETH"
	}
	if as.Known {
		return as.Symbol
	}
	return as.Address.Hex()
}
