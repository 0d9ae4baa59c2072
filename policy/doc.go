// Package policy holds walletgate's configuration rules and the pure decisions
// made on them: the validated Config read from WALLETGATE_* variables, the
// network and known-token tables, the strict parsers for user-supplied amounts
// and addresses, and what every write obeys (writes off, the allowed
// recipients, the allowance limits, the human-mode tier). It is pure: no I/O
// but the environment it is given.
//
// Every parser here refuses rather than guesses: an input is either exactly in
// the documented form or it is rejected with an error that says what was
// received (made safe to print) and what is expected. Error values never carry
// an RPC URL's credentials, path or query.
package policy
