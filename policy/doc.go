// Package policy holds walletgate's configuration rules: the validated Config
// read from WALLETGATE_* variables, the network and known-token tables, and the
// strict parsers for user-supplied amounts and addresses. It is pure: no I/O but
// the environment it is given.
//
// Every parser here refuses rather than guesses: an input is either exactly in
// the documented form or it is rejected with an error that says what was
// received (made safe to print) and what is expected. Error values never carry
// an RPC URL's credentials, path or query.
package policy
