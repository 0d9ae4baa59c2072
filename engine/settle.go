package engine

// Measured settlement: what moved is what counts. Rules of this file:
//
//   - After each included leg, the wallet's balances of every asset the plan
//     can touch (ETH, the assets of its bound, the tokens its receipt logs,
//     the contracts it calls) are read just before and at the leg's block;
//     the difference is what the leg moved (ETH net of the fee it paid),
//     never less than what its receipt's logs show leaving.
//   - The caps settle to the fees, plus every measured outflow, plus the
//     exposures the plan leaves — for a complete plan and a partial one
//     alike, in settleMeasured and nowhere else.
//   - More out than the plan's bound, or less in, is effect_mismatch.
//   - A balance that cannot be read, or a block with another of the
//     wallet's transactions in it (whose differences are not this leg's
//     alone), counts the larger of the logs and the bound: unknown never
//     settles lower.

import (
	"context"
	"fmt"
	"math/big"
	"sort"

	"github.com/ethereum/go-ethereum/common"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/policy"
)

// Bound is what the plan's preview showed it doing to the wallet: for an
// effects-bound plan its simulated changes; otherwise what its legs send
// as value, its expected effects from the wallet, and MinIn.
func (p *Plan) Bound(wallet common.Address) Changes {
	if p.Traced != nil {
		return *p.Traced
	}
	b := Changes{Out: caps.Spend{}, In: caps.Spend{}}
	if v := p.Value(); v.Sign() > 0 {
		b.Out[policy.NativeAsset] = v
	}
	for _, ef := range p.Effects {
		if !ef.Asset.Native && ef.From == wallet {
			addTo(b.Out, ef.Asset.Address, ef.Amount)
		}
	}
	for a, v := range p.MinIn {
		b.In[a] = new(big.Int).Set(v)
	}
	return b
}

// addTo adds v to m[a].
func addTo(m caps.Spend, a common.Address, v *big.Int) {
	if cur, ok := m[a]; ok {
		cur.Add(cur, v)
	} else {
		m[a] = new(big.Int).Set(v)
	}
}

// atLeast raises m[a] to v.
func atLeast(m caps.Spend, a common.Address, v *big.Int) {
	if cur, ok := m[a]; !ok || cur.Cmp(v) < 0 {
		m[a] = new(big.Int).Set(v)
	}
}

// moved is what a run's included legs moved, measured.
type moved struct {
	out, in    caps.Spend // per asset; ETH without fees
	unmeasured map[common.Address]bool
}

func newMoved() moved {
	return moved{out: caps.Spend{}, in: caps.Spend{}, unmeasured: map[common.Address]bool{}}
}

// watchedTokens are the tokens a plan's legs are measured on from before
// they are sent: the assets of its bound and the contracts its legs call.
// Their balances ride along the confirm's state read and each receipt
// lookup, so measuring costs no round trip of its own.
func watchedTokens(p *Plan, bound Changes) []common.Address {
	seen := map[common.Address]bool{policy.NativeAsset: true}
	out := []common.Address{}
	add := func(a common.Address) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, a := range sortedKeys(bound.Out) {
		add(a)
	}
	for _, a := range sortedKeys(bound.In) {
		add(a)
	}
	for _, l := range p.Legs {
		add(l.Call.To)
	}
	return out
}

// balanceViews read owner's balance of each token.
func balanceViews(owner common.Address, tokens []common.Address) []*chain.View {
	out := make([]*chain.View, len(tokens))
	for i, t := range tokens {
		out[i] = &chain.View{To: t, Data: chain.BalanceOfData(owner)}
	}
	return out
}

// snapshotOf is the wallet as the confirm's state read saw it.
func snapshotOf(st chain.SendState, tokens []common.Address, views []*chain.View) *chain.Snapshot {
	s := &chain.Snapshot{Block: st.Head.Number, Nonce: st.Mined, ETH: st.ETH, Tokens: map[common.Address]*big.Int{}}
	for i, v := range views {
		if v.Err != nil || len(v.Return) != 32 {
			continue
		}
		if n, err := chain.DecodeUint256(v.Return); err == nil {
			s.Tokens[tokens[i]] = n
		}
	}
	return s
}

