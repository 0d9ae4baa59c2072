package tools_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/testdata"
	"github.com/walletgate/walletgate/tools"
	"github.com/walletgate/walletgate/tools/confirm"
)

// sigEnv is a dev chain with a USDC-like PermitToken (6 decimals, 1000 of
// them the wallet's), a walletgate server whose caps for it are 50 per
// signature, 80 per session and 200 per day, its journal, and a second
// funded account (the spender or relayer) with its own key.
type sigEnv struct {
	*env
	tok     common.Address
	abi     abi.ABI
	dir     string
	spender signer.Signer
}

const permitTokenName, permitTokenVersion = "USD Coin (walletgate dev)", "2"

func newSigEnv(t *testing.T, mutate ...func(*tools.Deps)) *sigEnv {
	t.Helper()
	ctx := context.Background()
	d, err := devnet.Start(ctx, devnet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	tok, err := d.Deploy(ctx, "PermitToken", permitTokenName, "USDC", permitTokenVersion, uint8(6), big.NewInt(1000_000_000))
	require.NoError(t, err)
	abiJSON, _, err := testdata.Contract("PermitToken")
	require.NoError(t, err)
	parsed, err := abi.JSON(strings.NewReader(abiJSON))
	require.NoError(t, err)

	keyHex := hex.EncodeToString(crypto.Keccak256([]byte("walletgate test spender " + t.Name())))
	sp, err := signer.FromKeyFile(writeKey(t, keyHex))
	require.NoError(t, err)
	spAddr := sp.Address()
	_, err = d.SendAsDev(ctx, &spAddr, big.NewInt(1e18), nil, 21000)
	require.NoError(t, err)

	dir := filepath.Join(t.TempDir(), "state")
	caps := func(deps *tools.Deps) {
		entries := func(s string) []policy.CapEntry {
			l, err := policy.ParseCapList(s)
			require.NoError(t, err)
			return l
		}
		deps.Config.CapPerTx = entries("ETH=1," + tok.Hex() + "=50")
		deps.Config.CapPerSession = entries("ETH=5," + tok.Hex() + "=80")
		deps.Config.CapPerDay = entries("ETH=10," + tok.Hex() + "=200")
		deps.Caps, err = tools.ResolveCaps(ctx, deps.Chain, deps.Config, tools.DevCaps)
		require.NoError(t, err)
	}
	e := serverOn(t, d, append([]func(*tools.Deps){withJournal(t, dir, "sig", ""), caps}, mutate...)...)
	return &sigEnv{env: e, tok: tok, abi: parsed, dir: dir, spender: sp}
}

func writeKey(t *testing.T, keyHex string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(p, []byte(keyHex), 0o600))
	return p
}

// usdc is n whole tokens in base units.
func usdc(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1_000_000)) }

