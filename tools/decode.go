package tools

// Naming what a call's calldata asks for, for the person reading a preview.
// Rules: a contract walletgate knows is decoded by its own ABI; the ERC-20
// functions that move or expose tokens (transfer, transferFrom, approve,
// permit) are decoded wherever they are called; anything else is named by
// its selector from go-ethereum's 4-byte database and marked not verified
// (a selector says nothing about what the code does); otherwise it is an
// unknown function. None of this bounds a call: its simulated effects do.

import (
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/fourbyte"

	"github.com/walletgate/walletgate/chain/uniswap"
)

// decodedCall is one call's calldata in words.
type decodedCall struct {
	Function string   `json:"function" jsonschema:"the function, e.g. approve(address spender, uint256 amount), or unknown function 0x…"`
	Args     []string `json:"args" jsonschema:"its arguments, as decoded"`
	Source   string   `json:"source" enum:"abi|erc20|fourbyte|unknown|none" jsonschema:"how it was named: abi (a contract walletgate knows), erc20 (a token-moving ERC-20 function), fourbyte (by selector only: NOT VERIFIED), unknown, or none (no calldata: a plain ETH transfer)"`
}

const erc20MovingABI = `[
 {"type":"function","name":"transfer","inputs":[{"name":"to","type":"address"},{"name":"amount","type":"uint256"}]},
 {"type":"function","name":"transferFrom","inputs":[{"name":"from","type":"address"},{"name":"to","type":"address"},{"name":"amount","type":"uint256"}]},
 {"type":"function","name":"approve","inputs":[{"name":"spender","type":"address"},{"name":"amount","type":"uint256"}]},
 {"type":"function","name":"permit","inputs":[{"name":"owner","type":"address"},{"name":"spender","type":"address"},{"name":"value","type":"uint256"},{"name":"deadline","type":"uint256"},{"name":"v","type":"uint8"},{"name":"r","type":"bytes32"},{"name":"s","type":"bytes32"}]}
]`

const wethABI = `[
 {"type":"function","name":"deposit","inputs":[]},
 {"type":"function","name":"withdraw","inputs":[{"name":"wad","type":"uint256"}]}
]`

var (
	// parsed on first use, not at every start
	erc20Moving = sync.OnceValue(func() abi.ABI { return mustParseABI(erc20MovingABI) })
	wethFuncs   = sync.OnceValue(func() abi.ABI { return mustParseABI(wethABI) })

	fourbyteOnce sync.Once
	fourbyteDB   *fourbyte.Database // nil when it could not be loaded
)

func mustParseABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic(err)
	}
	return a
}

// decodeCall names what data asks of to.
func (s *Server) decodeCall(to common.Address, data []byte) decodedCall {
	if len(data) == 0 {
		return decodedCall{Function: "(none: a plain ETH transfer)", Args: []string{}, Source: "none"}
	}
	if len(data) < 4 {
		return decodedCall{Function: "malformed calldata 0x" + hex.EncodeToString(data), Args: []string{}, Source: "unknown"}
	}
	if u := s.network.Uniswap; u != nil && to == u.SwapRouter02 {
		if d, ok := decodeWith(uniswap.ABI(), data, "abi"); ok {
			return d
		}
	}
	if to == s.weth() && to != (common.Address{}) {
		if d, ok := decodeWith(wethFuncs(), data, "abi"); ok {
			return d
		}
	}
	if d, ok := decodeWith(erc20Moving(), data, "erc20"); ok {
		return d
	}
	fourbyteOnce.Do(func() { fourbyteDB, _ = fourbyte.New() })
	sel := "0x" + hex.EncodeToString(data[:4])
	if fourbyteDB != nil {
		if sig, err := fourbyteDB.Selector(data[:4]); err == nil {
			return decodedCall{Function: inert(sig, 120) + " (by selector " + sel + " only: NOT VERIFIED)", Args: []string{}, Source: "fourbyte"}
		}
	}
	return decodedCall{Function: "unknown function " + sel, Args: []string{}, Source: "unknown"}
}

// decodeWith decodes data by one of a's methods.
func decodeWith(a abi.ABI, data []byte, source string) (decodedCall, bool) {
	m, err := a.MethodById(data[:4])
	if err != nil {
		return decodedCall{}, false
	}
	vals, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		return decodedCall{}, false
	}
	d := decodedCall{Source: source, Args: []string{}}
	var sig []string
	for i, in := range m.Inputs {
		sig = append(sig, in.Type.String()+" "+in.Name)
		d.Args = append(d.Args, in.Name+" = "+argText(vals[i]))
	}
	d.Function = m.RawName + "(" + strings.Join(sig, ", ") + ")"
	return d, true
}

// argText renders a decoded argument bounded and inert.
func argText(v any) string {
	switch x := v.(type) {
	case common.Address:
		return x.Hex()
	case []byte:
		return "0x" + hex.EncodeToString(x[:min(len(x), 64)])
	case [32]byte:
		return "0x" + hex.EncodeToString(x[:])
	}
	return inert(fmt.Sprint(v), 200)
}