// measuredIn is what arrived of each asset that was measured.
func (m moved) measuredIn() caps.Spend {
	out := caps.Spend{}
	for a, v := range m.in {
		if !m.unmeasured[a] {
			out[a] = new(big.Int).Set(v)
		}
	}
	return out
}

// tracked are the tokens to measure a leg on: the watched ones, and those
// its receipt logs moving to or from the wallet.
func (r *run) tracked(info *chain.TxInfo) []common.Address {
	seen := map[common.Address]bool{}
	out := append([]common.Address{}, r.watch...)
	for _, t := range out {
		seen[t] = true
	}
	for _, t := range info.Transfers {
		if (t.From == r.e.address || t.To == r.e.address) && !seen[t.Token] {
			seen[t.Token] = true
			out = append(out, t.Token)
		}
	}
	return out
}

// snapshots are the wallet just before and at leg info's block from what
// was read anyway — the state before it was sent (or the last leg's
// receipt) and its own receipt lookup — when those are exactly the blocks
// around it and hold every token; ok is false otherwise.
func (r *run) snapshots(info *chain.TxInfo, tokens []common.Address) (chain.Balances, bool) {
	if r.before == nil || info.AtHead == nil || r.before.Block+1 != info.Block || info.AtHead.Block != info.Block {
		return chain.Balances{}, false
	}
	b := chain.Balances{Before: *r.before, At: *info.AtHead}
	for _, t := range tokens {
		_, ok0 := b.Before.Tokens[t]
		_, ok1 := b.At.Tokens[t]
		switch {
		case ok0 != ok1:
			return chain.Balances{}, false
		case !ok0:
			watched := false
			for _, w := range r.watch {
				watched = watched || w == t
			}
			if !watched {
				return chain.Balances{}, false // found in the logs: never read before
			}
			b.Unreadable = append(b.Unreadable, t)
		}
	}
	return b, true
}

// measure reads what the included leg info moved and adds it to r.moved.
// It runs detached from the request: a leg that landed is measured whatever
// the client does.
func (r *run) measure(ctx context.Context, info *chain.TxInfo) {
	e := r.e
	logged := receiptChanges(e.address, []*chain.TxInfo{info})
	tokens := r.tracked(info)
	bal, ok := r.snapshots(info, tokens)
	var err error
	if !ok {
		bal, err = e.chain.BalancesAround(context.WithoutCancel(ctx), e.address, tokens, info.Block)
	}
	r.before = nil
	if err == nil {
		at := bal.At
		r.before = &at // the next leg's "before", when it lands in the next block
	}
	if err == nil && bal.OwnTxs() != 1 {
		// Another transaction of the wallet's in the same block (a
		// concurrent confirm): the differences are not this one's alone.
		err = fmt.Errorf("the wallet sent %d transactions in block %d", bal.OwnTxs(), info.Block)
	}
	if err != nil {
		e.log.Warn("what an included transaction moved could not be measured; its logs and the preview count instead", "tx", info.Hash.Hex(), "err", Inert(err.Error(), 200))
		r.moved.unmeasured[policy.NativeAsset] = true
		for _, t := range tokens {
			r.moved.unmeasured[t] = true
		}
		for a, v := range logged {
			addTo(r.moved.out, a, v)
		}
		return
	}
	for _, t := range bal.Unreadable {
		r.moved.unmeasured[t] = true
		if v, ok := logged[t]; ok {
			addTo(r.moved.out, t, v)
		}
	}
	// ETH: the change net of the fee this transaction paid.
	net := new(big.Int).Sub(bal.At.ETH, bal.Before.ETH)
	net.Add(net, info.Fee())
	r.account(policy.NativeAsset, net, logged[policy.NativeAsset])
	for _, t := range tokens {
		v0, ok0 := bal.Before.Tokens[t]
		v1, ok1 := bal.At.Tokens[t]
		if ok0 && ok1 {
			r.account(t, new(big.Int).Sub(v1, v0), logged[t])
		}
	}
}

