package engine

// The money path under concurrency: sweeps, follow-ups, start-up
// reconciles and confirms of several "processes" (engines on their own
// handles of one state directory, each with its own session) at once,
// against the real dev chain. The invariant: no window is ever negative,
// what the caps count is never below what moved, and equals it once
// everything has settled.

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/internal/pgtest"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/pgstate"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// proc is one process's (or host's) records and session.
type proc struct {
	rec     Recorder
	session string
}

// backends are the two ways processes share a wallet's state: one state
// directory (a journal handle each), and one PostgreSQL database (a host
// each).
var backends = []struct {
	name  string
	procs func(t *testing.T, b *testBed, n int) []proc
}{
	{"journal", func(t *testing.T, _ *testBed, n int) []proc {
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o700))
		var out []proc
		for i := 0; i < n; i++ {
			session := fmt.Sprintf("proc%d", i)
			j, err := journal.Open(dir, session, nil)
			require.NoError(t, err)
			t.Cleanup(func() { j.Close() })
			out = append(out, proc{j, session})
		}
		return out
	}},
	{"postgres", func(t *testing.T, b *testBed, n int) []proc {
		pg := pgtest.Start(t)
		genesis, err := b.dev.Client().HeaderByNumber(context.Background(), big.NewInt(0))
		require.NoError(t, err)
		var out []proc
		for i := 0; i < n; i++ {
			session := fmt.Sprintf("host%d", i)
			r, err := pgstate.Open(context.Background(), pgstate.Options{URL: pg.URL, ChainID: 1337, Genesis: genesis.Hash(), Address: signer.DevAddress, Session: session, Host: session})
			require.NoError(t, err)
			t.Cleanup(r.Close)
			out = append(out, proc{r, session})
		}
		return out
	}},
}

// ethEngine is an engine of one process p on b's chain with caps of 1 ETH
// in every window and receipts waited for a second.
func ethEngine(b *testBed, p proc) *Engine {
	limit := func() map[common.Address]*big.Int {
		return map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18)}
	}
	return New(Deps{Chain: b.chain, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Minute, 8, nil),
		Limits: caps.Limits{PerTx: limit(), PerSession: limit(), PerDay: limit()}, Capped: true, Recorder: p.rec, Session: p.session, ReceiptTimeout: time.Second})
}

// dayUsed is what asset's per-day window holds, as e's ledger reads it from
// the shared records.
func dayUsed(t *testing.T, e *Engine, asset common.Address) *big.Int {
	t.Helper()
	for _, u := range e.Ledger().Usage(asset) {
		if u.Window == caps.PerDay {
			return u.Used
		}
	}
	t.Fatalf("no day window of %s", asset.Hex())
	return nil
}

// Four processes each sweep four times at once after a 60-unit EIP-3009
// authorization expired: its reservation is released once, so the day
// window is exactly 0, never below; and an authorization above the day's
// remainder is still refused afterwards.
func TestConcurrentSweepsReleaseAnExpiredAuthorizationOnce(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { concurrentSweeps(t, be.procs) })
	}
}

func concurrentSweeps(t *testing.T, procs func(*testing.T, *testBed, int) []proc) {
	b := newTestBed(t)
	ctx := context.Background()
	tok, err := b.dev.Deploy(ctx, "PermitToken", "T", "T", "1", uint8(6), big.NewInt(1e9))
	require.NoError(t, err)
	lim := func() map[common.Address]*big.Int {
		return map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18), tok: big.NewInt(100)}
	}
	var engines []*Engine
	for _, p := range procs(t, b, 4) {
		engines = append(engines, New(Deps{Chain: b.chain, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Minute, 8, nil),
			Limits: caps.Limits{PerTx: lim(), PerSession: lim(), PerDay: lim()}, Capped: true, Recorder: p.rec, Session: p.session}))
	}
	to := common.HexToAddress("0x00000000000000000000000000000000000e6e05")
	until := time.Now().Add(5 * time.Minute)
	sign := func(e *Engine, amount int64, canonical string) *Refusal {
		token, _, ref := e.Issue("wallet_sign_typed_data", []byte(canonical), authPlanUntil(t, tok, to, amount, until))
		if ref != nil {
			return ref
		}
		_, ref = e.Confirm(ctx, TokenMode{}, token, "wallet_sign_typed_data", []byte(canonical))
		return ref
	}
	require.Nil(t, sign(engines[0], 60, "sixty"))
	require.Equal(t, "60", dayUsed(t, engines[0], tok).String())
	require.NoError(t, b.dev.AdjustTime(time.Hour)) // its validBefore passes on chain
	until = time.Now().Add(2 * time.Hour)           // later ones are valid past the moved chain clock

	var wg sync.WaitGroup
	for _, e := range engines {
		for k := 0; k < 4; k++ {
			wg.Add(1)
			go func() { defer wg.Done(); e.SweepSignatures(ctx) }()
		}
	}
	wg.Wait()
	for i, e := range engines {
		require.Equal(t, "0", dayUsed(t, e, tok).String(), "process %d: the expired authorization's reservation released exactly once", i)
	}
	require.Equal(t, "0", used(engines[0], tok)[tok].String(), "the session that signed it counts it no more")

	// A fresh authorization's deadline is ahead of the moved chain clock.
	refused := sign(engines[1], 160, "one-sixty")
	require.NotNil(t, refused, "160 under a day cap of 100")
	require.Equal(t, caps.CodeExceeded, refused.Code)
	require.Nil(t, sign(engines[2], 100, "one-hundred"), "the whole day's cap is free again")
	require.Equal(t, "100", dayUsed(t, engines[3], tok).String())
}

