package chain

// What a transaction does to balances and allowances, read from logs: the
// ERC-20 Transfer and Approval events, and — in a traced simulation — the ETH
// movements that eth_simulateV1 reports as Transfer logs of a pseudo address.

import (
	"context"
	"errors"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
)

// ApprovalTopic is topic 0 of an ERC-20 Approval event.
var ApprovalTopic = crypto.Keccak256Hash([]byte("Approval(address,address,uint256)"))

// ETHTransferLog is the address eth_simulateV1 with traceTransfers gives the
// Transfer logs of ETH movements.
var ETHTransferLog = common.HexToAddress("0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE")

// Approval is an ERC-20 Approval event: owner let spender move Amount.
type Approval struct {
	Token    common.Address
	Owner    common.Address
	Spender  common.Address
	Amount   *big.Int
	LogIndex uint
}

// decodeApprovals returns the ERC-20 Approval logs among logs.
func decodeApprovals(logs []logJSON) []Approval {
	var out []Approval
	for _, l := range logs {
		if l.Removed || len(l.Topics) != 3 || l.Topics[0] != ApprovalTopic || len(l.Data) != 32 {
			continue
		}
		out = append(out, Approval{Token: l.Address, Owner: common.BytesToAddress(l.Topics[1].Bytes()),
			Spender: common.BytesToAddress(l.Topics[2].Bytes()), Amount: new(big.Int).SetBytes(l.Data), LogIndex: uint(l.Index)})
	}
	return out
}

// Traced is one call of a traced simulation: its result and what it moved.
// An ETH movement is a Transfer whose Token is ETHTransferLog.
type Traced struct {
	SimResult
	Transfers []Transfer
	Approvals []Approval
}

type tracedBlock struct {
	Calls []struct {
		ReturnData hexutil.Bytes  `json:"returnData"`
		GasUsed    hexutil.Uint64 `json:"gasUsed"`
		MaxUsedGas hexutil.Uint64 `json:"maxUsedGas"`
		Status     hexutil.Uint64 `json:"status"`
		Logs       []logJSON      `json:"logs"`
		Error      *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    string `json:"data"`
		} `json:"error"`
	} `json:"calls"`
}

// tracedElem is the batch element simulating calls in sequence in one block,
// without fee or nonce validation — with their ETH movements traced when
// trace is set — and how to decode its answer.
func tracedElem(calls []Call, trace bool) (rpc.BatchElem, func() ([]Traced, error)) {
	args := make([]map[string]any, len(calls))
	for i, call := range calls {
		a := call
		a.Gas, a.MaxFee, a.Tip = 0, nil, nil
		args[i] = a.toArg()
	}
	opts := map[string]any{
		"blockStateCalls": []map[string]any{{"calls": args}},
		"traceTransfers":  trace,
		"validation":      false,
	}
	var blocks []tracedBlock
	el := rpc.BatchElem{Method: "eth_simulateV1", Args: []any{opts, "latest"}, Result: &blocks}
	return el, func() ([]Traced, error) {
		if len(blocks) != 1 || len(blocks[0].Calls) != len(calls) {
			return nil, errors.New("eth_simulateV1: the node answered a different number of calls")
		}
		out := make([]Traced, len(calls))
		for i, r := range blocks[0].Calls {
			// gasUsed is net of refunds; a transaction's gas limit must cover
			// the peak before them (clearing an allowance refunds most of its
			// cost), which nodes report as maxUsedGas.
			gas := max(uint64(r.GasUsed), uint64(r.MaxUsedGas))
			out[i].SimResult = SimResult{GasUsed: gas, Return: r.ReturnData}
			if r.Status != 1 {
				re := &RevertError{Data: r.ReturnData}
				if r.Error != nil && r.Error.Data != "" {
					re.Data, _ = hexutil.Decode(r.Error.Data)
				}
				re.Reason = decodeRevert(re.Data)
				if re.Reason == "" && r.Error != nil && !strings.Contains(r.Error.Message, "execution reverted") {
					re.Reason = Inertish(r.Error.Message)
				}
				out[i].Revert = re
				continue
			}
			out[i].Transfers = decodeTransfers(r.Logs)
			out[i].Approvals = decodeApprovals(r.Logs)
		}
		return out, nil
	}
}

// Inertish bounds a node's message; callers render it inert.
func Inertish(s string) string {
	if len(s) > 200 {
		return s[:200]
	}
	return s
}

// StateAndTrace reads the send state and, in the same round trip, a traced
// simulation of calls in sequence on the latest state, with any views.
func (c *Client) StateAndTrace(ctx context.Context, from common.Address, calls []Call, views ...*View) (SendState, []Traced, error) {
	if err := c.simulateOffered(); err != nil {
		return SendState{}, nil, err
	}
	el, decodeT := tracedElem(calls, true)
	st, err := c.stateBatch(ctx, from, &el, views)
	if err != nil {
		return SendState{}, nil, err
	}
	if err := el.Error; err != nil {
		return st, nil, c.simulateV1Error(err)
	}
	res, err := decodeT()
	return st, res, err
}