// account adds one asset's measured net change to r.moved; an outflow is
// never counted below floor (what the logs show leaving).
func (r *run) account(a common.Address, net, floor *big.Int) {
	out := new(big.Int)
	if net.Sign() < 0 {
		out.Neg(net)
	} else if net.Sign() > 0 {
		addTo(r.moved.in, a, net)
	}
	if floor != nil && out.Cmp(floor) < 0 {
		out.Set(floor)
	}
	if out.Sign() > 0 {
		addTo(r.moved.out, a, out)
	}
}

// beyondBound says how what moved exceeds the plan's bound: more out of an
// asset than previewed, or less in. Empty when it does not.
func (r *run) beyondBound() []string {
	e, b := r.e, r.bound
	var why []string
	for a, v := range r.moved.out {
		was, ok := b.Out[a]
		if ok && v.Cmp(was) <= 0 {
			continue
		}
		as := e.asset(a)
		limit := "nothing"
		if ok {
			limit = as.Format(was) + " " + as.Marked()
		}
		why = append(why, fmt.Sprintf("%s %s left the wallet, the preview showed %s", as.Format(v), as.Marked(), limit))
	}
	for a, want := range b.In {
		if want.Sign() == 0 || r.moved.unmeasured[a] {
			continue
		}
		got := r.moved.in[a]
		if got == nil {
			got = new(big.Int)
		}
		if got.Cmp(want) < 0 {
			as := e.asset(a)
			why = append(why, fmt.Sprintf("%s %s arrived in the wallet, the preview showed %s", as.Format(got), as.Marked(), as.Format(want)))
		}
	}
	sort.Strings(why)
	return why
}

// settleMeasured ends the reservation at what moved: the fees of every
// included leg, every measured outflow (raised to the bound where a
// balance could not be read), and the exposures the plan leaves. standing
// says that an earlier leg's approval may still stand (a partial plan
// whose undo did not complete): the plan's reserved tokens then stay
// counted as exposures.
func (r *run) settleMeasured(standing bool) {
	actual := caps.Spend{policy.NativeAsset: new(big.Int).Set(r.fees)}
	out := caps.Spend{}
	for a, v := range r.moved.out {
		addTo(out, a, v)
	}
	for a, v := range r.bound.Out {
		if r.moved.unmeasured[a] {
			atLeast(out, a, v)
		}
	}
	for a, v := range out {
		addTo(actual, a, v)
	}
	for p, v := range r.bound.Exposure {
		addTo(actual, p.Token, v)
	}
	if standing {
		for a, v := range r.p.Spend {
			if a != policy.NativeAsset {
				atLeast(actual, a, v)
			}
		}
	}
	r.settle(actual)
}

// changes lists what moved, per asset, beside the bound: ETH first, then
// tokens by address.
func (r *run) changes() []AssetChange {
	assets := caps.Spend{}
	for _, m := range []caps.Spend{r.moved.out, r.moved.in, r.bound.Out, r.bound.In} {
		for a := range m {
			assets[a] = new(big.Int)
		}
	}
	zero := func(v *big.Int) *big.Int {
		if v == nil {
			return new(big.Int)
		}
		return new(big.Int).Set(v)
	}
	out := []AssetChange{}
	for _, a := range sortedKeys(assets) {
		out = append(out, AssetChange{Asset: a, Out: zero(r.moved.out[a]), In: zero(r.moved.in[a]), PreviewOut: zero(r.bound.Out[a]), PreviewIn: zero(r.bound.In[a]),
			Measured: !r.moved.unmeasured[a]})
	}
	return out
}

// sortedKeys is ETH first, then tokens by address.
func sortedKeys(m caps.Spend) []common.Address {
	var out []common.Address
	for a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i] == policy.NativeAsset) != (out[j] == policy.NativeAsset) {
			return out[i] == policy.NativeAsset
		}
		return out[i].Cmp(out[j]) < 0
	})
	return out
}

