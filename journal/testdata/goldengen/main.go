// goldengen writes a small journal with the journal package of the commit
// it is built in: go run ./cmd/goldengen DIR FORMAT, where FORMAT (1-4) says
// which records that commit's walletgate writes (1: issue 14's build, no
// nonces; 2: nonces; 3: typed-data signatures; 4: a reservation's "by").
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/walletgate/walletgate/journal"

	"github.com/walletgate/walletgate/journal/records"
)

func main() {
	dir := os.Args[1]
	format, _ := strconv.Atoi(os.Args[2])
	t := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	if len(os.Args) > 3 { // a later session on a journal written before
		t, _ = time.Parse(time.RFC3339, os.Args[3])
	}
	clock := func() time.Time { t = t.Add(1500 * time.Millisecond); return t }
	j, err := journal.OpenOptions(dir, "golden"+os.Args[2], clock, journal.Options{SegmentSize: 1800})
	if err != nil {
		panic(err)
	}
	defer j.Close()
	app := func(kind string, data any) {
		if _, err := j.Append(kind, data); err != nil {
			panic(err)
		}
	}
	wallet := "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
	usdt := "0x5FbDB2315678afecb367f032d93F642f64180aa3"
	reserve := func(id string, nonce uint64, change map[string]string, by string) {
		d := map[string]any{"v": 1, "id": id, "at": t, "change": change}
		if format >= 2 && nonce > 0 {
			d["nonce"] = nonce - 1
		}
		if format >= 4 && by != "" {
			d["by"] = by
		}
		app(records.KindCapReserve, d)
	}
	tx := func(n int) string { return fmt.Sprintf("0x%064x", 0xa000+n) }
	signed := func(id string, n int) {
		app(records.KindSigned, map[string]any{"v": 1, "tool": "wallet_send", "leg": "transfer", "reservation": id, "tx": tx(n), "nonce": n, "from": wallet,
			"raw": fmt.Sprintf("0x02f86f82053980843b9aca0084773594008252089400000000000000000000000000000000000e2e%02x0180c001a0%064x", n, n)})
	}
	app(records.KindSessionStart, map[string]any{"v": 1, "version": "walletgate golden", "pid": 4242, "chain_id": 1337, "wallet": wallet, "signer": "key_file"})
	app(records.KindToolStart, map[string]any{"v": 1, "call": "c1", "tool": "wallet_send", "args_sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"})
	app(records.KindPreview, map[string]any{"v": 1, "tool": "wallet_send", "fingerprint": "60303ae2", "legs": 1, "spend": map[string]string{usdt: "5000000"}})
	reserve("r1", 1, map[string]string{usdt: "5000000", "ETH": "42000000000000"}, "")
	signed("r1", 0)
	app(records.KindBroadcast, map[string]any{"v": 1, "tx": tx(0), "outcome": "accepted"})
	app(records.KindToolEnd, map[string]any{"v": 1, "call": "c1", "tool": "wallet_send", "outcome": "pending", "ms": 2100})
	reserve("r2", 2, map[string]string{"ETH": "1000000000000000"}, "token") // left open: its process died before signing
	if format >= 3 {
		reserve("r3", 0, map[string]string{usdt: "1000000"}, "")
		app("signature", map[string]any{"v": 1, "tool": "wallet_sign_typed_data", "reservation": "r3", "kind": "permit", "digest": "0xd1", "token": usdt,
			"owner": wallet, "counterparty": "0x00000000000000000000000000000000000e2e99", "amount": "1000000", "nonce": "0", "until": t.Add(time.Hour), "spend": map[string]string{usdt: "1000000"}})
	}
	// The segment is sealed here or soon: the checkpoint holds a pending
	// transaction, an open reservation (and a signature, from format 3).
	for i := 0; i < 6; i++ {
		app(records.KindToolStart, map[string]any{"v": 1, "call": fmt.Sprintf("r%d", i), "tool": "wallet_balance", "args_sha256": "aa"})
		app(records.KindToolEnd, map[string]any{"v": 1, "call": fmt.Sprintf("r%d", i), "tool": "wallet_balance", "outcome": "ok", "ms": 3})
	}
	app(records.KindReceipt, map[string]any{"v": 1, "tx": tx(0), "status": 1, "block": 7, "gas_used": 52000, "fee": "52000000000000"})
	app(records.KindCapCorrect, map[string]any{"v": 1, "id": "r1", "at": t, "change": map[string]string{"ETH": "-41948000000000"}})
	if format >= 3 {
		app("signature_end", map[string]any{"v": 1, "digest": "0xd1", "reservation": "r3", "end": "expired"})
		app(records.KindCapCorrect, map[string]any{"v": 1, "id": "r3", "at": t, "change": map[string]string{usdt: "-1000000"}})
	}
	reserve("r4", 3, map[string]string{"ETH": "1000042000000000"}, "")
	signed("r4", 2)
	app(records.KindBroadcast, map[string]any{"v": 1, "tx": tx(2), "outcome": "accepted"})
	app(records.KindReceipt, map[string]any{"v": 1, "tx": tx(2), "status": 1, "block": 8, "gas_used": 21000, "fee": "21000000000000"})
	app(records.KindCapCorrect, map[string]any{"v": 1, "id": "r4", "at": t, "change": map[string]string{"ETH": "-21000000000000"}})
	for i := 6; i < 14; i++ {
		app(records.KindToolStart, map[string]any{"v": 1, "call": fmt.Sprintf("r%d", i), "tool": "wallet_balance", "args_sha256": "aa"})
		app(records.KindToolEnd, map[string]any{"v": 1, "call": fmt.Sprintf("r%d", i), "tool": "wallet_balance", "outcome": "ok", "ms": 3})
	}
	app(records.KindSessionEnd, map[string]any{"v": 1, "pid": 4242})
}
