package engine

// Signature plans: an EIP-712 signature that can move money without a
// transaction (a permit, a transfer authorization). Rules of this file:
//
// the confirm of a signature plan runs the same head as a transaction's —
// consume → policy → ask — then re-reads what the signature depends on
// (the verifying contract's code, the permit nonce or authorization still
// unused, its deadline still ahead and within the bound) → releases the
// reservations of earlier signatures that can no longer be used → reserves
// the caps → signs → journals the signature (digest, kind, amounts) → and
// only then returns it. A signature that cannot be journaled is discarded
// and its reservation released: walletgate never hands out a signature it
// has no record of.
//
// A signature's reservation stays counted after the confirm: a permit's
// value is exposure of its token and a transfer authorization's value is a
// spend, until the signature is seen used on chain (then it is settled to
// that amount for good) or its deadline / validBefore has passed unused
// (then it can never be used, and is released). That sweep runs at every
// signature preview and confirm and at start (Reconcile's caller).

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/journal/records"
)

// Kinds of signature.
const (
	SigPermit        = "permit"                 // EIP-2612 Permit: Counterparty may move Amount of Token
	SigTransferAuth  = "transfer_authorization" // EIP-3009 TransferWithAuthorization: Amount of Token to Counterparty
	SigReceiveAuth   = "receive_authorization"  // EIP-3009 ReceiveWithAuthorization: the same, submitted by the payee only
	SigUnknownTyped  = records.SignatureUnknown // anything else, signed only with the operator's opt-in; no cap applies
	StatusSigned     = Status("signed")         // a confirm of a signature plan: signed and journaled, nothing sent
	KindSignature    = records.KindSignature    // a typed-data signature, journaled before it is returned
	KindSignatureEnd = records.KindSignatureEnd // a signature seen used on chain, or past its deadline unused
)

// Refusal codes of signature plans.
const (
	CodeSignatureUsed    = "SIGNATURE_STALE"     // the nonce it signs was used, or its deadline passed
	CodeNotJournaled     = "SIGNATURE_DISCARDED" // signed, but the record could not be written: discarded
	CodeVerifyingNoCode  = "TYPED_DATA_NO_CONTRACT"
	CodeValidityTooLong  = "TYPED_DATA_DEADLINE"
	CodeSignatureFailure = "SIGN_FAILED"
)

// SignaturePlan is what a signature plan signs and what it grants. For the
// known kinds, Token, Owner, Counterparty, Amount and the nonce are decoded
// from Data's message by the write kind; the plan's Spend is {Token: Amount}.
type SignaturePlan struct {
	Kind         string
	Data         apitypes.TypedData // passed to the signer as received (numbers as decimal strings)
	Token        common.Address     // the verifying contract of a known kind
	Owner        common.Address     // whose tokens: the wallet
	Counterparty common.Address     // the permit's spender, or the authorization's payee
	Amount       *big.Int
	PermitNonce  *big.Int // SigPermit: the nonces(owner) value it signs
	AuthNonce    [32]byte // SigTransferAuth, SigReceiveAuth
	Until        time.Time
	// MaxValidity bounds Until from now, again at confirm.
	MaxValidity time.Duration
}

// Signed is a confirm's outcome for a signature plan.
type Signed struct {
	Kind      string
	Digest    common.Hash
	Signature []byte // r‖s‖v, v 27 or 28
	Until     time.Time
	Data      apitypes.TypedData // exactly what was signed: the previewed plan's
}

// SignatureRecord and SignatureEndRecord are package journal's types.
type (
	SignatureRecord    = records.Signature
	SignatureEndRecord = records.SignatureEnd
)