// A send whose broadcast the node swallowed, whose nonce another
// transaction then took: four processes follow it up four times each, and
// start-up reconciles run beside them. It is dropped once, on the node's
// evidence, and its reservation released once: the ETH day window ends at
// 0, never below.
func TestConcurrentFollowUpsReleaseADroppedSendOnce(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { concurrentFollowUps(t, be.procs) })
	}
}

func concurrentFollowUps(t *testing.T, procs func(*testing.T, *testBed, int) []proc) {
	b := newSettleBed(t)
	ctx := context.Background()
	var engines []*Engine
	for _, p := range procs(t, b.testBed, 4) {
		engines = append(engines, ethEngine(b.testBed, p))
	}
	b.node.swallow[0] = true
	token, canonical := b.previewETH(engines[0], b.sink, 1e16)
	out, ref := engines[0].Confirm(ctx, TokenMode{}, token, "wallet_send", canonical)
	require.Nil(t, ref)
	require.Equal(t, StatusPending, out.Status)
	require.True(t, dayUsed(t, engines[0], policy.NativeAsset).Cmp(big.NewInt(1e16)) > 0, "pending: counted with its max fee")

	// Another transaction of the wallet takes its nonce, outside walletgate.
	_, err := b.dev.SendAsDev(ctx, &b.sink, big.NewInt(1), nil, 21000)
	require.NoError(t, err)
	require.Equal(t, out.Nonce+1, b.nonce(), "the other transaction took nonce %d", out.Nonce)

	var wg sync.WaitGroup
	for _, e := range engines {
		for k := 0; k < 4; k++ {
			wg.Add(1)
			go func() { defer wg.Done(); _ = e.followUp(ctx) }()
		}
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = e.Reconcile(ctx) }()
	}
	wg.Wait()
	for i, e := range engines {
		require.Equal(t, "0", dayUsed(t, e, policy.NativeAsset).String(), "process %d: the dropped send's reservation released exactly once", i)
		require.Empty(t, e.PendingTransactions(), "process %d", i)
	}
	require.Equal(t, "0", used(engines[0], policy.NativeAsset)[policy.NativeAsset].String(), "the session that sent it counts it no more")
	require.Zero(t, b.balance(b.sink).Cmp(big.NewInt(1)), "only the other transaction paid the sink")
}

// A send whose broadcast the node swallowed lands later, when the held bytes
// reach it. Another process's one follow-up finds its receipt and settles
// it at what moved; the session that answered pending takes that
// settlement into its own window at its next follow-up; nothing is listed
// pending any more.
func TestAPendingSendSettlesInAnotherProcessWithinOneFollowUp(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { settlesElsewhere(t, be.procs) })
	}
}

func settlesElsewhere(t *testing.T, procs func(*testing.T, *testBed, int) []proc) {
	b := newSettleBed(t)
	ctx := context.Background()
	var engines []*Engine
	for _, p := range procs(t, b.testBed, 2) {
		engines = append(engines, ethEngine(b.testBed, p))
	}
	before := b.balance(signer.DevAddress)
	b.node.swallow[0] = true
	token, canonical := b.previewETH(engines[0], b.sink, 1e16)
	out, ref := engines[0].Confirm(ctx, TokenMode{}, token, "wallet_send", canonical)
	require.Nil(t, ref)
	require.Equal(t, StatusPending, out.Status)
	b.node.release(b.dev, b.direct)
	moved := new(big.Int).Sub(before, b.balance(signer.DevAddress)) // value plus fee

	require.Nil(t, engines[1].followUp(ctx))
	require.Equal(t, moved.String(), dayUsed(t, engines[1], policy.NativeAsset).String(), "settled at what moved by the process that saw the receipt")
	require.Empty(t, engines[1].PendingTransactions())
	require.Empty(t, engines[0].PendingTransactions())
	require.Nil(t, engines[0].followUp(ctx))
	require.Equal(t, moved.String(), used(engines[0], policy.NativeAsset)[policy.NativeAsset].String(), "the sending session's window counts what moved")
}

