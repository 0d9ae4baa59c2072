package chain

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// TxInfo is what the node knows of one transaction.
type TxInfo struct {
	Hash  common.Hash
	Found bool // the node knows the transaction (mined or pending)
	Mined bool // a receipt exists

	From  common.Address
	To    *common.Address // nil for a contract creation
	Value *big.Int
	Nonce uint64

	// TxHash and ReceiptHash are the hashes the node put in the transaction
	// and the receipt it answered: a receipt counts only if both are Hash.
	TxHash      common.Hash
	ReceiptHash common.Hash
	// SenderNonce is the sender's nonce at the latest block, when asked for
	// (OwnTransaction): a transaction the node calls mined must be below it.
	SenderNonce *uint64

	Status            uint64 // 1 success, 0 reverted; valid when Mined
	Block             uint64
	BlockHash         common.Hash
	Confirmations     uint64 // head - block + 1; valid when Mined
	GasUsed           uint64
	EffectiveGasPrice *big.Int
	// L1Fee is the receipt's l1Fee (OP-stack chains: the L1 data fee it
	// paid besides gas); nil when the receipt has none.
	L1Fee     *big.Int
	Transfers []Transfer
	Approvals []Approval

	// AtHead is the sender's snapshot at the head block, read in the same
	// round trip when asked for (OwnTransactionWatching) and the head did
	// not move during it; nil otherwise.
	AtHead *Snapshot
}

// Fee is the fee the transaction paid: gas used × effective price, plus the
// receipt's l1Fee on an OP-stack chain.
func (t *TxInfo) Fee() *big.Int {
	fee := new(big.Int)
	if t.EffectiveGasPrice != nil {
		fee.Mul(new(big.Int).SetUint64(t.GasUsed), t.EffectiveGasPrice)
	}
	if t.L1Fee != nil {
		fee.Add(fee, t.L1Fee)
	}
	return fee
}

type txJSON struct {
	Hash        common.Hash     `json:"hash"`
	From        common.Address  `json:"from"`
	To          *common.Address `json:"to"`
	Value       *hexutil.Big    `json:"value"`
	Nonce       hexutil.Uint64  `json:"nonce"`
	BlockNumber *hexutil.Big    `json:"blockNumber"`
}

type receiptJSON struct {
	TxHash            common.Hash    `json:"transactionHash"`
	Status            hexutil.Uint64 `json:"status"`
	BlockNumber       hexutil.Uint64 `json:"blockNumber"`
	BlockHash         common.Hash    `json:"blockHash"`
	GasUsed           hexutil.Uint64 `json:"gasUsed"`
	EffectiveGasPrice *hexutil.Big   `json:"effectiveGasPrice"`
	L1Fee             *hexutil.Big   `json:"l1Fee"`
	Logs              []logJSON      `json:"logs"`
}

// Transaction looks a transaction up: the transaction, its receipt and the
// head block number in one batched round trip.
func (c *Client) Transaction(ctx context.Context, hash common.Hash) (*TxInfo, error) {
	return c.transaction(ctx, hash, nil, nil)
}

// OwnTransaction is Transaction for a transaction sent by from, with from's
// nonce at the latest block read in the same round trip (SenderNonce), so
// that a receipt can be checked to be the signed transaction's.
func (c *Client) OwnTransaction(ctx context.Context, hash common.Hash, from common.Address) (*TxInfo, error) {
	return c.transaction(ctx, hash, &from, nil)
}

// OwnTransactionWatching is OwnTransaction that also reads, in the same
// round trip, from's snapshot at the head with its balance of each token
// (TxInfo.AtHead): once the transaction is included in the head block, what
// it left the wallet with costs no extra round trip.
func (c *Client) OwnTransactionWatching(ctx context.Context, hash common.Hash, from common.Address, tokens []common.Address) (*TxInfo, error) {
	return c.transaction(ctx, hash, &from, tokens)
}

func (c *Client) transaction(ctx context.Context, hash common.Hash, from *common.Address, watch []common.Address) (*TxInfo, error) {
	elems, decode := c.txElems(hash, from, watch, nil)
	if err := c.batch(ctx, elems); err != nil {
		return nil, err
	}
	return decode(elems)
}

