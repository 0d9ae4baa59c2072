package app

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/policy"
)

// A configuration New cannot serve is refused with a *UsageError (the
// command's usage exit status) that says what to set, and no App.
func TestNewRefusesAConfigurationItCannotServe(t *testing.T) {
	for name, env := range map[string][]string{
		"no node":           nil,
		"no wallet":         {"WALLETGATE_RPC=http://127.0.0.1:1", "WALLETGATE_CHAIN_ID=1337"},
		"--dev with a node": {"WALLETGATE_RPC=http://127.0.0.1:1"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("WALLETGATE_STATE_DIR", t.TempDir())
			cfg, err := policy.Load(env)
			require.NoError(t, err)
			a, err := New(context.Background(), Options{Config: cfg, Dev: name == "--dev with a node"})
			require.Nil(t, a)
			var ue *UsageError
			require.True(t, errors.As(err, &ue), "%T: %v", err, err)
			require.Contains(t, ue.Error(), "WALLETGATE_")
		})
	}
}
