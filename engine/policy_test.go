package engine

import (
	"context"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/caps"
	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/gate"
	"github.com/walletgate/walletgate/journal/records"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// The engine applies the operator's rules itself, on the effects, for every
// plan it builds: an unlimited allowance is refused even for a token no cap
// applies to (the caps cannot catch it), and a spender off the allow-list is
// refused although the plan names no recipient. Nothing is signed.
func TestTheEngineAppliesPolicyToEffects(t *testing.T) {
	b := newTestBed(t)
	spender := common.HexToAddress("0x00000000000000000000000000000000005be7de")
	eth := map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18)}
	engineWith := func(rules *policy.WriteRules) *Engine {
		return New(Deps{Chain: b.chain, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Minute, 8, nil),
			Limits: caps.Limits{PerTx: eth, PerSession: eth, PerDay: eth}, Capped: true, AllowUncapped: true,
			Rules: rules, Recorder: &memRecorder{now: time.Now}, ReceiptTimeout: 5 * time.Second})
	}
	approve := func(amount *big.Int) *Plan {
		return &Plan{Legs: []Leg{{Label: "call", Call: chain.Call{From: signer.DevAddress, To: b.dev.Contracts.DAI, Data: chain.ApproveData(spender, amount)}}}}
	}
	nonce := b.nonce()

	e := engineWith(&policy.WriteRules{Network: policy.LookupNetwork(1337)})
	_, ref := e.BuildTraced(context.Background(), approve(new(big.Int).Set(policy.UnlimitedAllowance)))
	require.NotNil(t, ref)
	require.Equal(t, CodeApprovalTooLarge, ref.Code, ref.Message)
	require.Contains(t, ref.Message, "UNLIMITED amount of DAI")

	p := approve(big.NewInt(5))
	_, ref = e.BuildTraced(context.Background(), p)
	require.Nil(t, ref, "an exact allowance of an uncapped token, the operator allowing them")

	listed := common.HexToAddress("0x00000000000000000000000000000000000a110e")
	e = engineWith(&policy.WriteRules{Network: policy.LookupNetwork(1337), AllowTo: []common.Address{listed}})
	_, ref = e.BuildTraced(context.Background(), approve(big.NewInt(5)))
	require.NotNil(t, ref)
	require.Equal(t, CodeRecipientNotAllowed, ref.Code, ref.Message)
	require.Contains(t, ref.Message, "an allowance of 0.000000000000000005 DAI")

	e = engineWith(&policy.WriteRules{Network: policy.LookupNetwork(1)})
	require.Equal(t, CodeMainnetNotAllowed, e.Allowed(nil).Code)
	_, ref = e.BuildTraced(context.Background(), approve(big.NewInt(5)))
	require.NotNil(t, ref)
	require.Equal(t, CodeMainnetNotAllowed, ref.Code, "the effects' check is the same rule")
	require.Equal(t, nonce, b.nonce(), "nothing signed")
}

// unreadable is a recorder whose live state cannot be read (a corrupt or
// unreadable journal).
type unreadable struct{ memRecorder }

func (u *unreadable) View(func(*records.Live) error) error {
	return errors.New("journal: record 7: checksum mismatch")
}

// The preview's threshold decision fails closed: when what token-confirmed
// writes spent today cannot be read, the person approves; a token never
// suffices on an unknown day.
func TestTheThresholdDecisionFailsClosedOnAnUnreadableDay(t *testing.T) {
	b := newTestBed(t)
	eth := map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18)}
	e := New(Deps{Chain: b.chain, Signer: signer.Dev(), Address: signer.DevAddress, Gate: gate.New(time.Minute, 8, nil),
		Limits: caps.Limits{PerTx: eth, PerSession: eth, PerDay: eth}, Capped: true,
		HumanAbove: map[common.Address]*big.Int{policy.NativeAsset: big.NewInt(1e18)}, Recorder: &unreadable{memRecorder{now: time.Now}}})
	d := e.Tier(&Plan{Spend: caps.Spend{policy.NativeAsset: big.NewInt(1)}})
	require.Equal(t, policy.TierDayUnknown, d.Why, "1 wei under a 1 ETH threshold, but the day could not be read")
}
