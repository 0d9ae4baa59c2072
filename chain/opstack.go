package chain

// Fees as OP-stack chains charge them: besides gas, every transaction pays
// an L1 data fee that the GasPriceOracle predeploy prices and the receipt
// reports (l1Fee). A chain is OP-stack when its id is one of the known ones
// (OP Mainnet, Base and their Sepolias) or when the oracle has code, which
// is read once, in the identity batch at start (no round trip of its own).
// The preview counts the oracle's getL1FeeUpperBound(size) of the unsigned
// transaction — an upper bound, so the caps never count less than the chain
// can charge, and a size alone (no RLP of the final transaction with its
// gas, which the estimate in the same batch has not given yet), so it rides
// in the preview's first batch. Arbitrum is not OP-stack: its L1 component
// is inside the gas its node estimates, so gas × max fee covers it.

import (
	"errors"
	"fmt"
	"math/big"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// GasPriceOracle is the OP-stack predeploy that prices the L1 data fee.
var GasPriceOracle = common.HexToAddress("0x420000000000000000000000000000000000000F")

// opStackChains are the OP-stack chains walletgate knows by id.
var opStackChains = map[uint64]bool{10: true, 8453: true, 84532: true, 11155420: true}

// opStackFlag is an endpoint's answer: the oracle has code there.
type opStackFlag struct{ v atomic.Bool }

// opStackProbe asks for the oracle's code.
func opStackProbe(out *hexutil.Bytes) rpc.BatchElem {
	return rpc.BatchElem{Method: "eth_getCode", Args: []any{GasPriceOracle, "latest"}, Result: out}
}

// OPStack reports whether the chain charges an L1 data fee: a known
// OP-stack id, or a GasPriceOracle with code on the endpoint in use.
func (c *Client) OPStack() bool {
	if c.chainID != nil && c.chainID.IsUint64() && opStackChains[c.chainID.Uint64()] {
		return true
	}
	c.mu.Lock()
	ep := c.endpoints[c.current]
	c.mu.Unlock()
	return ep.opStack.v.Load()
}

// getL1FeeUpperBound(uint256)
var selL1FeeUpperBound = []byte{0xf1, 0xc7, 0xa5, 0x8b}

// unsignedOverhead bounds an EIP-1559 transaction's unsigned RLP besides its
// data: type, chain id, nonce, tip, max fee, gas, to, value, access list,
// each at its widest.
const unsignedOverhead = 1 + 3 + 9 + 9 + 33 + 33 + 9 + 21 + 33 + 1 + 5

// L1FeeBoundView is the oracle call bounding call's L1 data fee, to ride in
// a state read's batch; read it with Uint256.
func L1FeeBoundView(call Call) *View {
	size := new(big.Int).SetInt64(int64(len(call.Data) + unsignedOverhead))
	return &View{To: GasPriceOracle, Data: append(append([]byte{}, selL1FeeUpperBound...), common.BigToHash(size).Bytes()...)}
}

// L1FeeBounds are, on an OP-stack chain, the oracle calls bounding each of
// calls' L1 data fees (L1FeeBoundView), to ride in a batch that already
// runs; nil elsewhere. Every path that prices a leg — one call's Prepare, a
// plan's legs, the confirm's re-check — reads its bounds through these two
// functions; read them after the batch with ReadL1FeeBounds.
func (c *Client) L1FeeBounds(calls []Call) []*View {
	if !c.OPStack() {
		return nil
	}
	vs := make([]*View, len(calls))
	for i, call := range calls {
		vs[i] = L1FeeBoundView(call)
	}
	return vs
}

// ReadL1FeeBounds is each bound of L1FeeBounds after its batch, in order;
// nil when there were none (not an OP-stack chain).
func ReadL1FeeBounds(vs []*View) ([]*big.Int, error) {
	if vs == nil {
		return nil, nil
	}
	out := make([]*big.Int, len(vs))
	for i, v := range vs {
		b, err := v.Uint256()
		if err != nil {
			return nil, fmt.Errorf("the GasPriceOracle's L1 fee bound: %w", err)
		}
		out[i] = b
	}
	return out, nil
}

// Uint256 is the view's answer, after its batch, read as a uint256.
func (v *View) Uint256() (*big.Int, error) {
	if v.Err != nil {
		return nil, v.Err
	}
	if len(v.Return) != 32 {
		return nil, errors.New("the oracle answered no uint256")
	}
	return new(big.Int).SetBytes(v.Return), nil
}
