// Package engine is walletgate's write pipeline, one sequence for every write
// kind, with no MCP in it. A write kind parses its arguments into an intent
// and builds a Plan (the legs to send, what they spend, the effects a receipt
// must show, what to re-check at confirm); the engine checks the operator's
// rules (policy's pure decisions), builds and simulates it, checks its
// effects against those rules and the caps, and issues its confirmation; at confirm it
// consumes the token, asks (token / elicit / human, behind Asker), reserves
// the caps with the transaction's nonce, re-reads and re-simulates, signs,
// journals, broadcasts, waits, verifies and settles — and returns a typed
// Outcome that the tools package renders.
//
// The outcome rule, which every answer and every later start obeys: a
// broadcast is *not sent* only when the engine can show it — the node refused
// it, a lookup by hash finds nothing, and the wallet's nonce at the latest
// block has not passed it; then the journal marks it refused-final, the caps
// are released, its nonce is free again, and recovery never sends those
// bytes. It is *sent* when the node returned the hash or knows it.
// Everything else is *unknown*: reported as pending, still counted, followed
// up with the identical signed bytes only — and only when the journal shows
// that a broadcast was attempted. A receipt counts only if it is the signed
// transaction's: its hash, its sender, its nonce.
package engine