// CheckSignature re-reads what a signature plan depends on: the verifying
// contract has code, the nonce it signs is unused, and its deadline is
// ahead of the chain's clock and within the bound of now. The write kind
// calls it at preview (through PreviewSignature); the confirm calls it
// again. The sweep of the signatures still open (SweepSignatures) rides in
// the same round trip: one, whatever their number.
func (e *Engine) CheckSignature(ctx context.Context, sp *SignaturePlan) *Refusal {
	now := e.now()
	sweep, swept := e.sweepViews()
	if sp.Kind == SigUnknownTyped {
		va := sp.Data.Domain.VerifyingContract
		if va == "" {
			if len(sweep) > 0 {
				if st, err := e.chain.StateAndViews(ctx, e.address, sweep...); err == nil {
					swept(st)
				}
			}
			return nil
		}
		v := chain.CodeView(common.HexToAddress(va))
		st, err := e.chain.StateAndViews(ctx, e.address, append(sweep, v)...)
		if err != nil {
			return RPCRefusal(err)
		}
		swept(st)
		if v.Err != nil {
			return RPCRefusal(v.Err)
		}
		if len(v.Return) == 0 {
			return Refuse(CodeVerifyingNoCode, "the domain's verifyingContract %s has no code on this chain: whatever verifies this signature is not here, and a signature for it could be replayed where it is. Nothing was signed.", va)
		}
		return nil
	}
	if sp.MaxValidity > 0 && sp.Until.Sub(now) > sp.MaxValidity {
		return Refuse(CodeValidityTooLong, "it stays valid until %s, more than %s from now. Nothing was signed. Ask for a deadline at most %s ahead; the operator sets the bound.", sp.Until.UTC().Format(time.RFC3339), sp.MaxValidity, sp.MaxValidity)
	}
	var v *chain.View
	if sp.Kind == SigPermit {
		v = chain.NoncesView(sp.Token, sp.Owner)
	} else {
		v = chain.AuthorizationStateView(sp.Token, sp.Owner, sp.AuthNonce)
	}
	st, err := e.chain.StateAndViews(ctx, sp.Owner, append(sweep, v)...)
	if err != nil {
		return RPCRefusal(err)
	}
	swept(st)
	if v.Err != nil {
		return Refuse(CodeVerifyingNoCode, "the token %s did not answer %s (%s): it does not implement this kind of signature, so nothing would verify it. Nothing was signed.", sp.Token.Hex(), viewName(sp.Kind), Inert(v.Err.Error(), 200))
	}
	if chainNow := time.Unix(int64(st.Head.Time), 0); !sp.Until.After(chainNow) {
		return Refuse(CodeSignatureUsed, "its deadline %s has already passed on chain (the latest block is at %s). Nothing was signed. Ask for a fresh one.", sp.Until.UTC().Format(time.RFC3339), chainNow.UTC().Format(time.RFC3339))
	}
	used, why, err := signatureUsed(sp, v.Return)
	if err != nil {
		return RPCRefusal(err)
	}
	if used {
		return Refuse(CodeSignatureUsed, "%s. A signature for it would never verify. Nothing was signed. Ask for a fresh one.", why)
	}
	return nil
}

func viewName(kind string) string {
	if kind == SigPermit {
		return "nonces(owner)"
	}
	return "authorizationState(authorizer, nonce)"
}

// signatureUsed reads a view's answer: whether the signature's nonce was
// used (for a permit: nonces(owner) is no longer the one it signs).
func signatureUsed(sp *SignaturePlan, ret []byte) (bool, string, error) {
	if sp.Kind == SigPermit {
		n, err := chain.DecodeUint256(ret)
		if err != nil {
			return false, "", err
		}
		if n.Cmp(sp.PermitNonce) != 0 {
			return true, fmt.Sprintf("the permit signs nonce %s, but the token's nonces(owner) is %s", sp.PermitNonce, n), nil
		}
		return false, "", nil
	}
	used, err := chain.DecodeBool(ret)
	if err != nil {
		return false, "", err
	}
	return used, fmt.Sprintf("the authorization nonce %s was already used", hexutil.Encode(sp.AuthNonce[:])), nil
}

