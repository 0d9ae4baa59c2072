package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The binary that holds the key links no Ethereum node: no node, p2p stack,
// eth protocol, chain database or tracers. The dev chain is walletgate-devnet.
func TestServingBinaryLinksNoNode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const geth = "github.com/ethereum/go-ethereum/"
	forbidden := []string{"node", "p2p", "eth", "core/rawdb", "core/vm", "core/state", "eth/tracers", "ethdb", "triedb", "miner", "consensus"}
	// p2p/netutil is imported by the rpc client package itself (IP network
	// lists for its HTTP host checks); it opens nothing and starts nothing.
	allowed := map[string]bool{geth + "p2p/netutil": true}
	deps := strings.Fields(string(out))
	for _, dep := range deps {
		if strings.HasPrefix(dep, "github.com/walletgate/walletgate/chain/devnet") {
			t.Errorf("walletgate links %s", dep)
		}
		if allowed[dep] || !strings.HasPrefix(dep, geth) {
			continue
		}
		rel := strings.TrimPrefix(dep, geth)
		for _, f := range forbidden {
			if rel == f || strings.HasPrefix(rel, f+"/") {
				t.Errorf("walletgate links %s (%s is for walletgate-devnet only)", dep, f)
			}
		}
	}
	for _, dep := range deps {
		if strings.HasPrefix(dep, "github.com/jackc/") || dep == "github.com/walletgate/walletgate/pgstate" {
			t.Errorf("walletgate links %s (the PostgreSQL client is for walletgate-shared only)", dep)
		}
	}
	if len(deps) > 400 {
		t.Errorf("walletgate links %d packages; the split brought it to ~335: what grew?", len(deps))
	}
}

// walletgate-shared, the same command with the tag, has the PostgreSQL
// shared state.
func TestSharedBinaryLinksPostgres(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "shared", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if !strings.Contains(" "+strings.Join(strings.Fields(string(out)), " ")+" ", " github.com/walletgate/walletgate/pgstate ") {
		t.Errorf("walletgate-shared does not link pgstate")
	}
}

// The leaves import nothing from internal/ (the app layer builds on them,
// not they on it), and cmd wires through internal/app and tools without
// importing the engine, with the shared tag too.
func TestLeavesImportNoInternalAndCmdNoEngine(t *testing.T) {
	const mod = "github.com/walletgate/walletgate/"
	for _, leaf := range []string{"approval/...", "atomicfile", "caps", "connlimit", "chain/...", "engine", "gate", "journal/...", "pgstate", "policy", "signer", "tools/..."} {
		out, err := exec.Command("go", "list", "-deps", "../../"+leaf).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", leaf, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, mod+"internal/") {
				t.Errorf("%s imports %s: a leaf imports nothing from internal/", leaf, dep)
			}
		}
	}
	for _, tags := range []string{"", "shared"} {
		out, err := exec.Command("go", "list", "-tags", tags, "-f", `{{join .Imports "\n"}}`, ".").Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		for _, imp := range strings.Fields(string(out)) {
			if imp == mod+"engine" || strings.HasPrefix(imp, mod+"engine/") {
				t.Errorf("cmd/walletgate (tags %q) imports %s", tags, imp)
			}
		}
	}
}
