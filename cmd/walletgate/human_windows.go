package main

// humanModeUnavailable says why WALLETGATE_CONFIRM=human and `walletgate
// approvals` are refused on Windows: the approval socket and address files
// are kept private by Unix file modes and owner ids, which Windows does not
// have. Refusing at start-up is clearer than a server whose writes all fail.
func humanModeUnavailable() error {
	return usagef("WALLETGATE_CONFIRM=human is not available on Windows yet: the approval page's address file and the approvals socket are kept private by Unix file modes; use WALLETGATE_CONFIRM=token (the caps bound what the model can move) or WALLETGATE_CONFIRM=elicit with a client that shows MCP elicitation forms")
}