// txElems are the batch elements of a transaction lookup (see transaction)
// and how to decode them, the same elements, once the batch has run. The
// views (with a snapshot only) are read with the snapshot, between its two
// head reads: at the head block when TxInfo.AtHead is set.
func (c *Client) txElems(hash common.Hash, from *common.Address, watch []common.Address, views []*View) ([]rpc.BatchElem, func([]rpc.BatchElem) (*TxInfo, error)) {
	var (
		rawTx, rawRcpt json.RawMessage
		head, nonce    hexutil.Uint64
	)
	elems := []rpc.BatchElem{
		{Method: "eth_getTransactionByHash", Args: []any{hash}, Result: &rawTx},
		{Method: "eth_getTransactionReceipt", Args: []any{hash}, Result: &rawRcpt},
		{Method: "eth_blockNumber", Result: &head},
	}
	if from != nil {
		elems = append(elems, rpc.BatchElem{Method: "eth_getTransactionCount", Args: []any{*from, "latest"}, Result: &nonce})
	}
	// The snapshot at "latest", between two reads of the head: it is the
	// head's only when both say the same block.
	var (
		head2    hexutil.Uint64
		decSnap  func([]rpc.BatchElem) (Snapshot, []common.Address, error)
		snap0    int
		snapSize int
	)
	if from != nil && watch != nil {
		var snapElems []rpc.BatchElem
		snapElems, decSnap = snapshotElems(*from, watch, "latest")
		snap0, snapSize = len(elems), len(snapElems)
		elems = append(elems, snapElems...)
		for _, v := range views {
			elems = append(elems, v.elem())
		}
		elems = append(elems, rpc.BatchElem{Method: "eth_blockNumber", Result: &head2})
	}
	v0 := snap0 + snapSize
	return elems, func(elems []rpc.BatchElem) (*TxInfo, error) {
		if decSnap != nil {
			for i, v := range views {
				v.done(elems[v0+i])
			}
		}
		var atHead *Snapshot
		if decSnap != nil && elems[len(elems)-1].Error == nil && head2 == head {
			if s, _, err := decSnap(elems[snap0 : snap0+snapSize]); err == nil {
				s.Block = uint64(head)
				atHead = &s
			}
		}
		for _, i := range []int{0, 2, 3} {
			if i < len(elems) && elems[i].Error != nil {
				return nil, elems[i].Error
			}
		}
		info := &TxInfo{Hash: hash, AtHead: atHead}
		if from != nil {
			n := uint64(nonce)
			info.SenderNonce = &n
		}
		if isNull(rawTx) {
			return info, nil
		}
		var tx txJSON
		if err := json.Unmarshal(rawTx, &tx); err != nil {
			return nil, &Error{Host: c.Host(), Method: "eth_getTransactionByHash", Code: -1, Message: "malformed transaction: " + err.Error()}
		}
		info.Found = true
		info.TxHash = tx.Hash
		info.From, info.To, info.Nonce = tx.From, tx.To, uint64(tx.Nonce)
		info.Value = new(big.Int)
		if tx.Value != nil {
			info.Value = tx.Value.ToInt()
		}
		if err := elems[1].Error; err != nil {
			// go-ethereum answers this while its index catches up: "not yet".
			if strings.Contains(err.Error(), "transaction indexing is in progress") {
				return info, nil
			}
			return nil, err
		}
		if isNull(rawRcpt) {
			return info, nil
		}
		var r receiptJSON
		if err := json.Unmarshal(rawRcpt, &r); err != nil {
			return nil, &Error{Host: c.Host(), Method: "eth_getTransactionReceipt", Code: -1, Message: "malformed receipt: " + err.Error()}
		}
		info.Mined = true
		info.ReceiptHash = r.TxHash
		info.Status = uint64(r.Status)
		info.Block = uint64(r.BlockNumber)
		info.BlockHash = r.BlockHash
		info.GasUsed = uint64(r.GasUsed)
		if r.EffectiveGasPrice != nil {
			info.EffectiveGasPrice = r.EffectiveGasPrice.ToInt()
		}
		if r.L1Fee != nil {
			info.L1Fee = r.L1Fee.ToInt()
		}
		if uint64(head) >= info.Block {
			info.Confirmations = uint64(head) - info.Block + 1
		}
		info.Transfers = decodeTransfers(r.Logs)
		info.Approvals = decodeApprovals(r.Logs)
		return info, nil
	}
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}