func domainTypes() []map[string]string {
	return []map[string]string{{"name": "name", "type": "string"}, {"name": "version", "type": "string"},
		{"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}}
}

func (e *sigEnv) domain(chainID int64) map[string]any {
	return map[string]any{"name": permitTokenName, "version": permitTokenVersion, "chainId": chainID, "verifyingContract": e.tok.Hex()}
}

// permit is an EIP-2612 Permit by owner for spender, as a dapp sends it.
func (e *sigEnv) permit(owner, spender common.Address, value *big.Int, nonce int64, deadline time.Time) map[string]any {
	return map[string]any{
		"types": map[string]any{"EIP712Domain": domainTypes(), "Permit": []map[string]string{
			{"name": "owner", "type": "address"}, {"name": "spender", "type": "address"}, {"name": "value", "type": "uint256"},
			{"name": "nonce", "type": "uint256"}, {"name": "deadline", "type": "uint256"}}},
		"primaryType": "Permit",
		"domain":      e.domain(signer.DevChainID),
		"message": map[string]any{"owner": owner.Hex(), "spender": spender.Hex(), "value": value.String(),
			"nonce": nonce, "deadline": deadline.Unix()},
	}
}

// authorization is an EIP-3009 TransferWithAuthorization with a fresh nonce.
func (e *sigEnv) authorization(from, to common.Address, value *big.Int, validBefore time.Time) (map[string]any, [32]byte) {
	var nonce [32]byte
	_, _ = rand.Read(nonce[:])
	return map[string]any{
		"types": map[string]any{"EIP712Domain": domainTypes(), "TransferWithAuthorization": []map[string]string{
			{"name": "from", "type": "address"}, {"name": "to", "type": "address"}, {"name": "value", "type": "uint256"},
			{"name": "validAfter", "type": "uint256"}, {"name": "validBefore", "type": "uint256"}, {"name": "nonce", "type": "bytes32"}}},
		"primaryType": "TransferWithAuthorization",
		"domain":      e.domain(signer.DevChainID),
		"message": map[string]any{"from": from.Hex(), "to": to.Hex(), "value": value.String(), "validAfter": "0",
			"validBefore": validBefore.Unix(), "nonce": hexutil.Encode(nonce[:])},
	}, nonce
}

type signedOut struct {
	Status    string `json:"status"`
	Kind      string `json:"kind"`
	Digest    string `json:"digest"`
	Signature string `json:"signature"`
	V         uint8  `json:"v"`
	R         string `json:"r"`
	S         string `json:"s"`
}

// sign previews and confirms typed data and returns the signature.
func (e *sigEnv) sign(td map[string]any) signedOut {
	e.t.Helper()
	args := map[string]any{"typed_data": td}
	p := e.preview("wallet_sign_typed_data", args)
	var out signedOut
	e.ok("wallet_sign_typed_data", mustJSON(with(args, p.ConfirmToken)), &out)
	require.Equal(e.t, "signed", out.Status)
	return out
}

// balance reads the token balance of a.
func (e *sigEnv) balance(a common.Address) *big.Int {
	e.t.Helper()
	return e.view("balanceOf", a)[0].(*big.Int)
}

func (e *sigEnv) view(method string, args ...any) []any {
	e.t.Helper()
	data, err := e.abi.Pack(method, args...)
	require.NoError(e.t, err)
	ret, err := e.dev.Client().CallContract(e.ctx, ethereum.CallMsg{To: &e.tok, Data: data}, nil)
	require.NoError(e.t, err)
	out, err := e.abi.Unpack(method, ret)
	require.NoError(e.t, err)
	return out
}

// submit sends a call to the token from the spender's own key and returns
// the receipt status.
func (e *sigEnv) submit(method string, args ...any) uint64 {
	e.t.Helper()
	data, err := e.abi.Pack(method, args...)
	require.NoError(e.t, err)
	rcpt, err := e.dev.SendAs(e.ctx, e.spender, &e.tok, nil, data, 300_000)
	if err != nil {
		return 0
	}
	return rcpt.Status
}

func rsv(t *testing.T, s signedOut) (uint8, [32]byte, [32]byte) {
	t.Helper()
	var r, ss [32]byte
	copy(r[:], hexutil.MustDecode(s.R))
	copy(ss[:], hexutil.MustDecode(s.S))
	return s.V, r, ss
}

// signatureRecords counts the journal's signature records.
func (e *sigEnv) signatureRecords() int {
	e.t.Helper()
	n := 0
	for _, r := range journalRecords(e.t, e.dir) {
		if r.Kind == engine.KindSignature {
			n++
		}
	}
	return n
}

func TestPermitSignedWithinCapsMovesExactlyThePermittedAmount(t *testing.T) {
	e := newSigEnv(t)
	wallet, spender := signer.DevAddress, e.spender.Address()
	value := usdc(30)
	deadline := time.Now().Add(30 * time.Minute)
	td := e.permit(wallet, spender, value, 0, deadline)

	p := e.preview("wallet_sign_typed_data", map[string]any{"typed_data": td})
	text := resultText(e.call("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": td})))
	require.Contains(t, text, "Permit "+spender.Hex()+" to move up to 30 USDC")
	require.NotEmpty(t, p.ConfirmToken)
	require.Zero(t, e.signatureRecords(), "a preview signs nothing")

	sig := e.sign(td)
	require.Equal(t, "permit", sig.Kind)
	require.Equal(t, 1, e.signatureRecords(), "the signature is journaled before it is returned")

	before := e.balance(wallet)
	v, r, s := rsv(t, sig)
	require.Equal(t, uint64(1), e.submit("permit", wallet, spender, value, big.NewInt(deadline.Unix()), v, r, s), "the token accepts walletgate's permit")
	require.Equal(t, value, e.view("allowance", wallet, spender)[0].(*big.Int))
	require.Equal(t, uint64(1), e.submit("transferFrom", wallet, spender, value), "the spender pulls exactly the permitted amount")
	require.Equal(t, uint64(0), e.submit("transferFrom", wallet, spender, big.NewInt(1)), "and not one base unit more")
	require.Equal(t, new(big.Int).Sub(before, value), e.balance(wallet))
	require.Equal(t, value, e.balance(spender))

	// The permit's 30 stay counted: 80 per session leaves 50, and 50 more
	// (at the per-signature cap) fits, 51 would not.
	e.refused("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": e.permit(wallet, spender, usdc(51), 1, deadline)}), "CAP_EXCEEDED")
	// A replay of the used permit is refused: its nonce is spent.
	e.refused("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": td}), engine.CodeSignatureUsed)
}