// PreviewSignature is the preview's check of a signature plan on chain
// (CheckSignature, with the sweep of earlier signatures in its round trip)
// and its caps check.
func (e *Engine) PreviewSignature(ctx context.Context, p *Plan) *Refusal {
	if ref := e.recipientsAllowed(p, nil); ref != nil {
		return ref
	}
	if ref := e.CheckSignature(ctx, p.Sig); ref != nil {
		return ref
	}
	if ref := e.priceSignature(ctx, p, false); ref != nil {
		return ref
	}
	if err := e.ledger.Check(p.Spend); err != nil {
		return e.CapsRefusal(err)
	}
	return nil
}

// confirmSignature is Confirm's tail for a signature plan: the token is
// consumed, the policy passed and the confirmation mode approved.
func (e *Engine) confirmSignature(ctx context.Context, p *Plan, by string) (*Outcome, *Refusal) {
	sp := p.Sig
	pre, cancel := context.WithTimeout(ctx, e.bounds.Confirm)
	defer cancel()
	if ref := e.CheckSignature(pre, sp); ref != nil { // the sweep rides along
		return nil, ref
	}
	if ref := e.priceSignature(pre, p, true); ref != nil {
		return nil, ref
	}
	res, ref := e.reserveSignature(p.Spend, by)
	if ref != nil {
		return nil, ref
	}
	// The reservation is this confirm's until its signature is journaled
	// and kept: no sweep of another confirm or session ends it meanwhile.
	defer e.hold(res.ID())()
	sig, err := e.signer.SignTypedData(sp.Data, e.chainID)
	if err != nil {
		left := "the caps are as before"
		if rerr := res.Release(); rerr != nil {
			left = "the journal could not record the release of the caps (" + Inert(rerr.Error(), 200) + "), so they stay counted as reserved"
		}
		return nil, Refuse(CodeSignatureFailure, "the typed data could not be signed (%s). Nothing was signed; %s.", Inert(err.Error(), 300), left)
	}
	rec := SignatureRecord{V: records.Version, Tool: p.Tool, Reservation: res.ID(), Kind: sp.Kind, Digest: sig.Digest.Hex(), Until: sp.Until.UTC(), Spend: EncodeSpend(p.Spend)}
	if sp.Kind != SigUnknownTyped {
		rec.Token, rec.Owner, rec.Counterparty, rec.Amount = sp.Token.Hex(), sp.Owner.Hex(), sp.Counterparty.Hex(), sp.Amount.String()
		rec.Nonce = hexutil.Encode(sp.AuthNonce[:])
		if sp.Kind == SigPermit {
			rec.Nonce = sp.PermitNonce.String()
		}
	}
	if err := e.Record(KindSignature, rec); err != nil {
		// Not journaled, so not returned: the only copy is dropped here.
		left := "the caps are as before"
		if rerr := res.Release(); rerr != nil {
			left = "the caps stay counted as reserved (their release could not be recorded either)"
		}
		ref := e.LedgerUnavailable(err)
		ref.Code = CodeNotJournaled
		ref.Message = fmt.Sprintf("the signature (digest %s) was made but could not be journaled, so it was discarded and never returned; %s. %s", sig.Digest.Hex(), left, ref.Reason())
		return nil, ref
	}
	var unrecorded []string
	if sp.Kind != SigUnknownTyped {
		e.sigs.add(res)
	} else if err := res.Settle(nil); err != nil { // nothing is counted for an uncapped signature
		unrecorded = append(unrecorded, unrecordedWhy("the settlement of the caps", err))
	}
	e.log.Info("signed typed data", "tool", p.Tool, "kind", sp.Kind, "digest", sig.Digest.Hex())
	return &Outcome{Status: StatusSigned, Effects: []Moved{}, Fee: new(big.Int), Unrecorded: unrecorded,
		Signed: &Signed{Kind: sp.Kind, Digest: sig.Digest, Signature: sig.Sig, Until: sp.Until, Data: sp.Data}}, nil
}

