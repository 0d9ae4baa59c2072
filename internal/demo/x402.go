package demo

// The demo's signature part: an EIP-2612 permit and an x402 payment in the
// dev chain's USDC, end to end. Rules of this file: the other party — the
// permit's spender, the x402 resource server and its facilitator — is the
// dev facilitator account (signer.DevFacilitator), never the wallet; the
// resource server listens on 127.0.0.1 only, for the demo's own requests;
// every "it moved" the demo prints is read back from the chain first, and a
// mismatch ends the demo with an error.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/internal/app"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/testdata"
	"github.com/walletgate/walletgate/tools/x402"
)

// demoPayee is paid by the demo's x402 resource.
var demoPayee = common.HexToAddress("0x00000000000000000000000000000000000d3e31")

// demoPrice is what the demo's resource costs: 1 USDC (6 decimals).
var demoPrice = big.NewInt(1_000_000)

// demoParty is the other side of the demo's signatures: it holds the dev
// facilitator key and sends its own transactions to the dev chain.
type demoParty struct {
	c     *chain.Client
	key   signer.Signer
	usdc  common.Address
	token abi.ABI
}

func newDemoParty(c *chain.Client) (*demoParty, error) {
	usdc, ok := policy.TokenBySymbol(app.DevChainID, "USDC")
	if !ok {
		return nil, errors.New("demo: the dev chain has no USDC in the known-token table")
	}
	j, _, err := testdata.Contract("PermitToken")
	if err != nil {
		return nil, err
	}
	parsed, err := abi.JSON(strings.NewReader(j))
	if err != nil {
		return nil, err
	}
	return &demoParty{c: c, key: signer.DevFacilitator(), usdc: usdc.Address, token: parsed}, nil
}

// send sends a call to the USDC contract from the party and waits for its
// successful receipt.
func (d *demoParty) send(ctx context.Context, method string, args ...any) (common.Hash, error) {
	data, err := d.token.Pack(method, args...)
	if err != nil {
		return common.Hash{}, err
	}
	call := chain.Call{From: d.key.Address(), To: d.usdc, Data: data}
	st, gas, _, _, err := d.c.Prepare(ctx, call, d.usdc)
	if err != nil {
		return common.Hash{}, fmt.Errorf("%s: %w", method, err)
	}
	id := d.c.ChainID()
	tx, err := d.key.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: id, Nonce: st.Nonce, GasTipCap: st.Tip, GasFeeCap: st.MaxFee(),
		Gas: gas + gas/2, To: &d.usdc, Data: data}), id)
	if err != nil {
		return common.Hash{}, err
	}
	if err := d.c.SendRaw(ctx, tx); err != nil {
		return common.Hash{}, fmt.Errorf("%s: %w", method, err)
	}
	info := d.c.WaitOwn(ctx, tx.Hash(), d.key.Address(), 30*time.Second, func(i *chain.TxInfo) bool { return i != nil && i.Mined })
	switch {
	case info == nil || !info.Mined:
		return tx.Hash(), fmt.Errorf("%s: transaction %s not mined", method, tx.Hash().Hex())
	case info.Status != types.ReceiptStatusSuccessful:
		return tx.Hash(), fmt.Errorf("%s: transaction %s reverted", method, tx.Hash().Hex())
	}
	return tx.Hash(), nil
}

// read calls a view of the USDC contract and returns its one uint256.
func (d *demoParty) read(ctx context.Context, method string, args ...any) (*big.Int, error) {
	data, err := d.token.Pack(method, args...)
	if err != nil {
		return nil, err
	}
	out, err := d.c.Simulate(ctx, chain.Call{From: d.key.Address(), To: d.usdc, Data: data})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	vals, err := d.token.Unpack(method, out)
	if err != nil || len(vals) != 1 {
		return nil, fmt.Errorf("%s: bad answer %x", method, out)
	}
	n, ok := vals[0].(*big.Int)
	if !ok {
		return nil, fmt.Errorf("%s: bad answer %x", method, out)
	}
	return n, nil
}

