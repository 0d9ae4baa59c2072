package testdata

import (
	"encoding/json"
	"testing"
)

func TestContractsLoad(t *testing.T) {
	for _, name := range []string{"TetherLike", "TestToken", "QuirkyToken"} {
		abiJSON, code, err := Contract(name)
		if err != nil {
			t.Fatalf("Contract(%q): %v", name, err)
		}
		var entries []map[string]any
		if err := json.Unmarshal([]byte(abiJSON), &entries); err != nil || len(entries) == 0 {
			t.Errorf("Contract(%q): ABI is not a non-empty JSON array (err=%v)", name, err)
		}
		if len(code) == 0 {
			t.Errorf("Contract(%q): empty bytecode", name)
		}
	}
	if _, _, err := Contract("NoSuchContract"); err == nil {
		t.Error("Contract(\"NoSuchContract\"): want error")
	}
	if _, _, err := Contract("../contracts/build/TestToken"); err == nil {
		t.Error("Contract with a path: want error")
	}
}
