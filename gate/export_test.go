package gate

import "io"

// SetRandom replaces the Gate's random source, so tests can make it fail.
func (g *Gate) SetRandom(r io.Reader) { g.random = r }

// WriteInput exposes the fingerprint's hash input to tests of its encoding.
var WriteInput = writeInput