// demoPermit signs an EIP-2612 permit of 10 USDC for the party through
// wallet_sign_typed_data, then lets the party use it on chain.
func (p *demoPrinter) demoPermit(d *demoParty) {
	if p.err != nil {
		return
	}
	nonce, err := d.read(p.ctx, "nonces", signer.DevAddress)
	if err != nil {
		p.err = err
		return
	}
	field := func(n, t string) map[string]any { return map[string]any{"name": n, "type": t} }
	spender := d.key.Address()
	typed := map[string]any{
		"types": map[string]any{
			"EIP712Domain": []any{field("name", "string"), field("version", "string"), field("chainId", "uint256"), field("verifyingContract", "address")},
			"Permit":       []any{field("owner", "address"), field("spender", "address"), field("value", "uint256"), field("nonce", "uint256"), field("deadline", "uint256")},
		},
		"primaryType": "Permit",
		"domain":      map[string]any{"name": "USD Coin", "version": "2", "chainId": app.DevChainID, "verifyingContract": d.usdc.Hex()},
		"message": map[string]any{"owner": signer.DevAddress.Hex(), "spender": spender.Hex(), "value": "10000000", "nonce": nonce.String(),
			"deadline": fmt.Sprint(time.Now().Add(10 * time.Minute).Unix())},
	}
	args := map[string]any{"typed_data": typed}
	preview := p.call("A dapp asks for an EIP-2612 permit: 10 USDC for "+spender.Hex()+" (a signature, no transaction; the preview decodes it and counts it against the USDC caps)", "wallet_sign_typed_data", args)
	token, _ := preview["confirm_token"].(string)
	args["confirm"] = token
	signed := p.call("The person agrees: the same call plus confirm signs it (nothing is sent)", "wallet_sign_typed_data", args)
	if p.err != nil {
		return
	}
	sig, err := hexutil.Decode(fmt.Sprint(signed["signature"]))
	if err != nil || len(sig) != 65 {
		p.err = fmt.Errorf("demo: wallet_sign_typed_data returned no signature: %v", signed)
		return
	}
	deadline, _ := new(big.Int).SetString(fmt.Sprint(typed["message"].(map[string]any)["deadline"]), 10)
	var r, s [32]byte
	copy(r[:], sig[:32])
	copy(s[:], sig[32:64])
	hash, err := d.send(p.ctx, "permit", signer.DevAddress, spender, big.NewInt(10_000_000), deadline, sig[64], r, s)
	if err != nil {
		p.err = fmt.Errorf("demo: the spender could not use the permit: %w", err)
		return
	}
	got, err := d.read(p.ctx, "allowance", signer.DevAddress, spender)
	if err != nil || got.Cmp(big.NewInt(10_000_000)) != 0 {
		p.err = fmt.Errorf("demo: after the permit the allowance is %v (%v), not 10 USDC", got, err)
		return
	}
	fmt.Fprintf(p.w, "\n── The spender uses it: permit(…) submitted by the spender %s in transaction %s, from its own account\n", spender.Hex(), hash.Hex())
	p.call("The wallet's allowance to the spender, read on chain", "wallet_allowance", map[string]any{"token": "USDC", "spender": spender.Hex()})
}

// demoResource is an x402 resource server on 127.0.0.1: 402 with a
// PAYMENT-REQUIRED requirement until a request carries PAYMENT-SIGNATURE,
// whose EIP-3009 authorization it settles on chain through its facilitator
// (the party) before it serves the resource.
type demoResource struct {
	party   *demoParty
	ln      net.Listener
	srv     *http.Server
	settled chan common.Hash // the facilitator's transaction, once
}

// serveDemoResource serves the resource on ln (a 127.0.0.1 listener,
// opened before walletgate is wired so its host can be pinned).
func serveDemoResource(ln net.Listener, party *demoParty) *demoResource {
	r := &demoResource{party: party, ln: ln, settled: make(chan common.Hash, 1)}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 5 * time.Second}
	go r.srv.Serve(ln)
	return r
}

func (r *demoResource) host() string { return r.ln.Addr().String() }
func (r *demoResource) url() string  { return "http://" + r.host() + "/report" }
func (r *demoResource) close()       { r.srv.Close() }

// requirement is the resource's x402 v2 PaymentRequired.
func (r *demoResource) requirement() map[string]any {
	return map[string]any{"x402Version": 2, "error": "PAYMENT-SIGNATURE header is required",
		"resource": map[string]any{"url": r.url(), "description": "walletgate demo report", "mimeType": "application/json"},
		"accepts": []any{map[string]any{"scheme": "exact", "network": x402.Network(app.DevChainID), "asset": r.party.usdc.Hex(),
			"amount": demoPrice.String(), "payTo": demoPayee.Hex(), "maxTimeoutSeconds": 120,
			"extra": map[string]any{"name": "USD Coin", "version": "2"}}}}
}

