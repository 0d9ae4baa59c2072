package engine

import (
	"context"
	"errors"
	"math/big"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// failingRecorder keeps records like memRecorder, and fails appends of one
// kind in the way a full disk does: the record is written, the error is
// returned anyway (the journal's head could not be updated).
type failingRecorder struct {
	memRecorder
	failKind string
	kinds    []string // every kind appended, in order
	// notWritten fails failKind before it is written (a disk that refuses
	// the write) instead of after.
	notWritten bool
}

func (f *failingRecorder) Append(kind string, data any) (records.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.appendLocked(kind, data)
}

// Update fails the appends of failKind inside a locked update too: a
// correction, an end and a receipt are written there. As in the journal,
// the records an update appended before the failure stay.
func (f *failingRecorder) Update(fn func(*records.Live, records.AppendFunc) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fn(&f.live, f.appendLocked)
}

func (f *failingRecorder) appendLocked(kind string, data any) (records.Record, error) {
	f.kinds = append(f.kinds, kind)
	if f.notWritten && kind == f.failKind {
		return records.Record{}, errors.New("write journal: no space left on device")
	}
	r, err := f.memRecorder.appendLocked(kind, data)
	if err == nil && kind == f.failKind {
		return r, errors.New("write journal.head: no space left on device")
	}
	return r, err
}

type testBed struct {
	t     *testing.T
	dev   *devnet.Devnet
	chain *chain.Client
}

func newTestBed(t *testing.T) *testBed {
	d, err := devnet.Start(context.Background(), devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	c, err := chain.NewFromRPC(context.Background(), d.RPC(), "embedded dev chain")
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return &testBed{t: t, dev: d, chain: c}
}

// engine is a fresh engine (a fresh process) on rec, with caps of 1 ETH and
// usdt base units of USDT in every window.
func (b *testBed) engine(rec Recorder, usdt ...int64) *Engine {
	limit := func() map[common.Address]*big.Int {
		m := map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18)}
		if len(usdt) > 0 {
			m[b.dev.Contracts.USDT] = big.NewInt(usdt[0])
		}
		return m
	}
	return New(Deps{Chain: b.chain, Signer: signer.Dev(), Address: signer.DevAddress,
		Gate:   gate.New(time.Minute, 8, nil),
		Limits: caps.Limits{PerTx: limit(), PerSession: limit(), PerDay: limit()},
		Capped: true, Recorder: rec, ReceiptTimeout: 5 * time.Second})
}

// previewETH builds and issues an ETH send of wei to to.
func (b *testBed) previewETH(e *Engine, to common.Address, wei int64) (string, []byte) {
	call := chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(wei)}
	built, ref := e.Build(context.Background(), call, to, func(c chain.Call) caps.Spend { return caps.Spend{policy.NativeAsset: c.MaxCost()} }, nil)
	require.Nil(b.t, ref)
	p := &Plan{Legs: []Leg{{Label: "send", Call: built.Call}}, Spend: built.Spend, Recipient: &to,
		Effects: []Effect{{Asset: ETH, From: signer.DevAddress, To: to, Amount: big.NewInt(wei)}}}
	canonical := []byte(to.Hex() + ":" + big.NewInt(wei).String())
	token, _, ref := e.Issue("wallet_send", canonical, p)
	require.Nil(b.t, ref)
	return token, canonical
}

func (b *testBed) balance(a common.Address) *big.Int {
	v, err := b.dev.Client().BalanceAt(context.Background(), a, nil)
	require.NoError(b.t, err)
	return v
}

func (b *testBed) nonce() uint64 {
	n, err := b.dev.Client().NonceAt(context.Background(), signer.DevAddress, nil)
	require.NoError(b.t, err)
	return n
}

