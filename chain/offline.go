package chain

import (
	"math/big"

	"github.com/ethereum/go-ethereum/rpc"
)

// Offline returns a client of chain id that has no node: every request
// fails (the method is not found). It is for describing what a server on
// that chain offers — its tool list, for a bundle's manifest — without
// reaching the network.
func Offline(id *big.Int) *Client {
	rc := rpc.DialInProc(rpc.NewServer())
	return &Client{chainID: new(big.Int).Set(id), endpoints: []*endpoint{{rpc: rc, host: "no node"}}}
}