// reserveSignature reserves a signature's spend. It holds reserveMu so that
// no transaction's nonce request rides on it (a signature takes no nonce).
func (e *Engine) reserveSignature(spend caps.Spend, by string) (*caps.Reservation, *Refusal) {
	if ref := e.usdGuard(spend); ref != nil {
		return nil, ref
	}
	e.reserveMu.Lock()
	defer e.reserveMu.Unlock()
	e.store.tier = e.tierFor(by)
	res, err := e.ledger.Reserve(spend)
	e.store.tier = nil
	if ref, ok := tierRefusal(err); ok {
		return nil, ref
	}
	if err != nil {
		return nil, e.CapsRefusal(err)
	}
	return res, nil
}

// SweepSignatures ends the reservations of journaled signatures that are
// used on chain (settled: the amount stays counted) or past their deadline
// unused (released: they can never be used). A signature whose state cannot
// be read stays counted. It returns a line per signature it ended.
func (e *Engine) SweepSignatures(ctx context.Context) []string {
	views, swept := e.sweepViews()
	if len(views) == 0 {
		return nil
	}
	st, err := e.chain.StateAndViews(ctx, e.address, views...)
	if err != nil {
		return nil
	}
	return swept(st)
}

// sweepViews are the reads of every open signature's on-chain state, to
// ride in any state read, and what ends them once that read is done (with
// the state it read: its head's time is the chain's clock).
func (e *Engine) sweepViews() ([]*chain.View, func(chain.SendState) []string) {
	none := func(chain.SendState) []string { return nil }
	if e.recErr != nil {
		return nil, none
	}
	var open []SignatureRecord
	var ended map[string]map[string]string
	err := e.rec.View(func(live *records.Live) error {
		open = append(open, live.Signatures...)
		ended = e.sigs.endedIn(live)
		return nil
	})
	// Signatures of this session that another ended: the session window
	// takes what the records hold (outside the records' lock: the ledger's
	// lock is always taken first).
	for id, done := range ended {
		e.sigs.adopt(id, done)
	}
	if err != nil || len(open) == 0 {
		return nil, none
	}
	// Every open signature's on-chain state in one round trip, whatever
	// their number.
	type check struct {
		r  SignatureRecord
		sp *SignaturePlan
		v  *chain.View
	}
	var checks []check
	var views []*chain.View
	for _, r := range open {
		sp, ok := sigPlanOf(r)
		if !ok {
			continue
		}
		v := chain.AuthorizationStateView(sp.Token, sp.Owner, sp.AuthNonce)
		if sp.Kind == SigPermit {
			v = chain.NoncesView(sp.Token, sp.Owner)
		}
		checks = append(checks, check{r: r, sp: sp, v: v})
		views = append(views, v)
	}
	if len(checks) == 0 {
		return nil, none
	}
	return views, func(st chain.SendState) []string {
		var lines []string
		for _, c := range checks {
			r, sp, v := c.r, c.sp, c.v
			if v.Err != nil {
				continue
			}
			used, _, err := signatureUsed(sp, v.Return)
			if err != nil {
				continue
			}
			if sp.Kind == SigPermit && used {
				// nonces(owner) moved past it: this permit or another with the
				// same nonce was used; either way this one never will be. Used
				// means the allowance it set is on chain: it stays counted.
				n, _ := chain.DecodeUint256(v.Return)
				used = n.Cmp(sp.PermitNonce) > 0
			}
			chainNow := time.Unix(int64(st.Head.Time), 0)
			switch {
			case used:
				if ended, err := e.endSignature(r, true); err == nil && ended {
					lines = append(lines, fmt.Sprintf("signature %s (%s) was used on chain: its %s stays counted", r.Digest, r.Kind, r.Amount))
				}
			case !sp.Until.After(chainNow):
				if ended, err := e.endSignature(r, false); err == nil && ended {
					lines = append(lines, fmt.Sprintf("signature %s (%s) expired unused: its reservation is released", r.Digest, r.Kind))
				}
			}
		}
		return lines
	}
}

