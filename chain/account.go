package chain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// Head is a block walletgate read state at.
type Head struct {
	Number uint64
	Time   uint64 // unix seconds
	Hash   common.Hash
}

// TokenBalance is one token's balance and metadata. Err is set, and the rest
// is zero, when the address does not answer as an ERC-20 token.
type TokenBalance struct {
	TokenMeta
	Balance *big.Int
	Err     error
}

// Account is an address's state at one block.
type Account struct {
	Address    common.Address
	Head       Head
	ETH        *big.Int
	Nonce      uint64 // transactions sent (the latest-state nonce)
	IsContract bool
	Tokens     []TokenBalance
}

// metaCache remembers token metadata: a deployed token's decimals cannot
// change, and its name and symbol are display-only.
type metaCache struct {
	mu sync.Mutex
	m  map[common.Address]TokenMeta
}

func (mc *metaCache) get(a common.Address) (TokenMeta, bool) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	m, ok := mc.m[a]
	return m, ok
}

func (mc *metaCache) put(m TokenMeta) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.m == nil {
		mc.m = map[common.Address]TokenMeta{}
	}
	mc.m[m.Address] = m
}

// LatestHead reads the newest block's number, time and hash.
func (c *Client) LatestHead(ctx context.Context) (Head, error) {
	var h struct {
		Number hexutil.Uint64 `json:"number"`
		Time   hexutil.Uint64 `json:"timestamp"`
		Hash   common.Hash    `json:"hash"`
	}
	var raw json.RawMessage
	if err := c.call(ctx, &raw, "eth_getBlockByNumber", "latest", false); err != nil {
		return Head{}, err
	}
	if len(raw) == 0 || string(raw) == "null" {
		return Head{}, errors.New("eth_getBlockByNumber: node returned no latest block")
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return Head{}, fmt.Errorf("eth_getBlockByNumber: %w", err)
	}
	return Head{Number: uint64(h.Number), Time: uint64(h.Time), Hash: h.Hash}, nil
}

// Account reads an address's ETH balance, nonce, code presence and the given
// tokens' balances, all at one block: the latest head, then every read in one
// batched round trip.
func (c *Client) Account(ctx context.Context, addr common.Address, tokens []common.Address) (*Account, error) {
	head, err := c.LatestHead(ctx)
	if err != nil {
		return nil, err
	}
	block := hexutil.EncodeUint64(head.Number)

	var (
		bal   hexutil.Big
		nonce hexutil.Uint64
		code  hexutil.Bytes
	)
	elems := []rpc.BatchElem{
		{Method: "eth_getBalance", Args: []any{addr, block}, Result: &bal},
		{Method: "eth_getTransactionCount", Args: []any{addr, block}, Result: &nonce},
		{Method: "eth_getCode", Args: []any{addr, block}, Result: &code},
	}
	type tokenReads struct {
		balance, decimals, symbol, name hexutil.Bytes
		// indexes into elems; -1 when served from the cache
		iDec, iSym, iName int
		iBal              int
	}
	reads := make([]tokenReads, len(tokens))
	for i, t := range tokens {
		r := &reads[i]
		r.iBal = len(elems)
		elems = append(elems, callElem(t, pack("balanceOf", addr), block, &r.balance))
		if _, ok := c.meta.get(t); ok {
			r.iDec, r.iSym, r.iName = -1, -1, -1
			continue
		}
		r.iDec = len(elems)
		elems = append(elems, callElem(t, pack("decimals"), block, &r.decimals))
		r.iSym = len(elems)
		elems = append(elems, callElem(t, pack("symbol"), block, &r.symbol))
		r.iName = len(elems)
		elems = append(elems, callElem(t, pack("name"), block, &r.name))
	}
	if err := c.batch(ctx, elems); err != nil {
		return nil, err
	}
	for _, e := range elems[:3] {
		if e.Error != nil {
			return nil, e.Error
		}
	}
	acct := &Account{
		Address:    addr,
		Head:       head,
		ETH:        (*big.Int)(&bal),
		Nonce:      uint64(nonce),
		IsContract: len(code) > 0,
	}
	for i, t := range tokens {
		r := &reads[i]
		tb := TokenBalance{TokenMeta: TokenMeta{Address: t}}
		meta, cached := c.meta.get(t)
		if !cached {
			meta, err = metaFrom(t, elems, r.iDec, r.iSym, r.iName, r.decimals, r.symbol, r.name)
			if err == nil {
				c.meta.put(meta)
			}
		}
		if err == nil {
			err = elems[r.iBal].Error
		}
		var b *big.Int
		if err == nil {
			b, err = decodeUint256(r.balance)
			if err != nil {
				err = fmt.Errorf("balanceOf: %w", err)
			}
		}
		if err != nil {
			tb.Err = fmt.Errorf("%s does not answer as an ERC-20 token: %w", t.Hex(), err)
		} else {
			tb.TokenMeta, tb.Balance = meta, b
		}
		acct.Tokens = append(acct.Tokens, tb)
	}
	return acct, nil
}

// TokenMeta reads (or recalls) a token's decimals, symbol and name.
func (c *Client) TokenMeta(ctx context.Context, token common.Address) (TokenMeta, error) {
	if m, ok := c.meta.get(token); ok {
		return m, nil
	}
	var dec, sym, name hexutil.Bytes
	elems := []rpc.BatchElem{
		callElem(token, pack("decimals"), "latest", &dec),
		callElem(token, pack("symbol"), "latest", &sym),
		callElem(token, pack("name"), "latest", &name),
	}
	if err := c.batch(ctx, elems); err != nil {
		return TokenMeta{}, err
	}
	m, err := metaFrom(token, elems, 0, 1, 2, dec, sym, name)
	if err != nil {
		return TokenMeta{}, fmt.Errorf("%s does not answer as an ERC-20 token: %w", token.Hex(), err)
	}
	c.meta.put(m)
	return m, nil
}

