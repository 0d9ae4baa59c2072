package tools

// What the model is told in service mode (Deps.Service): the person's part,
// in words the model can pass on, and no mechanism the model could run
// itself (no command, no address, no path).

// serviceApproval says what happens next for preview id of tool.
func serviceApproval(id, tool string) string {
	return "ask the person to approve preview " + id + " on the approval page. Approving shows them a one-time code; then call " + tool + " again with exactly the same arguments plus \"confirm\": \"<that code>\". The code works once, for this preview only, and expires with it. Only the person can approve."
}

// serviceInstructions are the instructions in service mode with human
// confirmation.
func (s *Server) serviceInstructions() string {
	writes := `The first call returns a preview; nothing is signed. In this server's mode the preview carries no token: ask the person to approve it on the approval page, where they are shown a one-time code. Ask them for it, then call the same tool again with exactly the same arguments plus "confirm": "<code>". A code works once, for that preview only, and expires with it.`
	if s.caps.HumanAbove != nil {
		return instructionsReads + writes + instructionsTiered + instructionsTail
	}
	return instructionsReads + writes + instructionsTail
}