func TestTypedDataRefusedAndNothingSigned(t *testing.T) {
	e := newSigEnv(t)
	wallet, spender := signer.DevAddress, e.spender.Address()
	soon := time.Now().Add(30 * time.Minute)
	maxUint := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

	wrongChain := e.permit(wallet, spender, usdc(5), 0, soon)
	wrongChain["domain"] = e.domain(1)
	noChain := e.permit(wallet, spender, usdc(5), 0, soon)
	delete(noChain["domain"].(map[string]any), "chainId")
	noChain["types"].(map[string]any)["EIP712Domain"] = append(domainTypes()[:2], domainTypes()[3])
	hiddenDomainField := e.permit(wallet, spender, usdc(5), 0, soon)
	hiddenDomainField["types"].(map[string]any)["EIP712Domain"] = append(domainTypes()[:2], domainTypes()[3]) // chainId shown, not signed
	noDomainType := e.permit(wallet, spender, usdc(5), 0, soon)
	delete(noDomainType["types"].(map[string]any), "EIP712Domain")
	fakePermit := e.permit(wallet, spender, usdc(5), 0, soon)
	fakePermit["types"].(map[string]any)["Permit"] = []map[string]string{{"name": "owner", "type": "address"}, {"name": "spender", "type": "address"},
		{"name": "value", "type": "uint256"}, {"name": "nonce", "type": "uint256"}, {"name": "deadline", "type": "uint256"}, {"name": "extra", "type": "uint256"}}
	fakePermit["message"].(map[string]any)["extra"] = "1"
	mail := map[string]any{
		"types":       map[string]any{"EIP712Domain": domainTypes(), "Mail": []map[string]string{{"name": "contents", "type": "string"}}},
		"primaryType": "Mail", "domain": e.domain(signer.DevChainID), "message": map[string]any{"contents": "hello"},
	}
	permit2 := map[string]any{
		"types":       map[string]any{"EIP712Domain": domainTypes(), "PermitSingle": []map[string]string{{"name": "spender", "type": "address"}}},
		"primaryType": "PermitSingle", "domain": e.domain(signer.DevChainID), "message": map[string]any{"spender": spender.Hex()},
	}
	noCode := e.permit(wallet, spender, usdc(5), 0, soon)
	noCode["domain"].(map[string]any)["verifyingContract"] = "0x00000000000000000000000000000000000000f1"

	for _, tc := range []struct {
		name string
		td   map[string]any
		code string
	}{
		{"an unlimited permit", e.permit(wallet, spender, maxUint, 0, soon), tools.CodeTypedDataUnlimited},
		{"a permit over the per-signature cap", e.permit(wallet, spender, usdc(51), 0, soon), "CAP_EXCEEDED"},
		{"a permit valid for a day", e.permit(wallet, spender, usdc(5), 0, time.Now().Add(24*time.Hour)), tools.CodeTypedDataDeadline},
		{"a permit with a deadline that never ends", e.permit(wallet, spender, usdc(5), 0, time.Unix(1<<40, 0)), tools.CodeTypedDataDeadline},
		{"a permit for another owner", e.permit(spender, wallet, usdc(5), 0, soon), tools.CodeTypedDataOwner},
		{"a permit with a nonce not the token's", e.permit(wallet, spender, usdc(5), 7, soon), engine.CodeSignatureUsed},
		{"a domain for another chain", wrongChain, tools.CodeTypedDataWrongChain},
		{"a domain without a chain", noChain, tools.CodeTypedDataWrongChain},
		{"a domain field the type does not sign", hiddenDomainField, tools.CodeTypedDataInvalid},
		{"no EIP712Domain type", noDomainType, tools.CodeTypedDataInvalid},
		{"a Permit with extra fields", fakePermit, tools.CodeTypedDataUnknown},
		{"an unknown type without the opt-in", mail, tools.CodeTypedDataUnknown},
		{"Permit2, not decoded", permit2, tools.CodeTypedDataUnsupported},
		{"a verifying contract without code", noCode, "BAD_TOKEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.refused("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": tc.td}), tc.code)
		})
	}
	// The refusals say what was wrong, in walletgate's words (not only the
	// encoder's, which also refuses some of these).
	require.Contains(t, e.refused("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": hiddenDomainField}), tools.CodeTypedDataInvalid), "it would be shown and not signed")
	require.Contains(t, e.refused("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": e.permit(wallet, spender, usdc(5), 0, time.Now().Add(24*time.Hour))}), tools.CodeTypedDataDeadline), policy.EnvSignatureValidity)
	// Duplicate keys inside the typed data: shown one way, signed another.
	dup := `{"typed_data": {"types": {"EIP712Domain": [], "Mail": []}, "primaryType": "Mail", "domain": {"chainId": 1337, "chainID": 1}, "message": {}}}`
	e.refused("wallet_sign_typed_data", dup, tools.CodeBadArgument)
	frac := `{"typed_data": {"types": {}, "primaryType": "Mail", "domain": {"chainId": 1337.5}, "message": {}}}`
	e.refused("wallet_sign_typed_data", frac, tools.CodeBadArgument)
	require.Zero(t, e.signatureRecords(), "nothing was signed")
}

