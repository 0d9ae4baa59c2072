// Package caps enforces walletgate's spend limits per asset and per window
// (transaction, session, rolling day) with reservations that are atomic under
// concurrency.
//
// The rules:
//
//   - An asset is keyed by its address; ETH, the native coin, is the zero
//     address (policy.NativeAsset). Amounts are *big.Int base units. Nothing
//     here uses floats.
//   - A spend fits a window when used + reserved + requested ≤ cap for every
//     asset in it: equal to the cap passes, one base unit more is refused.
//   - An asset absent from a window's map is unlimited in that window. An
//     asset absent from every window is uncapped, and a spend of it is refused
//     with UNCAPPED_TOKEN unless the ledger was built to allow uncapped assets
//     (Ledger.Capped tells the caller to say plainly that no cap applies).
//   - A zero cap means nothing of that asset may be spent. A zero or nil amount
//     in a Spend is ignored: it passes every cap, even a zero cap, and is never
//     uncapped. A negative amount is refused with INVALID_SPEND.
//   - Reserve checks every asset in every window and records it all under one
//     lock, or records nothing; two concurrent reservations can never together
//     pass a cap.
//   - A reservation counts until it is settled (its amounts replaced by the
//     actual ones) or released (returned). A reservation that is never settled
//     or released stays counted for good: an unknown outcome is a spend.
//   - The per-day window is rolling: a spend counts from the moment it was
//     reserved, by the ledger's clock, until exactly 24 hours later inclusive.
//     Settling corrects the amount but keeps that moment.
//   - The zero Ledger, and a nil *Ledger, refuse every Check and Reserve with
//     LEDGER_UNAVAILABLE: failing closed is the default.
package caps
