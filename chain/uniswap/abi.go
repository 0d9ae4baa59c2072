package uniswap

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/walletgate/walletgate/chain"
)

// Uniswap v3 through QuoterV2 and SwapRouter02. Calldata is packed with the
// go-ethereum ABI encoder from these declarations; the selectors are checked
// by a test against the published ones (quoteExactInputSingle 0xc6a5026a,
// exactInputSingle 0x04e45aaf).
const uniswapABI = `[
 {"type":"function","name":"quoteExactInputSingle","stateMutability":"nonpayable",
  "inputs":[{"name":"params","type":"tuple","components":[
    {"name":"tokenIn","type":"address"},{"name":"tokenOut","type":"address"},{"name":"amountIn","type":"uint256"},
    {"name":"fee","type":"uint24"},{"name":"sqrtPriceLimitX96","type":"uint160"}]}],
  "outputs":[{"name":"amountOut","type":"uint256"},{"name":"sqrtPriceX96After","type":"uint160"},
    {"name":"initializedTicksCrossed","type":"uint32"},{"name":"gasEstimate","type":"uint256"}]},
 {"type":"function","name":"exactInputSingle","stateMutability":"payable",
  "inputs":[{"name":"params","type":"tuple","components":[
    {"name":"tokenIn","type":"address"},{"name":"tokenOut","type":"address"},{"name":"fee","type":"uint24"},
    {"name":"recipient","type":"address"},{"name":"amountIn","type":"uint256"},{"name":"amountOutMinimum","type":"uint256"},
    {"name":"sqrtPriceLimitX96","type":"uint160"}]}],
  "outputs":[{"name":"amountOut","type":"uint256"}]},
 {"type":"function","name":"multicall","stateMutability":"payable",
  "inputs":[{"name":"deadline","type":"uint256"},{"name":"data","type":"bytes[]"}],
  "outputs":[{"name":"results","type":"bytes[]"}]}
]`

// ABI is the parsed QuoterV2/SwapRouter02 subset, parsed on first use.
var ABI = sync.OnceValue(func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(uniswapABI))
	if err != nil {
		panic(err) // a constant
	}
	return a
})

type quoteParams struct {
	TokenIn           common.Address
	TokenOut          common.Address
	AmountIn          *big.Int
	Fee               *big.Int
	SqrtPriceLimitX96 *big.Int
}

type swapParams struct {
	TokenIn           common.Address
	TokenOut          common.Address
	Fee               *big.Int
	Recipient         common.Address
	AmountIn          *big.Int
	AmountOutMinimum  *big.Int
	SqrtPriceLimitX96 *big.Int
}

// QuoteData is the calldata of QuoterV2.quoteExactInputSingle with no price limit.
func QuoteData(tokenIn, tokenOut common.Address, amountIn *big.Int, fee uint32) []byte {
	data, err := ABI().Pack("quoteExactInputSingle", quoteParams{tokenIn, tokenOut, amountIn, big.NewInt(int64(fee)), new(big.Int)})
	if err != nil {
		panic(err) // static types
	}
	return data
}

// SwapData is the calldata of SwapRouter02.multicall(deadline,
// [exactInputSingle(...)]): SwapRouter02's exactInputSingle has no deadline
// of its own, so the multicall carries it.
func SwapData(tokenIn, tokenOut common.Address, fee uint32, recipient common.Address, amountIn, minOut *big.Int, deadline uint64) []byte {
	inner, err := ABI().Pack("exactInputSingle", swapParams{tokenIn, tokenOut, big.NewInt(int64(fee)), recipient, amountIn, minOut, new(big.Int)})
	if err != nil {
		panic(err)
	}
	data, err := ABI().Pack("multicall", new(big.Int).SetUint64(deadline), [][]byte{inner})
	if err != nil {
		panic(err)
	}
	return data
}

// Quote is QuoterV2's answer.
type Quote struct {
	AmountOut         *big.Int
	SqrtPriceX96After *big.Int // the pool's price after the swap, Q64.96 — not a human rate
	// SqrtPriceX96 is the pool's price before the swap (slot0), Q64.96:
	// its mid price, which the quote's price impact is measured against.
	SqrtPriceX96 *big.Int
	TicksCrossed uint32
	GasEstimate  *big.Int
	Block        chain.Head
	Calldata     []byte
}

