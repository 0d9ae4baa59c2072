package tools

import (
	"encoding/json"
	"fmt"
)

// keyed is a write kind's intent: key is what identifies it, resolved
// (addresses as checksummed hex, assets by address, amounts in base units,
// defaults filled in), as a struct of fixed field order.
type keyed interface{ key() any }

// canonical is in as the gate fingerprints it: the version, the chain and
// the sender, then the intent's key, in a fixed order. Cosmetic differences
// in a call cannot change it; any difference in meaning does
// (canonical_fuzz_test.go); its bytes are pinned (TestCanonicalFormIsStable).
func (s *Server) canonical(in keyed) []byte {
	head, err := json.Marshal(struct {
		V       int    `json:"v"`
		ChainID uint64 `json:"chain_id"`
		From    string `json:"from"`
	}{1, s.chainID, s.address.Hex()})
	if err != nil {
		panic(err) // fixed struct
	}
	key, err := json.Marshal(in.key())
	if err != nil || len(key) < 2 || key[0] != '{' {
		panic(fmt.Sprintf("canonical key of %T is not a JSON object: %v", in, err)) // a programming error
	}
	if len(key) == 2 {
		return head
	}
	return append(append(head[:len(head)-1], ','), key[1:]...)
}
