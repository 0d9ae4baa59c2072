package engine

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// authPlan is a signature plan for an EIP-3009 authorization of amount of
// tok to to, valid for five minutes.
func authPlan(t *testing.T, tok, to common.Address, amount int64) *Plan {
	t.Helper()
	return authPlanUntil(t, tok, to, amount, time.Now().Add(5*time.Minute))
}

// authPlanUntil is authPlan valid until until, within three hours of now.
func authPlanUntil(t *testing.T, tok, to common.Address, amount int64, until time.Time) *Plan {
	t.Helper()
	var nonce [32]byte
	_, _ = rand.Read(nonce[:])
	raw := `{"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},{"name":"chainId","type":"uint256"},{"name":"verifyingContract","type":"address"}],
	 "TransferWithAuthorization":[{"name":"from","type":"address"},{"name":"to","type":"address"},{"name":"value","type":"uint256"},{"name":"validAfter","type":"uint256"},{"name":"validBefore","type":"uint256"},{"name":"nonce","type":"bytes32"}]},
	 "primaryType":"TransferWithAuthorization","domain":{"name":"T","version":"1","chainId":"1337","verifyingContract":"` + tok.Hex() + `"},
	 "message":{"from":"` + signer.DevAddress.Hex() + `","to":"` + to.Hex() + `","value":"` + big.NewInt(amount).String() + `","validAfter":"0","validBefore":"` + big.NewInt(until.Unix()).String() + `","nonce":"` + hexutil.Encode(nonce[:]) + `"}}`
	var td apitypes.TypedData
	require.NoError(t, json.Unmarshal([]byte(raw), &td))
	sp := &SignaturePlan{Kind: SigTransferAuth, Data: td, Token: tok, Owner: signer.DevAddress, Counterparty: to, Amount: big.NewInt(amount),
		AuthNonce: nonce, Until: time.Unix(until.Unix(), 0), MaxValidity: 3 * time.Hour}
	return &Plan{Sig: sp, Spend: caps.Spend{tok: big.NewInt(amount)}, Recipient: &to}
}

// A signature whose record cannot be written is never returned, and its
// reservation is released.
func TestSignatureNotJournaledIsDiscarded(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	tok, err := b.dev.Deploy(ctx, "PermitToken", "T", "T", "1", uint8(6), big.NewInt(1e9))
	require.NoError(t, err)
	rec := &failingRecorder{memRecorder: memRecorder{now: time.Now}, failKind: KindSignature}
	lim := func() map[common.Address]*big.Int {
		return map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18), tok: big.NewInt(100)}
	}
	e := New(Deps{Chain: b.chain, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Minute, 8, nil),
		Limits: caps.Limits{PerTx: lim(), PerSession: lim(), PerDay: lim()}, Capped: true, Recorder: rec})
	to := common.HexToAddress("0x00000000000000000000000000000000000e6e02")

	token, _, ref := e.Issue("wallet_sign_typed_data", []byte("a"), authPlan(t, tok, to, 60))
	require.Nil(t, ref)
	out, ref := e.Confirm(ctx, TokenMode{}, token, "wallet_sign_typed_data", []byte("a"))
	require.Nil(t, out)
	require.NotNil(t, ref)
	require.Equal(t, CodeNotJournaled, ref.Code)
	require.Contains(t, ref.Message, "discarded and never returned")

	// Released: another 60 of the 100 fits, and is signed and journaled.
	rec.failKind = ""
	token, _, ref = e.Issue("wallet_sign_typed_data", []byte("b"), authPlan(t, tok, to, 60))
	require.Nil(t, ref)
	out, ref = e.Confirm(ctx, TokenMode{}, token, "wallet_sign_typed_data", []byte("b"))
	require.Nil(t, ref)
	require.Equal(t, StatusSigned, out.Status)
	require.Len(t, out.Signed.Signature, 65)
	// And stays counted: 60 more would pass the cap.
	token, _, ref = e.Issue("wallet_sign_typed_data", []byte("c"), authPlan(t, tok, to, 60))
	require.Nil(t, ref)
	_, ref = e.Confirm(ctx, TokenMode{}, token, "wallet_sign_typed_data", []byte("c"))
	require.NotNil(t, ref)
	require.Equal(t, caps.CodeExceeded, ref.Code)
}

// The engine checks an x402 payment's payee again at confirm, whatever the
// preview did: a plan whose payee the operator's payees do not allow is
// refused, nothing signed, no cap used.
func TestAPaymentsPayeeIsCheckedAgainAtConfirm(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	tok, err := b.dev.Deploy(ctx, "PermitToken", "T", "T", "1", uint8(6), big.NewInt(1e9))
	require.NoError(t, err)
	lim := func() map[common.Address]*big.Int {
		return map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18), tok: big.NewInt(100)}
	}
	allowed := common.HexToAddress("0x00000000000000000000000000000000000a110e")
	payees := policy.PayeesAllowed{Pins: []policy.HostPin{{Host: "api.example.com", PayTo: allowed}}}
	e := New(Deps{Chain: b.chain, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Minute, 8, nil),
		Limits: caps.Limits{PerTx: lim(), PerSession: lim(), PerDay: lim()}, Capped: true, Recorder: &memRecorder{now: time.Now},
		Rules: &policy.WriteRules{Network: policy.LookupNetwork(1337), AllowPayTo: payees}})
	other := common.HexToAddress("0x00000000000000000000000000000000000e6e08")
	p := authPlan(t, tok, other, 60)
	p.Payment = &Payment{PayTo: other, Host: "api.example.com"}
	token, _, ref := e.Issue("wallet_pay_x402", []byte("pay"), p) // as if the preview had not checked
	require.Nil(t, ref)
	out, ref := e.Confirm(ctx, TokenMode{}, token, "wallet_pay_x402", []byte("pay"))
	require.Nil(t, out)
	require.NotNil(t, ref)
	require.Equal(t, CodePayeeNotAllowed, ref.Code)
	require.Contains(t, ref.Message, "pinned api.example.com to the payee "+allowed.Hex())
	require.Equal(t, "0", used(e, tok)[tok].String(), "no cap used")
}