// ReadQuote asks the quoter, at the latest block, what amountIn of tokenIn
// buys of tokenOut in the fee tier's pool (made by factory), and reads that
// pool's price before the swap in the same round trip.
func ReadQuote(ctx context.Context, c *chain.Client, quoter, factory, tokenIn, tokenOut common.Address, amountIn *big.Int, fee uint32) (*Quote, error) {
	head, err := c.LatestHead(ctx)
	if err != nil {
		return nil, err
	}
	qv := QuoteView(quoter, tokenIn, tokenOut, amountIn, fee)
	sv := Slot0View(PoolAddress(factory, tokenIn, tokenOut, fee))
	if err := c.ViewsAt(ctx, head.Number, qv, sv); err != nil {
		return nil, err
	}
	if qv.Err != nil {
		return nil, qv.Err
	}
	q, err := DecodeQuote(qv.Return, qv.Data, head)
	if err != nil {
		return nil, err
	}
	if sv.Err == nil {
		q.SqrtPriceX96, _ = DecodeSqrtPrice(sv.Return)
	}
	return q, nil
}

// poolInitCodeHash is the keccak256 of Uniswap v3's pool creation code, as
// v3-periphery's PoolAddress library has it (the dev chain deploys the same
// v3-core artifact).
var poolInitCodeHash = common.HexToHash("0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54")

// PoolAddress is the v3 pool of a and b at fee that factory creates
// (CREATE2), computed as v3-periphery computes it: no round trip.
func PoolAddress(factory, a, b common.Address, fee uint32) common.Address {
	if bytes.Compare(a.Bytes(), b.Bytes()) > 0 {
		a, b = b, a
	}
	key := crypto.Keccak256(common.LeftPadBytes(a.Bytes(), 32), common.LeftPadBytes(b.Bytes(), 32), common.LeftPadBytes(new(big.Int).SetUint64(uint64(fee)).Bytes(), 32))
	return common.BytesToAddress(crypto.Keccak256([]byte{0xff}, factory.Bytes(), key, poolInitCodeHash.Bytes())[12:])
}

// slot0Data is the calldata of a pool's slot0().
var slot0Data = hexutil.Bytes(crypto.Keccak256([]byte("slot0()"))[:4])

// Slot0View reads a pool's slot0 as a View, to batch with other reads.
func Slot0View(pool common.Address) *chain.View { return &chain.View{To: pool, Data: slot0Data} }

// DecodeSqrtPrice decodes slot0's first word: the pool's sqrtPriceX96.
func DecodeSqrtPrice(ret []byte) (*big.Int, error) {
	if len(ret) < 32 {
		return nil, fmt.Errorf("slot0 answered %d bytes", len(ret))
	}
	p := new(big.Int).SetBytes(ret[:32])
	if p.Sign() == 0 || p.BitLen() > 160 {
		return nil, fmt.Errorf("slot0 answered no uint160 price")
	}
	return p, nil
}

// QuoteView is the quoter call as a View, to batch with other reads.
func QuoteView(quoter, tokenIn, tokenOut common.Address, amountIn *big.Int, fee uint32) *chain.View {
	return &chain.View{To: quoter, Data: QuoteData(tokenIn, tokenOut, amountIn, fee)}
}

// DecodeQuote decodes the quoter's answer to calldata, read at head.
func DecodeQuote(out, calldata []byte, head chain.Head) (*Quote, error) {
	vals, err := ABI().Methods["quoteExactInputSingle"].Outputs.Unpack(out)
	if err != nil || len(vals) != 4 {
		return nil, fmt.Errorf("quoter answered %d bytes that are not a quote", len(out))
	}
	return &Quote{
		AmountOut:         vals[0].(*big.Int),
		SqrtPriceX96After: vals[1].(*big.Int),
		TicksCrossed:      vals[2].(uint32),
		GasEstimate:       vals[3].(*big.Int),
		Block:             head,
		Calldata:          calldata,
	}, nil
}
