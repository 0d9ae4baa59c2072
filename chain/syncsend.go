package chain

// The broadcast that waits: eth_sendRawTransactionSync (EIP-7966) answers a
// broadcast with the transaction's receipt. Rules of this file:
//
//   - Whether the node has the method is learned without a round trip of its
//     own: the identity batch (chain id and genesis, read once at Dial or
//     CheckChainID) carries a probe, eth_sendRawTransactionSync of empty
//     bytes, which no node can take for a transaction. "Method not found" says
//     the node lacks it; any other answer (a decoding error) says it has it. A
//     later "method not found" to a real send (a fallback endpoint, a proxy
//     that changed) turns it off for the rest of the process, and that send
//     is made again plainly: a node that does not know a method did nothing
//     with the call.
//   - The send rides first in a batch whose later elements are a lookup of
//     the transaction (OwnTransactionWatching's): a node that serves a batch
//     in order (go-ethereum does) runs them after the receipt is in, so the
//     transaction, its receipt, the wallet's nonce and its snapshot at the
//     receipt's block come back in the broadcast's own round trip. On a node
//     that does not, the lookup simply shows less (not mined, or no
//     snapshot at the receipt's block) and the caller looks again as after
//     a plain broadcast.
//   - Nodes take its timeout in different forms: a JSON number of
//     milliseconds (geth, Reth, OP nodes), only a 0x hex string (Arbitrum
//     Nitro ≥ 3.10 and Polygon Bor refuse a number with "invalid argument
//     1"). The start-up probe carries a number, so its answer says which
//     form the node takes at no round trip of its own; a send the node
//     refuses as "invalid argument 1" is made again at once in the next form
//     (hex, then none: the node's own default), and the form that worked is
//     kept for the rest of the process. A node that cannot decode a call's
//     arguments did nothing with it.
//   - Its errors are a plain broadcast's: a transport failure (the request's
//     own deadline included) leaves the outcome unknown; the node's "not
//     processed within the timeout" (code 4) means it took the transaction
//     into its pool, so it was sent; any other answer of the node is a
//     refusal for the caller to prove or not (the outcome rule).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// methodSendSync is EIP-7966's method.
const methodSendSync = "eth_sendRawTransactionSync"

// codeSyncTimeout is EIP-7966's error code for a transaction the node took
// into its pool but did not see included within the timeout.
const codeSyncTimeout = 4

// ErrNoSyncSend is SendRawWaiting on a node that lacks
// eth_sendRawTransactionSync: nothing was sent; send plainly (SendRaw).
var ErrNoSyncSend = errors.New("the node has no " + methodSendSync)

// Forms of the sync send's timeout argument, in the order they are tried.
const (
	timeoutNumber int32 = iota // a JSON number of milliseconds (geth, Reth, OP nodes)
	timeoutHex                 // a 0x hex string only (Arbitrum Nitro ≥ 3.10, Polygon Bor)
	timeoutNone                // no timeout: the node's own default
)

// timeoutArgs are the sync send's arguments with its timeout in form.
func timeoutArgs(raw []byte, ms uint64, form int32) []any {
	switch form {
	case timeoutNumber:
		return []any{hexutil.Bytes(raw), ms}
	case timeoutHex:
		return []any{hexutil.Bytes(raw), hexutil.Uint64(ms)}
	}
	return []any{hexutil.Bytes(raw)}
}

// badTimeout reports whether a node's answer says it cannot decode the
// timeout argument (geth's JSON-RPC server numbers arguments from 0: the
// timeout is argument 1).
func badTimeout(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "invalid argument 1")
}

// syncProbe is the identity batch's probe element: empty bytes, which no
// node takes for a transaction, and a timeout as a number.
func syncProbe() rpc.BatchElem {
	return rpc.BatchElem{Method: methodSendSync, Args: timeoutArgs(nil, 1, timeoutNumber), Result: new(any)}
}

// probeForm is the timeout form a node's answer to syncProbe says it takes.
func probeForm(err error) int32 {
	if badTimeout(err) {
		return timeoutHex
	}
	return timeoutNumber
}

// methodMissing reports whether a node's answer says it does not know the
// method (JSON-RPC -32601, or the words providers use for it).
func methodMissing(err error) bool {
	var re rpc.Error
	if errors.As(err, &re) && re.ErrorCode() == -32601 {
		return true
	}
	var e *Error
	if errors.As(err, &e) && e.Code == -32601 {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"method not found", "does not exist/is not available", "method not supported", "unsupported method", "not whitelisted"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// SyncSend reports whether the node answers eth_sendRawTransactionSync, as
// learned from the identity batch and any send since.
func (c *Client) SyncSend() bool { return c.syncSend.Load() }

// SendRawWaiting broadcasts a signed transaction with
// eth_sendRawTransactionSync, asking the node to wait up to wait for its
// inclusion (bounded below the per-request deadline), and in the same
// round trip looks it up as OwnTransactionWatching does, after the send.
// The error is SendRaw's (see the file's rules), or ErrNoSyncSend; with a
// nil error the TxInfo is what the lookup found — a receipt when the node
// included the transaction in time and serves batches in order. The views
// ride with the snapshot: when TxInfo.AtHead is the receipt's block, they
// were read on the state the transaction left (a later leg's simulation).
func (c *Client) SendRawWaiting(ctx context.Context, tx *types.Transaction, from common.Address, watch []common.Address, wait time.Duration, views ...*View) (*TxInfo, error) {
	raw, err := tx.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("encode transaction: %w", err)
	}
	bound := c.callTimeout
	if bound <= 0 {
		bound = DefaultCallTimeout
	}
	// In whole milliseconds, at least one: 0 would be the node's default.
	wait = max(min(wait, bound/2), time.Millisecond)
	if watch == nil {
		watch = []common.Address{} // the snapshot carries the views
	}
	for form := c.syncForm.Load(); ; form++ {
		var res any
		send := rpc.BatchElem{Method: methodSendSync, Args: timeoutArgs(raw, uint64(wait.Milliseconds()), form), Result: &res}
		look, decode := c.txElems(tx.Hash(), &from, watch, views)
		elems := append([]rpc.BatchElem{send}, look...)
		if err := c.batch(ctx, elems); err != nil {
			return nil, err // transport: the outcome is unknown
		}
		if err := elems[0].Error; err != nil {
			var e *Error
			switch {
			case badTimeout(err) && form < timeoutNone:
				continue // not decoded, so not sent: the next form at once
			case methodMissing(err):
				c.syncSend.Store(false)
				return nil, ErrNoSyncSend
			case errors.As(err, &e) && e.Code == codeSyncTimeout:
				// In the node's pool, not yet included: sent.
			case strings.Contains(strings.ToLower(err.Error()), "already known"):
			default:
				return nil, err
			}
		}
		c.syncForm.Store(form)
		info, err := decode(elems[1:])
		if err != nil {
			return &TxInfo{Hash: tx.Hash()}, nil // sent; the lookup is for the caller to repeat
		}
		return info, nil
	}
}