func (r *demoResource) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/report" {
		http.NotFound(w, req)
		return
	}
	header := req.Header.Get(x402.HeaderSignature)
	if header == "" {
		body, _ := json.Marshal(r.requirement())
		w.Header().Set(x402.HeaderRequired, base64.StdEncoding.EncodeToString(body))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write(body)
		return
	}
	hash, err := r.settle(req.Context(), header)
	if err != nil {
		http.Error(w, "payment not settled: "+err.Error(), http.StatusPaymentRequired)
		return
	}
	select {
	case r.settled <- hash:
	default:
	}
	resp, _ := json.Marshal(map[string]any{"success": true, "transaction": hash.Hex(), "network": x402.Network(app.DevChainID), "payer": signer.DevAddress.Hex()})
	w.Header().Set(x402.HeaderResponse, base64.StdEncoding.EncodeToString(resp))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"report":"the dev chain is up; this answer cost 1 USDC"}`)
}

// settle checks a PAYMENT-SIGNATURE pays this resource's price to its payee
// in its asset and submits its authorization from the facilitator.
func (r *demoResource) settle(ctx context.Context, header string) (common.Hash, error) {
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		return common.Hash{}, errors.New("not base64")
	}
	var pl x402.Payload
	if err := json.Unmarshal(raw, &pl); err != nil {
		return common.Hash{}, errors.New("not a payment payload")
	}
	a := pl.Payload.Authorization
	asset, _ := pl.Accepted["asset"].(string)
	if pl.X402Version != x402.Version || !strings.EqualFold(asset, r.party.usdc.Hex()) || !strings.EqualFold(a.To, demoPayee.Hex()) || a.Value != demoPrice.String() {
		return common.Hash{}, errors.New("it does not pay this resource's price to its payee")
	}
	sig, err := hexutil.Decode(pl.Payload.Signature)
	if err != nil || len(sig) != 65 {
		return common.Hash{}, errors.New("bad signature")
	}
	nonce, err := hexutil.Decode(a.Nonce)
	if err != nil || len(nonce) != 32 {
		return common.Hash{}, errors.New("bad nonce")
	}
	num := func(s string) *big.Int { n, _ := new(big.Int).SetString(s, 10); return n }
	after, before := num(a.ValidAfter), num(a.ValidBefore)
	if after == nil || before == nil || !common.IsHexAddress(a.From) {
		return common.Hash{}, errors.New("bad authorization")
	}
	var rr, ss, nn [32]byte
	copy(rr[:], sig[:32])
	copy(ss[:], sig[32:64])
	copy(nn[:], nonce)
	return r.party.send(ctx, "transferWithAuthorization", common.HexToAddress(a.From), demoPayee, demoPrice, after, before, nn, sig[64], rr, ss)
}

// demoX402 pays the resource through wallet_pay_x402, as an x402 client
// does: ask, get 402, preview, confirm, retry with PAYMENT-SIGNATURE.
func (p *demoPrinter) demoX402(res *demoResource) {
	if p.err != nil {
		return
	}
	client := &http.Client{Timeout: 30 * time.Second}
	get := func(header string) (*http.Response, []byte, error) {
		req, err := http.NewRequestWithContext(p.ctx, http.MethodGet, res.url(), nil)
		if err != nil {
			return nil, nil, err
		}
		if header != "" {
			req.Header.Set(x402.HeaderSignature, header)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp, body, err
	}
	resp, _, err := get("")
	if err != nil {
		p.err = err
		return
	}
	raw, err := base64.StdEncoding.DecodeString(resp.Header.Get(x402.HeaderRequired))
	var required map[string]any
	if err == nil {
		err = json.Unmarshal(raw, &required)
	}
	if resp.StatusCode != http.StatusPaymentRequired || err != nil {
		p.err = fmt.Errorf("demo: the resource answered %s without a requirement (%v)", resp.Status, err)
		return
	}
	fmt.Fprintf(p.w, "\n── An HTTP resource on this machine wants 1 USDC (x402)\n▶ GET %s\n  → 402 Payment Required, PAYMENT-REQUIRED (decoded): %s\n", res.url(), raw)
	args := map[string]any{"payment_required": required}
	preview := p.call("The assistant hands the requirement to walletgate: a preview (its payee is pinned: WALLETGATE_ALLOW_PAY_TO="+res.host()+"="+demoPayee.Hex()+")", "wallet_pay_x402", args)
	token, _ := preview["confirm_token"].(string)
	args["confirm"] = token
	paid := p.call("The person agrees: walletgate signs the authorization (nothing is sent)", "wallet_pay_x402", args)
	if p.err != nil {
		return
	}
	header, _ := paid["payment_signature"].(string)
	if header == "" {
		p.err = fmt.Errorf("demo: wallet_pay_x402 returned no PAYMENT-SIGNATURE: %v", paid)
		return
	}
	before, err := res.party.read(p.ctx, "balanceOf", demoPayee)
	if err != nil {
		p.err = err
		return
	}
	resp, body, err := get(header)
	if err != nil {
		p.err = err
		return
	}
	if resp.StatusCode != http.StatusOK {
		p.err = fmt.Errorf("demo: the paid request was answered %s: %s", resp.Status, body)
		return
	}
	var hash common.Hash
	select {
	case hash = <-res.settled:
	default:
		p.err = errors.New("demo: the resource served without settling")
		return
	}
	fmt.Fprintf(p.w, "\n── The request again, with the payment\n▶ GET %s with PAYMENT-SIGNATURE: <payment_signature>\n  → 200 OK: %s\n  The resource's facilitator %s settled it first: transferWithAuthorization in transaction %s, from its own account.\n",
		res.url(), body, res.party.key.Address().Hex(), hash.Hex())
	p.call("Independently: did that transaction pay the payee 1 USDC?", "wallet_verify_tx", map[string]any{
		"tx": hash.Hex(), "expected_to": demoPayee.Hex(), "expected_amount": "1", "asset": "USDC"})
	after, err := res.party.read(p.ctx, "balanceOf", demoPayee)
	if err != nil {
		p.err = err
		return
	}
	if got := new(big.Int).Sub(after, before); got.Cmp(demoPrice) != 0 {
		p.err = fmt.Errorf("demo: the payee received %s base units of USDC, not %s", got, demoPrice)
		return
	}
	fmt.Fprintf(p.w, "  Read back from the chain: the payee now holds %s USDC on chain (it held %s before).\n",
		policy.FormatAmount(after, 6), policy.FormatAmount(before, 6))
}