func TestUnknownTypedDataWithOptIn(t *testing.T) {
	e := newSigEnv(t, func(d *tools.Deps) { d.Config.AllowTypedDataAny = true })
	mail := map[string]any{
		"types":       map[string]any{"EIP712Domain": domainTypes(), "Mail": []map[string]string{{"name": "contents", "type": "string"}}},
		"primaryType": "Mail", "domain": e.domain(signer.DevChainID), "message": map[string]any{"contents": "hello \u202egnp.exe"},
	}
	text := resultText(e.call("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": mail})))
	require.Contains(t, text, "NO CAP APPLIES")
	require.NotContains(t, text, "\u202e", "untrusted text is shown inert")
	sig := e.sign(mail)
	require.Equal(t, "unknown", sig.Kind)
	require.Equal(t, 1, e.signatureRecords())
}

func TestTransferAuthorizationPaysExactlyAndSessionCapHolds(t *testing.T) {
	e := newSigEnv(t)
	wallet, payee := signer.DevAddress, common.HexToAddress("0x00000000000000000000000000000000000000a1")
	td, nonce := e.authorization(wallet, payee, usdc(50), time.Now().Add(10*time.Minute))
	sig := e.sign(td)
	require.Equal(t, "transfer_authorization", sig.Kind)
	v, r, s := rsv(t, sig)
	validBefore := big.NewInt(td["message"].(map[string]any)["validBefore"].(int64))
	require.Equal(t, uint64(1), e.submit("transferWithAuthorization", wallet, payee, usdc(50), big.NewInt(0), validBefore, nonce, v, r, s), "anyone may submit it: the relayer does")
	require.Equal(t, usdc(50), e.balance(payee))
	require.Equal(t, uint64(0), e.submit("transferWithAuthorization", wallet, payee, usdc(50), big.NewInt(0), validBefore, nonce, v, r, s), "a replay fails on chain")
	e.refused("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": td}), engine.CodeSignatureUsed)

	// 50 of the session's 80 are used: 40 more is past the session cap.
	second, _ := e.authorization(wallet, payee, usdc(40), time.Now().Add(10*time.Minute))
	e.refused("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": second}), "CAP_EXCEEDED")
}

func TestUnusedAuthorizationIsReleasedWhenItExpires(t *testing.T) {
	e := newSigEnv(t)
	wallet, payee := signer.DevAddress, common.HexToAddress("0x00000000000000000000000000000000000000a2")
	first, _ := e.authorization(wallet, payee, usdc(50), time.Now().Add(2*time.Minute))
	e.sign(first)
	second, _ := e.authorization(wallet, payee, usdc(40), time.Now().Add(10*time.Minute))
	e.refused("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": second}), "CAP_EXCEEDED")
	// Past the first one's validBefore on chain, unused: it can never be
	// used, so its 50 are released.
	require.NoError(t, e.dev.AdjustTime(3*time.Minute))
	e.sign(second)
}