// endSignature ends journaled signature r, in one locked step: it checks
// that r is still open, records its end, and ends its reservation — settled
// at what it reserved when used (the amount stays counted), released when it
// expired unused, unless a live confirm of this process holds it. Sweeps
// racing each other, in one process or several, end it once: ended is false
// for every sweep but the one that did. A failed write ends nothing.
func (e *Engine) endSignature(r SignatureRecord, used bool) (ended bool, err error) {
	end := "expired"
	if used {
		end = "used"
	}
	var recorded map[string]string
	err = e.rec.Update(func(live *records.Live, appendRecord records.AppendFunc) error {
		open := false
		for _, s := range live.Signatures {
			open = open || s.Digest == r.Digest
		}
		if !open {
			// Another sweep ended it: this session adopts what it recorded.
			recorded, _ = live.Corrected(r.Reservation)
			return nil
		}
		if _, err := appendRecord(KindSignatureEnd, SignatureEndRecord{V: records.Version, Digest: r.Digest, Reservation: r.Reservation, End: end}); err != nil {
			return err
		}
		ended = true
		if r.Reservation == "" || e.held(r.Reservation) {
			return nil
		}
		var err error
		if used {
			recorded, _, err = records.EndReservation(live, appendRecord, r.Reservation, time.Time{}, nil, "")
		} else {
			recorded, _, err = records.ReleaseReservation(live, appendRecord, r.Reservation, "")
		}
		return err
	})
	if err != nil {
		e.log.Warn("a signature's end could not be journaled; its reservation stays counted", "digest", r.Digest, "err", Inert(err.Error(), 200))
		return false, err
	}
	if recorded != nil {
		e.sigs.adopt(r.Reservation, recorded)
	}
	return ended, nil
}

// sigPlanOf reads back what a signature record needs for the sweep.
func sigPlanOf(r SignatureRecord) (*SignaturePlan, bool) {
	if !common.IsHexAddress(r.Token) || !common.IsHexAddress(r.Owner) {
		return nil, false
	}
	sp := &SignaturePlan{Kind: r.Kind, Token: common.HexToAddress(r.Token), Owner: common.HexToAddress(r.Owner), Until: r.Until}
	if r.Kind == SigPermit {
		n, ok := new(big.Int).SetString(r.Nonce, 10)
		if !ok {
			return nil, false
		}
		sp.PermitNonce = n
		return sp, true
	}
	b, err := hexutil.Decode(r.Nonce)
	if err != nil || len(b) != 32 {
		return nil, false
	}
	copy(sp.AuthNonce[:], b)
	return sp, true
}

// sigBook holds this process's open signature reservations, so that ending
// one also corrects the session window. The zero value is ready; it is safe
// for concurrent use.
type sigBook struct {
	mu   sync.Mutex
	open map[string]openSig
}

type openSig struct {
	res *caps.Reservation
}

func (b *sigBook) add(res *caps.Reservation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open == nil {
		b.open = map[string]openSig{}
	}
	b.open[res.ID()] = openSig{res: res}
}

// adopt ends this process's reservation id, if it holds it, with the
// correction the records hold.
func (b *sigBook) adopt(id string, recorded map[string]string) {
	b.mu.Lock()
	o, ok := b.open[id]
	delete(b.open, id)
	b.mu.Unlock()
	if !ok {
		return
	}
	s, err := DecodeSpend(recorded)
	if err != nil {
		return // stays counted in the session window: the larger amount
	}
	o.res.Adopt(s)
}

// endedIn is the correction live holds for each reservation this process
// holds that has ended, by id.
func (b *sigBook) endedIn(live *records.Live) map[string]map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out map[string]map[string]string
	for id := range b.open {
		if done, ok := live.Corrected(id); ok {
			if out == nil {
				out = map[string]map[string]string{}
			}
			out[id] = done
		}
	}
	return out
}