// A settlement the journal cannot record: the answer says so, and the caps
// keep the larger (reserved) amount counted.
func TestASettlementThatCannotBeRecordedStaysCountedAndIsSaid(t *testing.T) {
	b := newTestBed(t)
	rec := &failingRecorder{memRecorder: memRecorder{now: time.Now}, failKind: KindCapCorrect, notWritten: true}
	e := b.engine(rec)
	to := common.HexToAddress("0x00000000000000000000000000000000000e6e06")
	token, canonical := b.previewETH(e, to, 1e15)
	reserved := new(big.Int)
	out, ref := e.Confirm(context.Background(), asked{approval: Approve(), seen: func(p *Plan) { reserved.Set(p.Spend[policy.NativeAsset]) }}, token, "wallet_send", canonical)
	require.Nil(t, ref)
	require.Equal(t, StatusConfirmed, out.Status)
	require.Equal(t, "1000000000000000", b.balance(to).String(), "the send happened")
	require.NotEmpty(t, out.Unrecorded, "the answer says what the journal could not record")
	require.Contains(t, out.Unrecorded[0], "the settlement of the caps")
	require.Equal(t, reserved.String(), dayUsed(t, e, policy.NativeAsset).String(), "the day window keeps the reservation: the larger amount")
	require.Equal(t, reserved.String(), used(e, policy.NativeAsset)[policy.NativeAsset].String())
}

// asked is an Asker that answers approval, after showing the plan to seen.
type asked struct {
	approval Approval
	seen     func(*Plan)
}

func (a asked) Redeem(_ context.Context, confirm, _ string, _ []byte) (string, *Refusal) {
	return confirm, nil
}

func (a asked) Ask(_ context.Context, p *Plan) Approval {
	if a.seen != nil {
		a.seen(p)
	}
	return a.approval
}

// An Asker's zero answer denies: nothing is signed or sent, no cap used.
func TestAnAskersZeroAnswerDenies(t *testing.T) {
	b := newTestBed(t)
	e := b.engine(&memRecorder{now: time.Now})
	to := common.HexToAddress("0x00000000000000000000000000000000000e6e07")
	nonce := b.nonce()
	token, canonical := b.previewETH(e, to, 1e15)
	out, ref := e.Confirm(context.Background(), asked{}, token, "wallet_send", canonical)
	require.Nil(t, out)
	require.NotNil(t, ref)
	require.Equal(t, CodeNotApproved, ref.Code)
	require.Contains(t, ref.Message, "Nothing was signed or sent")
	require.Equal(t, nonce, b.nonce())
	require.Zero(t, b.balance(to).Sign())
	require.Equal(t, "0", dayUsed(t, e, policy.NativeAsset).String())
}

// Every record kind a send writes, failing in each way a disk fails (the
// write refused; the record written but the write reported failed): what
// the caps count is never below what moved, a failure before the broadcast
// moves nothing, and one after it is said in the answer.
func TestAFailingRecorderForEveryRecordKind(t *testing.T) {
	b := newTestBed(t)
	to := common.HexToAddress("0x00000000000000000000000000000000000e6e09")
	beforeSend := map[string]bool{KindPreview: true, KindCapReserve: true, KindSigned: true}
	for _, kind := range []string{KindPreview, KindCapReserve, KindSigned, KindBroadcast, KindReceipt, KindCapCorrect} {
		for _, notWritten := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s written=%v", kind, !notWritten), func(t *testing.T) {
				rec := &failingRecorder{memRecorder: memRecorder{now: time.Now}, failKind: kind, notWritten: notWritten}
				e := b.engine(rec)
				wallet := b.balance(signer.DevAddress)
				paid := b.balance(to)
				call := chain.Call{From: signer.DevAddress, To: to, Value: big.NewInt(1e15)}
				built, ref := e.Build(context.Background(), call, to, func(c chain.Call) caps.Spend { return caps.Spend{policy.NativeAsset: c.MaxCost()} }, nil)
				require.Nil(t, ref)
				p := &Plan{Legs: []Leg{{Label: "send", Call: built.Call}}, Spend: built.Spend, Recipient: &to,
					Effects: []Effect{{Asset: ETH, From: signer.DevAddress, To: to, Amount: big.NewInt(1e15)}}}
				token, _, ref := e.Issue("wallet_send", []byte(kind), p)
				if kind == KindPreview {
					require.NotNil(t, ref, "a preview that cannot be recorded is refused")
					return
				}
				require.Nil(t, ref)
				out, ref := e.Confirm(context.Background(), TokenMode{}, token, "wallet_send", []byte(kind))
				moved := new(big.Int).Sub(wallet, b.balance(signer.DevAddress))
				counted := dayUsed(t, e, policy.NativeAsset)
				require.True(t, counted.Cmp(moved) >= 0, "the caps count %s, %s moved", counted, moved)
				require.True(t, used(e, policy.NativeAsset)[policy.NativeAsset].Cmp(moved) >= 0, "the session counts at least what moved")
				if beforeSend[kind] {
					require.NotNil(t, ref, "refused before anything is sent")
					require.Zero(t, moved.Sign(), "nothing moved")
					require.Zero(t, new(big.Int).Sub(b.balance(to), paid).Sign())
					return
				}
				require.Nil(t, ref)
				require.NotNil(t, out)
				require.Equal(t, "1000000000000000", new(big.Int).Sub(b.balance(to), paid).String(), "the send happened")
				if notWritten {
					require.NotEmpty(t, out.Unrecorded, "the answer says what the journal could not record")
				}
			})
		}
	}
}

