package confirm

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/engine"
	"github.com/walletgate/walletgate/policy"
)

func TestTokenMayConfirmOnlyATokenTierPlan(t *testing.T) {
	m := New(Deps{Mode: policy.ConfirmHuman, Tier: func(*engine.Plan) (bool, string) { return false, "" }})
	token := "wgc_" + strings.Repeat("a", 32)
	ask := func(confirm string, p *engine.Plan) *Refusal {
		h := &humanMode{m: m}
		if _, ref := h.Redeem(context.Background(), confirm, "wallet_send", nil); ref != nil {
			return ref
		}
		return h.Ask(context.Background(), p).Denial()
	}
	ref := ask(token, &engine.Plan{})
	require.NotNil(t, ref, "a plan that needed a person is never confirmed by a token")
	require.Contains(t, ref.Message, "a token cannot confirm it. Nothing was signed or sent.")
	require.Nil(t, ask(token, &engine.Plan{ByToken: true}))
	h := &humanMode{m: m}
	require.Nil(t, h.Ask(context.Background(), &engine.Plan{}).Denial(), "the person's code went through the broker")
}