// A journal write that fails after signing: the signed record is on disk,
// the append said it failed. The answer says signed and not sent; nothing
// is sent then, or at the next start; the nonce is not jammed.
func TestSignedButNotJournaledIsNeverSent(t *testing.T) {
	b := newTestBed(t)
	rec := &failingRecorder{memRecorder: memRecorder{now: time.Now}, failKind: KindSigned}
	e := b.engine(rec)
	to := common.HexToAddress("0x00000000000000000000000000000000000e6e01")
	nonce := b.nonce()
	token, canonical := b.previewETH(e, to, 1e15)
	out, ref := e.Confirm(context.Background(), TokenMode{}, token, "wallet_send", canonical)
	require.Nil(t, out)
	require.NotNil(t, ref)
	require.Equal(t, CodeNotSent, ref.Code)
	require.Contains(t, ref.Message, "was signed but could not be journaled")
	require.Contains(t, ref.Message, "never will be")
	require.NotContains(t, ref.Message, "Nothing was signed")
	require.Zero(t, b.balance(to).Sign())
	require.Equal(t, nonce, b.nonce())

	// The next start, on a clock past the signing process's bound (it is
	// gone, not in flight): the signed record is there, no broadcast follows
	// it. Reconcile answers once it has decided and journaled the outcome;
	// a broadcast would have been handed to the node's pool by then.
	rec.failKind = ""
	next := b.engine(rec)
	next.now = func() time.Time { return time.Now().Add(2 * DefaultBounds.Confirm) }
	mark := len(rec.kinds)
	lines, err := next.Reconcile(context.Background())
	require.NoError(t, err)
	require.Len(t, lines, 1)
	require.Contains(t, lines[0], "never journaled")
	require.Equal(t, []string{KindAbandoned}, rec.kinds[mark:], "the outcome journaled, and no broadcast")
	pending, err := b.dev.Client().PendingNonceAt(context.Background(), signer.DevAddress)
	require.NoError(t, err)
	require.Equal(t, nonce, pending, "never sent: nothing of the wallet's in the node's pool")
	require.Zero(t, b.balance(to).Sign(), "never sent")
	require.Equal(t, nonce, b.nonce())

	// A new send takes the free nonce.
	next.now = time.Now
	token, canonical = b.previewETH(next, to, 2e15)
	out, ref = next.Confirm(context.Background(), TokenMode{}, token, "wallet_send", canonical)
	require.Nil(t, ref)
	require.Equal(t, StatusConfirmed, out.Status)
	require.Equal(t, nonce, out.Nonce)
	require.Equal(t, big.NewInt(2e15), b.balance(to))
}