// What wallet_policy lists as pending is never on chain: a send whose
// swallowed broadcast later landed is settled by SettleIncluded (which
// wallet_policy runs first), in one lookup, without any confirm.
func TestSettleIncludedListsNoPendingTransactionWhoseReceiptIsOnChain(t *testing.T) {
	b := newSettleBed(t)
	ctx := context.Background()
	e := ethEngine(b.testBed, backends[0].procs(t, b.testBed, 1)[0])
	before := b.balance(signer.DevAddress)
	b.node.swallow[0] = true
	token, canonical := b.previewETH(e, b.sink, 1e16)
	out, ref := e.Confirm(ctx, TokenMode{}, token, "wallet_send", canonical)
	require.Nil(t, ref)
	require.Equal(t, StatusPending, out.Status)
	require.Equal(t, []string{out.Tx.Hex()}, e.PendingTransactions())
	b.node.release(b.dev, b.direct)
	moved := new(big.Int).Sub(before, b.balance(signer.DevAddress))
	e.SettleIncluded(ctx)
	require.Empty(t, e.PendingTransactions())
	require.Equal(t, moved.String(), dayUsed(t, e, policy.NativeAsset).String())
	require.Equal(t, moved.String(), used(e, policy.NativeAsset)[policy.NativeAsset].String())
}

// slowLock is a recorder whose next locked update waits (on the test's
// clock) for as long as the confirm bound and a second more: the journal's
// lock held by other processes.
type slowLock struct {
	memRecorder
	clock *time.Time
	wait  time.Duration
}

func (s *slowLock) Update(fn func(*records.Live, records.AppendFunc) error) error {
	if s.wait > 0 {
		*s.clock = s.clock.Add(s.wait)
		s.wait = 0
	}
	return s.memRecorder.Update(fn)
}

// One clock for a leg's nonce and its deadline: the allocation is dated
// when the reservation was asked for, so a confirm that waited past the
// bound for the journal's lock signs nothing (another process already sees
// that allocation as expired and may take its nonce).
func TestALegsDeadlineRunsFromItsNoncesAllocation(t *testing.T) {
	b := newTestBed(t)
	clock := time.Now()
	now := func() time.Time { return clock }
	rec := &slowLock{memRecorder: memRecorder{now: now}, clock: &clock}
	limit := func() map[common.Address]*big.Int {
		return map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18)}
	}
	e := New(Deps{Chain: b.chain, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Hour, 8, nil),
		Limits: caps.Limits{PerTx: limit(), PerSession: limit(), PerDay: limit()}, Capped: true, Recorder: rec, Now: now, ReceiptTimeout: 5 * time.Second})
	to := common.HexToAddress("0x00000000000000000000000000000000000e6e0a")
	nonce := b.nonce()
	token, canonical := b.previewETH(e, to, 1e15)
	rec.wait = e.bounds.Confirm + time.Second
	out, ref := e.Confirm(context.Background(), TokenMode{}, token, "wallet_send", canonical)
	require.Nil(t, out)
	require.NotNil(t, ref)
	require.Equal(t, CodeTooSlow, ref.Code, ref.Message)
	require.Equal(t, nonce, b.nonce(), "nothing signed or sent")
	require.Zero(t, b.balance(to).Sign())
	require.Equal(t, "0", dayUsed(t, e, policy.NativeAsset).String(), "released")
}