func TestAnEarlierProcesssUnusedAuthorizationIsReleasedWhenItExpires(t *testing.T) {
	e := newSigEnv(t)
	wallet, payee := signer.DevAddress, common.HexToAddress("0x00000000000000000000000000000000000000a3")
	first, _ := e.authorization(wallet, payee, usdc(50), time.Now().Add(2*time.Minute))
	e.sign(first)

	// A second process on the same journal, whose per-day cap for the token
	// is 60: the first process's 50 count in its day window.
	later := &sigEnv{env: serverOn(t, e.dev, withJournal(t, e.dir, "later", ""), func(d *tools.Deps) {
		d.Config.CapPerTx, d.Config.CapPerSession = e.capsOf(t, "ETH=1,"+e.tok.Hex()+"=50"), e.capsOf(t, "ETH=5,"+e.tok.Hex()+"=80")
		d.Config.CapPerDay = e.capsOf(t, "ETH=10,"+e.tok.Hex()+"=60")
		var err error
		d.Caps, err = tools.ResolveCaps(context.Background(), d.Chain, d.Config, tools.DevCaps)
		require.NoError(t, err)
	}), tok: e.tok, abi: e.abi, dir: e.dir, spender: e.spender}
	second, _ := later.authorization(wallet, payee, usdc(40), time.Now().Add(10*time.Minute))
	later.refused("wallet_sign_typed_data", mustJSON(map[string]any{"typed_data": second}), "CAP_EXCEEDED")
	require.NoError(t, e.dev.AdjustTime(3*time.Minute))
	later.sign(second)
}

func (e *sigEnv) capsOf(t *testing.T, s string) []policy.CapEntry {
	l, err := policy.ParseCapList(s)
	require.NoError(t, err)
	return l
}

// In human mode, unknown typed data is signed only with the code the person
// got by approving it; the model's guesses sign nothing.
func TestUnknownTypedDataInHumanModeNeedsThePerson(t *testing.T) {
	hub := confirm.NewApprovals(nil, "")
	b := hub.Broker()
	e := newSigEnv(t, func(d *tools.Deps) {
		d.Config.AllowTypedDataAny, d.Config.Confirm, d.Approvals = true, "human", hub
	})
	mail := map[string]any{
		"types":       map[string]any{"EIP712Domain": domainTypes(), "Mail": []map[string]string{{"name": "contents", "type": "string"}}},
		"primaryType": "Mail", "domain": e.domain(signer.DevChainID), "message": map[string]any{"contents": "hello"},
	}
	args := map[string]any{"typed_data": mail}
	var p humanPreview
	text := e.ok("wallet_sign_typed_data", mustJSON(args), &p)
	require.Nil(t, p.ConfirmToken, "a human-mode preview carries no token")
	require.NotNil(t, p.Approval)
	v, ok := b.Get(p.Approval.ID)
	require.True(t, ok)
	for _, line := range []string{"UNKNOWN kind", "Message:   {contents: \"hello\"}", "NO CAP APPLIES to this signature"} {
		require.Contains(t, text, line)
		require.Contains(t, v.Display.Text, line, "the person sees every fact of the preview")
	}
	require.NotContains(t, v.Display.Text, "call wallet_sign_typed_data again", "but not what is addressed to the model")
	require.Contains(t, v.Display.Amounts[0].Rounded, "NO CAP APPLIES")
	for _, guess := range []string{p.Approval.ID, "123-456"} {
		res := e.call("wallet_sign_typed_data", mustJSON(with(args, guess)))
		require.True(t, res.IsError, guess)
	}
	require.Zero(t, e.signatureRecords(), "no guess signed anything")
	code, _, err := b.Approve(p.Approval.ID)
	require.NoError(t, err)
	var out signedOut
	e.ok("wallet_sign_typed_data", mustJSON(with(args, code)), &out)
	require.Equal(t, "signed", out.Status)
	require.Equal(t, 1, e.signatureRecords())
}
