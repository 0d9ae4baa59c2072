// Package testdata embeds the compiled test contracts (TetherLike, a USDT
// look-alike, TestToken, a plain ERC-20, and QuirkyToken, one that can
// misbehave after a simulation passed) that walletgate's tests deploy on
// go-ethereum's simulated chain. The artifacts in contracts/build are generated
// from contracts/*.sol by contracts/compile.js; see contracts/README.md.
package testdata

import (
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed contracts/build/*.json
var build embed.FS

// artifact mirrors the JSON written by contracts/compile.js.
type artifact struct {
	ContractName     string          `json:"contractName"`
	ABI              json.RawMessage `json:"abi"`
	Bytecode         string          `json:"bytecode"`
	DeployedBytecode string          `json:"deployedBytecode"`
	Compiler         string          `json:"compiler"`
}

// Contract returns the ABI (as JSON text) and the creation bytecode of the
// compiled contract name, e.g. "TetherLike" or "TestToken".
func Contract(name string) (abiJSON string, bytecode []byte, err error) {
	if name == "" || strings.ContainsAny(name, `/\.`) {
		return "", nil, fmt.Errorf("testdata: invalid contract name %q", name)
	}
	raw, err := build.ReadFile("contracts/build/" + name + ".json")
	if err != nil {
		return "", nil, fmt.Errorf("testdata: contract %q: %w", name, err)
	}
	var a artifact
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", nil, fmt.Errorf("testdata: contract %q: %w", name, err)
	}
	if a.ContractName != name {
		return "", nil, fmt.Errorf("testdata: contract %q: artifact names %q", name, a.ContractName)
	}
	if len(a.ABI) == 0 {
		return "", nil, fmt.Errorf("testdata: contract %q: empty ABI", name)
	}
	code, err := hex.DecodeString(strings.TrimPrefix(a.Bytecode, "0x"))
	if err != nil {
		return "", nil, fmt.Errorf("testdata: contract %q: bytecode: %w", name, err)
	}
	if len(code) == 0 {
		return "", nil, fmt.Errorf("testdata: contract %q: empty bytecode", name)
	}
	return string(a.ABI), code, nil
}