// metaFrom decodes the decimals, symbol and name reads of a batch. Decimals
// are required; a missing name or symbol is tolerated and left empty.
func metaFrom(t common.Address, elems []rpc.BatchElem, iDec, iSym, iName int, dec, sym, name []byte) (TokenMeta, error) {
	m := TokenMeta{Address: t}
	if err := elems[iDec].Error; err != nil {
		return m, fmt.Errorf("decimals(): %w", err)
	}
	d, err := decodeDecimals(dec)
	if err != nil {
		return m, fmt.Errorf("decimals(): %w", err)
	}
	m.Decimals = d
	if elems[iSym].Error == nil {
		m.Symbol, _ = decodeText(sym)
	}
	if elems[iName].Error == nil {
		m.Name, _ = decodeText(name)
	}
	return m, nil
}

// callElem is an eth_call batch element.
func callElem(to common.Address, data hexutil.Bytes, block string, result *hexutil.Bytes) rpc.BatchElem {
	return rpc.BatchElem{
		Method: "eth_call",
		Args:   []any{map[string]any{"to": to, "data": data}, block},
		Result: result,
	}
}

// Code returns the contract code at addr (empty for an account without code).
func (c *Client) Code(ctx context.Context, addr common.Address) ([]byte, error) {
	var code hexutil.Bytes
	if err := c.call(ctx, &code, "eth_getCode", addr, "latest"); err != nil {
		return nil, err
	}
	return code, nil
}

// TokenBalancesAt reads token.balanceOf(owner) at each block, in one round trip.
func (c *Client) TokenBalancesAt(ctx context.Context, token, owner common.Address, blocks ...uint64) ([]*big.Int, error) {
	outs := make([]hexutil.Bytes, len(blocks))
	elems := make([]rpc.BatchElem, len(blocks))
	for i, b := range blocks {
		elems[i] = callElem(token, pack("balanceOf", owner), hexutil.EncodeUint64(b), &outs[i])
	}
	if err := c.batch(ctx, elems); err != nil {
		return nil, err
	}
	res := make([]*big.Int, len(blocks))
	for i := range elems {
		if elems[i].Error != nil {
			return nil, elems[i].Error
		}
		v, err := decodeUint256(outs[i])
		if err != nil {
			return nil, fmt.Errorf("balanceOf: %w", err)
		}
		res[i] = v
	}
	return res, nil
}

// Remember seeds the metadata cache with what walletgate already knows about
// a token (its known-token table), so that reading its balance needs no
// decimals/symbol/name calls.
func (c *Client) Remember(m TokenMeta) { c.meta.put(m) }

// Balances are an owner's balances just before and at one block: ETH, and
// each token that answered balanceOf (a target that is not a token, or
// refuses to say, is absent from Tokens).
type Balances struct {
	Block uint64
	// OwnTxs is how many transactions owner sent in the block (its nonce
	// at block less its nonce at block-1): with more than one, the
	// differences are theirs together.
	OwnTxs     uint64
	ETH        [2]*big.Int // before (block-1), at (block)
	Tokens     map[common.Address][2]*big.Int
	Unreadable []common.Address // asked for, and no balance came back
}

// BalancesAround reads owner's ETH balance, its nonce and its balanceOf on
// each token at block-1 and at block, in one round trip: what a transaction
// included in block changed, when it is the block's only one of owner's.
func (c *Client) BalancesAround(ctx context.Context, owner common.Address, tokens []common.Address, block uint64) (Balances, error) {
	if block == 0 {
		return Balances{}, fmt.Errorf("balances around block 0: no block before it")
	}
	at := [2]string{hexutil.EncodeUint64(block - 1), hexutil.EncodeUint64(block)}
	var eth [2]hexutil.Big
	var nonce [2]hexutil.Uint64
	outs := make([][2]hexutil.Bytes, len(tokens))
	elems := []rpc.BatchElem{
		{Method: "eth_getBalance", Args: []any{owner, at[0]}, Result: &eth[0]},
		{Method: "eth_getBalance", Args: []any{owner, at[1]}, Result: &eth[1]},
		{Method: "eth_getTransactionCount", Args: []any{owner, at[0]}, Result: &nonce[0]},
		{Method: "eth_getTransactionCount", Args: []any{owner, at[1]}, Result: &nonce[1]},
	}
	const fixed = 4
	for i, t := range tokens {
		for k := range at {
			elems = append(elems, callElem(t, pack("balanceOf", owner), at[k], &outs[i][k]))
		}
	}
	if err := c.batch(ctx, elems); err != nil {
		return Balances{}, err
	}
	for _, el := range elems[:fixed] {
		if el.Error != nil {
			return Balances{}, el.Error
		}
	}
	if nonce[1] < nonce[0] {
		return Balances{}, fmt.Errorf("balances around block %d: the node says the nonce fell (%d, then %d)", block, nonce[0], nonce[1])
	}
	b := Balances{Block: block, OwnTxs: uint64(nonce[1] - nonce[0]), ETH: [2]*big.Int{eth[0].ToInt(), eth[1].ToInt()}, Tokens: map[common.Address][2]*big.Int{}}
	for i, t := range tokens {
		var v [2]*big.Int
		ok := true
		for k := range at {
			if elems[fixed+2*i+k].Error != nil {
				ok = false
				break
			}
			n, err := decodeUint256(outs[i][k])
			if err != nil {
				ok = false
				break
			}
			v[k] = n
		}
		if ok {
			b.Tokens[t] = v
		} else {
			b.Unreadable = append(b.Unreadable, t)
		}
	}
	return b, nil
}
