package engine

// Every stop branch of a multi-leg plan, and random plans with random
// failures, against the real dev chain behind a small fault-injecting proxy:
// whatever the plan's fate, the caps used equal what left the wallet on
// chain (ETH with its fees), and a pending one counts at least that.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// faultNode is an HTTP JSON-RPC proxy in front of the dev chain that can
// refuse or swallow the broadcasts it is told to, and answer eth_call to
// one contract with success.
type faultNode struct {
	t        *testing.T
	upstream string
	srv      *httptest.Server

	mu      sync.Mutex
	sends   int            // eth_sendRawTransaction requests seen
	refuse  map[int]bool   // by send index: answer an error, do not forward
	swallow map[int]bool   // by send index: answer the hash, hold the bytes
	lose    map[int]bool   // by send index (the waiting broadcast's): forward it, lose the answer
	held    []string       // swallowed raw transactions
	onSend  map[int]func() // by send index: run when it arrives
	passTo  common.Address // eth_call to it answers "0x" (zero: none)
}

func newFaultNode(t *testing.T, upstream string) *faultNode {
	f := &faultNode{t: t, upstream: upstream}
	f.reset()
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *faultNode) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends, f.refuse, f.swallow, f.onSend, f.passTo, f.lose = 0, map[int]bool{}, map[int]bool{}, map[int]func(){}, common.Address{}, map[int]bool{}
}

type faultMsg struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

