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
	var raw json.RawMessage
	if err := c.call(ctx, &raw, "eth_getBlockByNumber", "latest", false); err != nil {
		return Head{}, err
	}
	head, err := decodeHead(raw)
	if err != nil {
		return Head{}, err
	}
	c.sawHead(head)
	return head, nil
}

// Account reads an address's ETH balance, nonce, code presence and the given
// tokens' balances, all at one block, in one round trip: a batch that reads
// the head block first, every value at "latest", and the head again last. A
// node serves a batch's elements in order (go-ethereum runs them one after
// the other), so when both heads are the same block every read between them
// was at it. When a block landed during the batch (the heads differ), the
// reads are made again pinned to the later head's number: a second round
// trip, only then.
//
// Why not Multicall3 or eth_simulateV1: neither can read a nonce (the EVM
// has no opcode for it) nor, through Multicall3, whether an address has
// code, so either would still need the same batch around it; this way needs
// no contract at a canonical address (nothing to deploy on a dev chain, no
// chain where it is missing) and no method a node may lack.
func (c *Client) Account(ctx context.Context, addr common.Address, tokens []common.Address) (*Account, error) {
	var first, last json.RawMessage
	elems := []rpc.BatchElem{{Method: "eth_getBlockByNumber", Args: []any{"latest", false}, Result: &first}}
	reads, decode := c.accountElems(addr, tokens, "latest")
	elems = append(elems, reads...)
	elems = append(elems, rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{"latest", false}, Result: &last})
	if err := c.batch(ctx, elems); err != nil {
		return nil, err
	}
	for _, i := range []int{0, len(elems) - 1} {
		if elems[i].Error != nil {
			return nil, elems[i].Error
		}
	}
	h0, err := decodeHead(first)
	if err != nil {
		return nil, err
	}
	h1, err := decodeHead(last)
	if err != nil {
		return nil, err
	}
	c.sawHead(h0)
	c.sawHead(h1)
	if h0 == h1 {
		return decode(h1, elems[1:len(elems)-1])
	}
	// A block landed in between: read again at the later head.
	reads, decode = c.accountElems(addr, tokens, hexutil.EncodeUint64(h1.Number))
	if err := c.batch(ctx, reads); err != nil {
		return nil, err
	}
	return decode(h1, reads)
}

// decodeHead decodes an eth_getBlockByNumber answer into a Head.
func decodeHead(raw json.RawMessage) (Head, error) {
	var h struct {
		Number hexutil.Uint64 `json:"number"`
		Time   hexutil.Uint64 `json:"timestamp"`
		Hash   common.Hash    `json:"hash"`
	}
	if isNull(raw) {
		return Head{}, errors.New("eth_getBlockByNumber: node returned no latest block")
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return Head{}, fmt.Errorf("eth_getBlockByNumber: %w", err)
	}
	return Head{Number: uint64(h.Number), Time: uint64(h.Time), Hash: h.Hash}, nil
}

// accountElems are the batch elements reading addr's balance, nonce, code
// and tokens at block, and how to decode them (the same elements, once the
// batch has run) into an Account at head.
func (c *Client) accountElems(addr common.Address, tokens []common.Address, block string) ([]rpc.BatchElem, func(Head, []rpc.BatchElem) (*Account, error)) {
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
	return elems, func(head Head, elems []rpc.BatchElem) (*Account, error) {
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
			var err error // this token's own: a previous token's failure is not this one's
			meta, cached := c.meta.get(t)
			if !cached {
				if r.iDec < 0 {
					err = errors.New("decimals(): not read")
				} else {
					meta, err = metaFrom(t, elems, r.iDec, r.iSym, r.iName, r.decimals, r.symbol, r.name)
				}
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

// Snapshot is an owner's ETH balance, nonce and token balances at one
// block. Tokens holds those that answered balanceOf.
type Snapshot struct {
	Block  uint64
	Nonce  uint64 // the owner's nonce at Block: transactions it sent up to and including Block
	ETH    *big.Int
	Tokens map[common.Address]*big.Int
}

// Balances are an owner's snapshots just before and at one block.
type Balances struct {
	Before, At Snapshot
	Unreadable []common.Address // asked for, and no balance came back
}

// OwnTxs is how many transactions the owner sent in the block: with more
// than one, the differences are theirs together.
func (b Balances) OwnTxs() uint64 {
	if b.At.Nonce < b.Before.Nonce {
		return 0
	}
	return b.At.Nonce - b.Before.Nonce
}

// BalancesAround reads owner's ETH balance, its nonce and its balanceOf on
// each token at block-1 and at block, in one round trip: what a transaction
// included in block changed, when it is the block's only one of owner's.
func (c *Client) BalancesAround(ctx context.Context, owner common.Address, tokens []common.Address, block uint64) (Balances, error) {
	if block == 0 {
		return Balances{}, fmt.Errorf("balances around block 0: no block before it")
	}
	before, decBefore := snapshotElems(owner, tokens, hexutil.EncodeUint64(block-1))
	at, decAt := snapshotElems(owner, tokens, hexutil.EncodeUint64(block))
	elems := append(before, at...)
	if err := c.batch(ctx, elems); err != nil {
		return Balances{}, err
	}
	var b Balances
	var err error
	var bad0, bad1 []common.Address
	if b.Before, bad0, err = decBefore(elems[:len(before)]); err != nil {
		return Balances{}, err
	}
	if b.At, bad1, err = decAt(elems[len(before):]); err != nil {
		return Balances{}, err
	}
	b.Before.Block, b.At.Block = block-1, block
	seen := map[common.Address]bool{}
	for _, t := range append(bad0, bad1...) {
		if !seen[t] {
			seen[t] = true
			b.Unreadable = append(b.Unreadable, t)
			delete(b.Before.Tokens, t)
			delete(b.At.Tokens, t)
		}
	}
	return b, nil
}

// snapshotElems are the batch elements reading owner's snapshot at block
// (a number or "latest"), and how to decode them from the same elements
// once the batch has run: the snapshot without its Block, and the tokens
// that gave no balance.
func snapshotElems(owner common.Address, tokens []common.Address, block string) ([]rpc.BatchElem, func(done []rpc.BatchElem) (Snapshot, []common.Address, error)) {
	var eth hexutil.Big
	var nonce hexutil.Uint64
	outs := make([]hexutil.Bytes, len(tokens))
	elems := []rpc.BatchElem{
		{Method: "eth_getBalance", Args: []any{owner, block}, Result: &eth},
		{Method: "eth_getTransactionCount", Args: []any{owner, block}, Result: &nonce},
	}
	for i, t := range tokens {
		elems = append(elems, callElem(t, pack("balanceOf", owner), block, &outs[i]))
	}
	return elems, func(elems []rpc.BatchElem) (Snapshot, []common.Address, error) {
		for _, el := range elems[:2] {
			if el.Error != nil {
				return Snapshot{}, nil, el.Error
			}
		}
		s := Snapshot{Nonce: uint64(nonce), ETH: eth.ToInt(), Tokens: map[common.Address]*big.Int{}}
		var bad []common.Address
		for i, t := range tokens {
			if elems[2+i].Error != nil {
				bad = append(bad, t)
				continue
			}
			v, err := decodeUint256(outs[i])
			if err != nil {
				bad = append(bad, t)
				continue
			}
			s.Tokens[t] = v
		}
		return s, bad, nil
	}
}
