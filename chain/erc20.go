package chain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// erc20ABI is the subset of ERC-20 walletgate calls. transfer and approve are
// declared without outputs on purpose: tokens like mainnet USDT return
// nothing, and walletgate judges success from the receipt's logs instead.
const erc20ABI = `[
 {"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"owner","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"allowance","stateMutability":"view","inputs":[{"name":"owner","type":"address"},{"name":"spender","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"decimals","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint8"}]},
 {"type":"function","name":"symbol","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"string"}]},
 {"type":"function","name":"name","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"string"}]},
 {"type":"function","name":"transfer","stateMutability":"nonpayable","inputs":[{"name":"to","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[]},
 {"type":"function","name":"approve","stateMutability":"nonpayable","inputs":[{"name":"spender","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[]},
 {"type":"event","name":"Transfer","anonymous":false,"inputs":[{"name":"from","type":"address","indexed":true},{"name":"to","type":"address","indexed":true},{"name":"value","type":"uint256","indexed":false}]}
]`

// ERC20 is the parsed ERC-20 ABI subset, parsed on first use (not at
// every start).
var ERC20 = sync.OnceValue(func() abi.ABI { return mustABI(erc20ABI) })

// TransferTopic is topic 0 of an ERC-20 (and ERC-721) Transfer event.
var TransferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))

// maxMetadataLen bounds a token's name or symbol as read from chain; hostile
// tokens can return megabytes.
const maxMetadataLen = 256

func mustABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic(err)
	}
	return a
}

func pack(method string, args ...any) hexutil.Bytes {
	data, err := ERC20().Pack(method, args...)
	if err != nil {
		panic(fmt.Sprintf("pack %s: %v", method, err)) // static ABI, static argument types
	}
	return data
}

// TransferData is the calldata of transfer(to, amount).
func TransferData(to common.Address, amount *big.Int) []byte {
	return pack("transfer", to, amount)
}

// ApproveData is the calldata of approve(spender, amount).
func ApproveData(spender common.Address, amount *big.Int) []byte {
	return pack("approve", spender, amount)
}

// TokenMeta is what a token contract says about itself. Name and Symbol are
// untrusted text from the contract; callers must display them inertly.
type TokenMeta struct {
	Address  common.Address
	Decimals uint8
	Symbol   string
	Name     string
}

// decodeUint256 decodes a single uint256 return value.
func decodeUint256(ret []byte) (*big.Int, error) {
	if len(ret) < 32 {
		return nil, fmt.Errorf("returned %d bytes, want 32", len(ret))
	}
	return new(big.Int).SetBytes(ret[:32]), nil
}

// decodeDecimals decodes decimals(), refusing values no token uses.
func decodeDecimals(ret []byte) (uint8, error) {
	v, err := decodeUint256(ret)
	if err != nil {
		return 0, err
	}
	if v.Cmp(big.NewInt(77)) > 0 { // 10^77 is the largest power of ten a uint256 holds
		return 0, fmt.Errorf("decimals() returned %s, more than any amount can carry", v)
	}
	return uint8(v.Uint64()), nil
}

// decodeText decodes a string() return value, or the bytes32 form older
// tokens (MKR, SAI) use. Invalid UTF-8 is replaced and the text is bounded.
func decodeText(ret []byte) (string, error) {
	var s string
	switch {
	case len(ret) == 32:
		s = string(bytes.TrimRight(ret, "\x00"))
	case len(ret) >= 64:
		out, err := ERC20().Methods["symbol"].Outputs.Unpack(ret)
		if err != nil {
			return "", err
		}
		s = out[0].(string)
	default:
		return "", errors.New("no text returned")
	}
	if len(s) > maxMetadataLen {
		s = s[:maxMetadataLen]
	}
	return strings.ToValidUTF8(s, string(utf8.RuneError)), nil
}

// Transfer is one decoded ERC-20 Transfer log.
type Transfer struct {
	Token    common.Address
	From     common.Address
	To       common.Address
	Amount   *big.Int
	LogIndex uint
}

// logJSON is the part of an RPC log object walletgate reads.
type logJSON struct {
	Address common.Address `json:"address"`
	Topics  []common.Hash  `json:"topics"`
	Data    hexutil.Bytes  `json:"data"`
	Index   hexutil.Uint   `json:"logIndex"`
	Removed bool           `json:"removed"`
}

// decodeTransfers returns the ERC-20 Transfer logs among logs. ERC-721
// transfers share the topic but index the token id (four topics): skipped.
func decodeTransfers(logs []logJSON) []Transfer {
	var out []Transfer
	for _, l := range logs {
		if l.Removed || len(l.Topics) != 3 || l.Topics[0] != TransferTopic || len(l.Data) != 32 {
			continue
		}
		out = append(out, Transfer{
			Token:    l.Address,
			From:     common.BytesToAddress(l.Topics[1].Bytes()),
			To:       common.BytesToAddress(l.Topics[2].Bytes()),
			Amount:   new(big.Int).SetBytes(l.Data),
			LogIndex: uint(l.Index),
		})
	}
	return out
}

// BalanceOfData is the calldata of balanceOf(owner).
func BalanceOfData(owner common.Address) []byte { return pack("balanceOf", owner) }

// AllowanceView is token.allowance(owner, spender) as a View.
func AllowanceView(token, owner, spender common.Address) *View {
	return &View{To: token, Data: pack("allowance", owner, spender)}
}

// DecodeUint256 decodes a view's single uint256 answer.
func DecodeUint256(ret []byte) (*big.Int, error) { return decodeUint256(ret) }

// Allowance reads token.allowance(owner, spender) at the latest block.
func (c *Client) Allowance(ctx context.Context, token, owner, spender common.Address) (*big.Int, error) {
	var out hexutil.Bytes
	if err := c.call(ctx, &out, "eth_call", map[string]any{"to": token, "input": pack("allowance", owner, spender)}, "latest"); err != nil {
		return nil, asRevert(err)
	}
	return decodeUint256(out)
}