func (f *faultNode) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var one faultMsg
	var batch []faultMsg
	if len(body) > 0 && body[0] == '[' && json.Unmarshal(body, &batch) == nil && len(batch) > 1 && batch[0].Method == "eth_sendRawTransactionSync" && string(batch[0].Params[0]) != `"0x"` {
		// The broadcast that waits rides first in its batch: its fault is a
		// plain send's (refused, or swallowed: the node's timeout, code 4),
		// and the lookups after it go to the node.
		if f.losing() {
			resp, err := http.Post(f.upstream, "application/json", bytes.NewReader(body))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			http.Error(w, "answer lost", http.StatusBadGateway)
			return
		}
		if ans := f.fault("eth_sendRawTransaction", batch[0].Params); ans != "" {
			if strings.HasPrefix(ans, `"result"`) {
				ans = `"error":{"code":4,"message":"The transaction was added to the transaction pool but wasn't processed in 1s"}`
			}
			rest, _ := json.Marshal(batch[1:])
			resp, err := http.Post(f.upstream, "application/json", bytes.NewReader(rest))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			var answers []json.RawMessage
			_ = json.NewDecoder(resp.Body).Decode(&answers)
			first := json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, batch[0].ID, ans))
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(append([]json.RawMessage{first}, answers...))
			return
		}
	}
	if len(body) > 0 && body[0] == '{' && json.Unmarshal(body, &one) == nil {
		if ans := f.fault(one.Method, one.Params); ans != "" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,%s}`, one.ID, ans)
			return
		}
	}
	resp, err := http.Post(f.upstream, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.Copy(w, resp.Body)
}

// losing reports whether the waiting broadcast now arriving is to be
// forwarded with its answer lost (counting it as a send).
func (f *faultNode) losing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.lose[f.sends] {
		return false
	}
	f.sends++
	return true
}

// fault answers a single request itself ("result":… or "error":…), or ""
// to forward it.
func (f *faultNode) fault(method string, params []json.RawMessage) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch method {
	case "eth_sendRawTransaction":
		i := f.sends
		f.sends++
		if fn := f.onSend[i]; fn != nil {
			defer fn()
		}
		var raw string
		_ = json.Unmarshal(params[0], &raw)
		switch {
		case f.refuse[i]:
			return `"error":{"code":-32000,"message":"txpool is full"}`
		case f.swallow[i]:
			f.held = append(f.held, raw)
			tx := new(types.Transaction)
			_ = tx.UnmarshalBinary(hexutil.MustDecode(raw))
			return `"result":"` + tx.Hash().Hex() + `"`
		}
	case "eth_call":
		var call struct {
			To *common.Address `json:"to"`
		}
		if f.passTo != (common.Address{}) && len(params) > 0 && json.Unmarshal(params[0], &call) == nil && call.To != nil && *call.To == f.passTo {
			return `"result":"0x"`
		}
	}
	return ""
}

// release forwards the swallowed transactions to the node and waits until
// each is included.
func (f *faultNode) release(d *devnet.Devnet, c *chain.Client) {
	f.mu.Lock()
	held := f.held
	f.held = nil
	f.mu.Unlock()
	for _, raw := range held {
		tx := new(types.Transaction)
		require.NoError(f.t, tx.UnmarshalBinary(hexutil.MustDecode(raw)))
		require.NoError(f.t, c.SendRaw(context.Background(), tx))
		_, err := d.WaitReceipt(context.Background(), tx.Hash())
		require.NoError(f.t, err, "the held transaction lands")
	}
}

// failingSigner fails the signatures it is told to, by index.
type failingSigner struct {
	signer.Signer
	mu    sync.Mutex
	n     int
	fails map[int]bool
}

func (s *failingSigner) SignTx(tx *types.Transaction, id *big.Int) (*types.Transaction, error) {
	s.mu.Lock()
	i := s.n
	s.n++
	fail := s.fails[i]
	s.mu.Unlock()
	if fail {
		return nil, errors.New("the hardware wallet was unplugged")
	}
	return s.Signer.SignTx(tx, id)
}

// settleBed is the dev chain behind a faultNode, with a Mirage deployed.
type settleBed struct {
	*testBed
	node   *faultNode
	direct *chain.Client // straight to the dev chain
	mirage common.Address
	poke   []byte
	sink   common.Address
}

func newSettleBed(t *testing.T) *settleBed {
	d, err := devnet.Start(context.Background(), devnet.Options{HTTPAddr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	node := newFaultNode(t, d.HTTPURL())
	c, err := chain.Dial(context.Background(), []string{node.srv.URL})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	direct, err := chain.NewFromRPC(context.Background(), d.RPC(), "embedded dev chain")
	require.NoError(t, err)
	t.Cleanup(direct.Close)
	b := &settleBed{testBed: &testBed{t: t, dev: d, chain: c}, node: node, direct: direct, sink: common.HexToAddress("0x00000000000000000000000000000000005e77e5")}
	var mabi abi.ABI
	b.mirage, mabi = b.deploy("Mirage")
	b.poke, err = mabi.Pack("poke")
	require.NoError(t, err)
	return b
}

// engineWith is an engine on the fault node with s as its signer and large
// caps.
func (b *settleBed) engineWith(s signer.Signer) *Engine {
	big100 := new(big.Int).Mul(big.NewInt(100), big.NewInt(1e18))
	limit := func() map[common.Address]*big.Int {
		return map[common.Address]*big.Int{policy.NativeAsset: big100, b.dev.Contracts.USDT: big.NewInt(1e15)}
	}
	return New(Deps{Chain: b.chain, Signer: s, Address: signer.DevAddress, Gate: gate.New(time.Minute, 8, nil),
		Limits: caps.Limits{PerTx: limit(), PerSession: limit(), PerDay: limit()}, Capped: true,
		Recorder: &memRecorder{now: time.Now}, ReceiptTimeout: 20 * time.Second})
}

// wallet is what the wallet holds on chain: ETH and USDT.
func (b *settleBed) wallet() caps.Spend {
	return caps.Spend{policy.NativeAsset: b.balance(signer.DevAddress), b.dev.Contracts.USDT: b.usdtOf(signer.DevAddress)}
}

// used is what the engine's session window counts, per asset.
func used(e *Engine, assets ...common.Address) caps.Spend {
	out := caps.Spend{}
	for _, a := range assets {
		for _, u := range e.Ledger().Usage(a) {
			if u.Window == caps.PerSession {
				out[a] = new(big.Int).Set(u.Used)
			}
		}
	}
	return out
}

// leg kinds of a test plan.
const (
	legUSDT = iota // a USDT transfer to the sink
	legETH         // ETH to the sink
	legPoke        // Mirage.poke: passes a simulation, fails for real
)

// planOf builds and issues a traced plan of the given legs.
func (b *settleBed) planOf(e *Engine, kinds []int, amounts []int64) (string, []byte, *Refusal) {
	p := &Plan{}
	for i, k := range kinds {
		call := chain.Call{From: signer.DevAddress}
		switch k {
		case legUSDT:
			call.To, call.Data = b.dev.Contracts.USDT, chain.TransferData(b.sink, big.NewInt(amounts[i]))
		case legETH:
			call.To, call.Value = b.sink, big.NewInt(amounts[i])
		case legPoke:
			call.To, call.Data = b.mirage, b.poke
		}
		p.Legs = append(p.Legs, Leg{Label: "leg " + strconv.Itoa(i), Call: call})
	}
	if _, ref := e.BuildTraced(context.Background(), p); ref != nil {
		return "", nil, ref
	}
	canonical := []byte(fmt.Sprintf("plan %d %v %v", time.Now().UnixNano(), kinds, amounts))
	token, _, ref := e.Issue("wallet_call", canonical, p)
	require.Nil(b.t, ref)
	return token, canonical, nil
}

// failure kinds, at one leg.
const (
	failNone    = "none"
	failSign    = "sign refused"      // the signer fails: nothing sent for that leg
	failSim     = "simulation revert" // the leg is Mirage.poke: refused before signing (a later leg)
	failRefuse  = "broadcast refused" // the node refuses it and never had it
	failRevert  = "on-chain revert"   // the leg is Mirage.poke and the node lets it through
	failTimeout = "receipt timeout"   // the node swallows it: pending
	failCancel  = "request cancelled" // the client goes away once it is broadcast
	failLost    = "answer lost"       // the node takes the waiting broadcast, its answer is lost: unknown, followed up
)

// try runs one plan of kinds with failure at leg at, and checks the
// invariant: the caps count what moved.
func (b *settleBed) try(t *testing.T, kinds []int, amounts []int64, failure string, at int) Status {
	t.Helper()
	b.node.reset()
	fs := &failingSigner{Signer: signer.Dev(), fails: map[int]bool{}}
	e := b.engineWith(fs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch failure {
	case failSign:
		fs.fails[at] = true
	case failSim, failRevert:
		kinds[at] = legPoke
		if failure == failRevert {
			b.node.passTo = b.mirage
		}
	case failRefuse:
		b.node.refuse[at] = true
	case failTimeout:
		b.node.swallow[at] = true
		e.receiptTimeout = 400 * time.Millisecond // the receipt never comes: pending after this wait
	case failCancel:
		b.node.onSend[at] = cancel
	case failLost:
		b.node.lose[at] = true
	}
	token, canonical, ref := b.planOf(e, kinds, amounts)
	require.Nil(t, ref, "preview of %v", kinds)
	before, usedBefore := b.wallet(), used(e, policy.NativeAsset, b.dev.Contracts.USDT)
	out, ref := e.Confirm(ctx, TokenMode{}, token, "wallet_call", canonical)
	status := Status("refused")
	if out != nil {
		status = out.Status
	}
	if status == StatusPending {
		b.node.release(b.dev, b.direct)
		// Its receipt is found later (as by the next start or confirm):
		// a reservation of one transaction then settles to what moved.
		_, err := e.Reconcile(context.Background())
		require.NoError(t, err)
		if len(kinds) == 1 {
			status = "pending, then found"
		}
	}
	after, usedAfter := b.wallet(), used(e, policy.NativeAsset, b.dev.Contracts.USDT)
	for _, a := range []common.Address{policy.NativeAsset, b.dev.Contracts.USDT} {
		left := new(big.Int).Sub(before[a], after[a])
		counted := new(big.Int).Sub(usedAfter[a], usedBefore[a])
		if status == StatusPending {
			require.True(t, counted.Cmp(left) >= 0, "%v failing %q at leg %d: pending counts %s of asset %s, %s left", kinds, failure, at, counted, a.Hex(), left)
			continue
		}
		require.Equal(t, left.String(), counted.String(), "%v failing %q at leg %d (%s, refusal %v): what the caps count of %s equals what left", kinds, failure, at, status, ref, a.Hex())
	}
	return status
}

// Every stop branch of a three-leg plan, at every leg.
func TestEveryStopBranchSettlesWhatMoved(t *testing.T) {
	b := newSettleBed(t)
	want := map[string][]Status{
		failNone:    {StatusConfirmed, StatusConfirmed, StatusConfirmed},
		failSign:    {"refused", StatusIncomplete, StatusIncomplete},
		failSim:     {StatusReverted, StatusIncomplete, StatusIncomplete}, // leg 0 has no pre-signing check of its own: it is sent and reverts
		failRefuse:  {"refused", StatusIncomplete, StatusIncomplete},
		failRevert:  {StatusReverted, StatusIncomplete, StatusIncomplete},
		failTimeout: {"pending, then found", StatusPending, StatusPending},
		failCancel:  {StatusConfirmed, StatusConfirmed, StatusConfirmed},
		failLost:    {StatusConfirmed, StatusConfirmed, StatusConfirmed}, // the lookup after the lost answer finds it: sent, then its receipt
	}
	for _, failure := range []string{failNone, failSign, failSim, failRefuse, failRevert, failTimeout, failCancel, failLost} {
		for at := 0; at < 3; at++ {
			t.Run(fmt.Sprintf("%s at leg %d", failure, at), func(t *testing.T) {
				kinds := []int{legUSDT, legETH, legUSDT}
				if failure == failTimeout && at == 0 {
					kinds = kinds[:1] // a plan of one transaction settles once its receipt turns up
				}
				got := b.try(t, kinds, []int64{1_000_000, 1e14, 2_000_000}, failure, at)
				require.Equal(t, want[failure][at], got)
			})
		}
	}
}

// Random plans of one to three legs with a random failure at a random leg:
// the invariant holds for every one. WALLETGATE_RANDOM_PLANS sets how many
// (default 1000).
func TestRandomPlansSettleWhatMoved(t *testing.T) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("WALLETGATE_RANDOM_PLANS")); err == nil {
		n = v
	}
	if testing.Short() {
		n = 50
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d, %d plans", seed, n)
	rng := rand.New(rand.NewSource(seed))
	b := newSettleBed(t)
	failures := []string{failNone, failSign, failSim, failRefuse, failRevert, failTimeout, failCancel, failLost}
	seen := map[Status]int{}
	for i := 0; i < n; i++ {
		legs := 1 + rng.Intn(3)
		kinds, amounts := make([]int, legs), make([]int64, legs)
		for k := range kinds {
			kinds[k] = rng.Intn(2)
			if kinds[k] == legUSDT {
				amounts[k] = 1 + rng.Int63n(3_000_000)
			} else {
				amounts[k] = 1 + rng.Int63n(1e14)
			}
		}
		failure, at := failures[rng.Intn(len(failures))], rng.Intn(legs)
		seen[b.try(t, kinds, amounts, failure, at)]++
		if t.Failed() {
			t.Fatalf("plan %d (seed %d) broke the invariant", i, seed)
		}
	}
	t.Logf("outcomes: %v", seen)
}

// A later leg's pre-signing bound counts from that leg's start: on a chain
// whose confirmations take longer than the bound, both legs of a plan are
// sent and confirmed (the bound once ran from the confirm's start, and the
// second leg was refused as too slow after the first had landed).
func TestLaterLegHasItsOwnBound(t *testing.T) {
	b := newSettleBed(t)
	// Blocks come from another account every 300 ms.
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "other.key")
	require.NoError(t, os.WriteFile(path, []byte(hexutil.Encode(crypto.FromECDSA(key))), 0o600))
	other, err := signer.FromKeyFile(path)
	require.NoError(t, err)
	addr := other.Address()
	_, err = b.dev.SendAsDev(context.Background(), &addr, big.NewInt(1e18), nil, 21000)
	require.NoError(t, err)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
			if _, err := b.dev.SendAs(context.Background(), other, &addr, big.NewInt(1), nil, 21000); err != nil {
				t.Logf("block maker: %v", err)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })

	e := b.engineWith(signer.Dev())
	e.confirmations, e.receiptTimeout = 8, 60*time.Second
	e.bounds.Confirm = time.Second // far less than one leg's wait for 8 confirmations (seven blocks, 2 s or more), enough to sign on a loaded machine
	token, canonical, ref := b.planOf(e, []int{legUSDT, legUSDT}, []int64{1_000_000, 2_000_000})
	require.Nil(t, ref)
	before := b.usdtOf(b.sink)
	start := time.Now()
	out, ref := e.Confirm(context.Background(), TokenMode{}, token, "wallet_call", canonical)
	require.Nil(t, ref)
	require.Equal(t, StatusConfirmed, out.Status, "legs: %+v", out.Legs)
	require.Len(t, out.Legs, 2)
	t.Logf("the confirm took %s, legs in blocks %d and %d", time.Since(start), out.Legs[0].Block, out.Legs[1].Block)
	require.Equal(t, new(big.Int).Add(before, big.NewInt(3_000_000)), b.usdtOf(b.sink))
}