// journalReceipt records the receipt of t, found after its confirm had
// answered (a follow-up, a start's recovery, in any session or process),
// and, in the same locked step, settles its reservation when t was all that
// was signed under it and what it moved could be measured: what the
// receipt's block shows moving, never below the logs. A reservation of
// several transactions, or one whose movement cannot be measured, stays
// counted as reserved (conservatively); one that a live run of this
// process holds is that run's to settle; one already ended is left as it
// is. The session that answered the confirm pending takes the recorded
// settlement into its session window (adopt).
func (e *Engine) journalReceipt(ctx context.Context, t *txState, info *chain.TxInfo) error {
	id := t.Reservation
	var reserved records.CapEntry
	settleable := false
	if err := e.rec.View(func(live *records.Live) error {
		var ok bool
		reserved, ok = live.Reserved(id)
		_, ended := live.Corrected(id)
		settleable = ok && !ended && live.SignedPer[id] == 1
		return nil
	}); err != nil {
		return err
	}
	var actual caps.Spend
	if settleable && !e.held(id) {
		actual = e.measureReceipt(ctx, reserved, info)
	}
	if actual != nil {
		// The reserved USD stays counted: a receipt found later has no
		// prices of its own.
		spend, err := DecodeSpend(reserved.Change)
		if err != nil {
			return err
		}
		actual = e.settleUSD(actual, nil, spend)
	}
	var recorded map[string]string
	var released map[string]map[string]string
	err := e.rec.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
		r := receiptOf(info)
		r.Tx = t.Tx
		var err error
		if released, err = e.appendReceiptLocked(live, appendRecord, r); err != nil {
			return err
		}
		if actual == nil || e.held(id) {
			return nil
		}
		res, err := DecodeSpend(reserved.Change)
		if err != nil {
			return err
		}
		delta := caps.Spend{}
		for a, v := range res {
			delta[a] = new(big.Int).Neg(v)
		}
		for a, v := range actual {
			addTo(delta, a, v)
		}
		for a, v := range delta {
			if v.Sign() == 0 {
				delete(delta, a)
			}
		}
		recorded, _, err = records.EndReservation(live, appendRecord, id, reserved.At, EncodeSpend(delta), "")
		return err
	})
	e.adoptAll(released)
	if err == nil {
		e.adopt(id, recorded)
	}
	return err
}

// measureReceipt is what an included transaction moved, for its
// reservation's settlement: its fee, and for a successful one the wallet's
// measured outflows of ETH and of each token the reservation names. nil
// when that cannot be measured (it then stays counted as reserved).
func (e *Engine) measureReceipt(ctx context.Context, reserved records.CapEntry, info *chain.TxInfo) caps.Spend {
	actual := caps.Spend{policy.NativeAsset: info.Fee()}
	if info.Status != 1 {
		return actual
	}
	spend, err := DecodeSpend(reserved.Change)
	if err != nil {
		return nil
	}
	var tokens []common.Address
	for a := range spend {
		if a != policy.NativeAsset && a != policy.USDAsset {
			tokens = append(tokens, a)
		}
	}
	sort.Slice(tokens, func(i, j int) bool { return tokens[i].Cmp(tokens[j]) < 0 })
	bal, err := e.chain.BalancesAround(ctx, e.address, tokens, info.Block)
	if err != nil || bal.OwnTxs() != 1 || len(bal.Unreadable) > 0 {
		return nil
	}
	logged := receiptChanges(e.address, []*chain.TxInfo{info})
	m := &run{e: e, moved: newMoved()}
	ethNet := new(big.Int).Sub(bal.At.ETH, bal.Before.ETH)
	m.account(policy.NativeAsset, ethNet.Add(ethNet, info.Fee()), logged[policy.NativeAsset])
	for _, tok := range tokens {
		m.account(tok, new(big.Int).Sub(bal.At.Tokens[tok], bal.Before.Tokens[tok]), logged[tok])
	}
	for a, v := range m.moved.out {
		addTo(actual, a, v)
	}
	return actual
}