func TestNextNonce(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	// tx is a transaction the node accepted.
	tx := func(res string, nonce uint64, end string) *txState {
		return &txState{SignedRecord: SignedRecord{Reservation: res, Nonce: nonce}, end: end, broadcasts: []string{OutcomeAccepted}}
	}
	unknown := &txState{SignedRecord: SignedRecord{Reservation: "u", Nonce: 5}, at: now.Add(-time.Hour), broadcasts: []string{OutcomeUnknown}}
	unknown6 := &txState{SignedRecord: SignedRecord{Reservation: "u", Nonce: 6}, at: now.Add(-time.Hour), broadcasts: []string{OutcomeUnknown}}
	signing := &txState{SignedRecord: SignedRecord{Reservation: "s", Nonce: 5}, at: now.Add(-time.Second), pid: os.Getpid()}
	exited := exec.Command("true")
	require.NoError(t, exited.Run())
	dead := exited.Process.Pid // exited and waited for
	fresh := []records.Alloc{{Reservation: "b", Nonce: 5, At: now.Add(-time.Second)}}
	for _, tc := range []struct {
		name       string
		txs        []*txState
		allocs     []records.Alloc
		reservedBy map[string]int
		nextMined  uint64
		chain      uint64
		want       uint64
		stuck      *txState
	}{
		{"nothing held", nil, nil, nil, 0, 5, 5, nil},
		{"a pending transaction holds its nonce", []*txState{tx("a", 5, "")}, nil, nil, 0, 5, 6, nil},
		{"a mined one too, while the node's count lags", nil, nil, nil, 6, 5, 6, nil},
		{"abandoned frees it", []*txState{tx("a", 5, KindAbandoned)}, nil, nil, 0, 5, 5, nil},
		{"a fresh allocation holds it", nil, fresh, nil, 0, 5, 6, nil},
		{"a stale one does not", nil, []records.Alloc{{Reservation: "b", Nonce: 5, At: now.Add(-time.Hour)}}, nil, 0, 5, 5, nil},
		{"a fresh one of a live process's open reservation holds it", nil, fresh, map[string]int{"b": os.Getpid()}, 0, 5, 6, nil},
		{"one of a process that died before signing does not", nil, fresh, map[string]int{"b": dead}, 0, 5, 5, nil},
		{"a gap is filled", []*txState{tx("c", 6, "")}, nil, nil, 0, 5, 5, nil},
		{"below the chain's nonce counts nothing", []*txState{tx("a", 3, "")}, nil, nil, 0, 5, 5, nil},
		{"one being signed and broadcast right now is skipped", []*txState{signing}, nil, nil, 0, 5, 6, nil},
		{"one of unknown outcome nobody broadcasts is neither skipped nor reused", []*txState{unknown}, nil, nil, 0, 5, 5, unknown},
		{"nor one after a pending one", []*txState{tx("a", 5, ""), unknown6}, nil, nil, 0, 5, 6, unknown6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &walletState{txs: tc.txs, allocs: tc.allocs, reservedBy: tc.reservedBy, nextMined: tc.nextMined}
			n, stuck := w.nextNonce(tc.chain, now, time.Minute)
			require.Equal(t, tc.stuck, stuck)
			require.Equal(t, tc.want, n)
		})
	}
}

// The live state the journal folds gives the engine what it needs: a
// refused-final transaction frees its nonce, a receipt moves the mined
// floor, a signed record frees its allocation.
func TestLiveStateFeedsTheNonceRule(t *testing.T) {
	m := &memRecorder{now: time.Now}
	n5 := uint64(5)
	_, err := m.Append(KindCapReserve, CapRecord{ID: "r1", At: time.Now(), Change: map[string]string{"ETH": "1"}, Nonce: &n5})
	require.NoError(t, err)
	w, err := readStateOf(m)
	require.NoError(t, err)
	require.Equal(t, uint64(6), first(w.nextNonce(5, time.Now(), time.Minute)), "the allocation holds 5")
	_, _ = m.Append(KindSigned, SignedRecord{Reservation: "r1", Tx: "0x" + strings.Repeat("1", 64), Nonce: 5, From: signer.DevAddress.Hex()})
	_, _ = m.Append(KindRefusedFinal, EndRecord{Tx: "0x" + strings.Repeat("1", 64), Nonce: 5})
	w, err = readStateOf(m)
	require.NoError(t, err)
	require.Equal(t, uint64(5), first(w.nextNonce(5, time.Now(), time.Minute)), "refused-final gives 5 back")
	_, _ = m.Append(KindSigned, SignedRecord{Reservation: "r2", Tx: "0x" + strings.Repeat("2", 64), Nonce: 5, From: signer.DevAddress.Hex()})
	_, _ = m.Append(KindReceipt, ReceiptRecord{Tx: "0x" + strings.Repeat("2", 64), Status: 1})
	w, err = readStateOf(m)
	require.NoError(t, err)
	require.Equal(t, uint64(6), first(w.nextNonce(4, time.Now(), time.Minute)), "a mined nonce is used for good, whatever a lagging node says")
	require.NoError(t, m.View(func(live *records.Live) error {
		require.Equal(t, 1, live.SignedPer["r1"])
		require.Equal(t, 1, live.EndedPer["r1"])
		return nil
	}))
}

func first(n uint64, _ *txState) uint64 { return n }

func readStateOf(r Recorder) (w *walletState, err error) {
	err = r.View(func(live *records.Live) error {
		w, err = readState(live)
		return err
	})
	return w, err
}
