package confirm

import (
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
)

// What mcp-go says to a server developer when a request cannot be sent never
// reaches the person or the assistant.
func TestElicitFailureNeverRelaysLibraryAdvice(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("%q: %w", "elicitation/create", server.ErrServerInitiatedRequestUnsupported),
		server.ErrNoActiveSession, server.ErrElicitationNotSupported,
	} {
		got := elicitFailure(err)
		for _, dev := range []string{"InputRequests", "SEP-2322", "handler", "session"} {
			require.NotContains(t, got, dev, "%v", err)
		}
	}
	require.Equal(t, "the client said no", elicitFailure(fmt.Errorf("the client said no")), "a client's own words are relayed, inert")
}
