package policy_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/policy"
)

func TestWritesOff(t *testing.T) {
	cfg := func(tools, confirm string) policy.Config { return policy.Config{Tools: tools, Confirm: confirm} }
	cases := []struct {
		name           string
		cfg            policy.Config
		key, approvals bool
		off            bool
		mentions       string
	}{
		{"a key, token mode", cfg("", policy.ConfirmToken), true, false, false, ""},
		{"watch-only", cfg("", policy.ConfirmToken), false, false, true, "watch-only"},
		{"read tools only", cfg("read", policy.ConfirmToken), true, false, true, "WALLETGATE_TOOLS=read"},
		{"human mode without its page", cfg("", policy.ConfirmHuman), true, false, true, "confirmation mode human"},
		{"human mode with its page", cfg("", policy.ConfirmHuman), true, true, false, ""},
		{"an unknown mode", cfg("", "telepathy"), true, true, true, "telepathy is not known"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			why := policy.WritesOff(c.cfg, c.key, c.approvals)
			require.Equal(t, c.off, why != "", why)
			require.Contains(t, why, c.mentions)
		})
	}
}

func TestWriteAllowed(t *testing.T) {
	dev := policy.LookupNetwork(1337)
	mainnet := policy.LookupNetwork(1)
	a := common.HexToAddress("0x00000000000000000000000000000000000000a1")
	b := common.HexToAddress("0x00000000000000000000000000000000000000b2")
	cases := []struct {
		name  string
		rules policy.WriteRules
		to    *common.Address
		code  string // "": allowed
	}{
		{"dev chain, no list", policy.WriteRules{Network: dev}, &a, ""},
		{"writes off wins over everything", policy.WriteRules{Off: "watch-only", Network: mainnet, AllowTo: []common.Address{b}}, &a, policy.CodeWritesDisabled},
		{"mainnet without the opt-in", policy.WriteRules{Network: mainnet}, &a, policy.CodeMainnetNotAllowed},
		{"mainnet with the opt-in", policy.WriteRules{Network: mainnet, AllowMainnet: true}, &a, ""},
		{"an unknown chain counts as mainnet", policy.WriteRules{Network: policy.LookupNetwork(987654321)}, nil, policy.CodeMainnetNotAllowed},
		{"recipient on the list", policy.WriteRules{Network: dev, AllowTo: []common.Address{a, b}}, &b, ""},
		{"recipient off the list", policy.WriteRules{Network: dev, AllowTo: []common.Address{b}}, &a, policy.CodeRecipientNotAllowed},
		{"no recipient: the list does not bind", policy.WriteRules{Network: dev, AllowTo: []common.Address{b}}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := policy.WriteAllowed(c.rules, c.to)
			if c.code == "" {
				require.Nil(t, d)
				return
			}
			require.NotNil(t, d)
			require.Equal(t, c.code, d.Code)
			switch c.code {
			case policy.CodeWritesDisabled:
				require.Equal(t, c.rules.Off, d.Off)
			case policy.CodeMainnetNotAllowed:
				require.Equal(t, c.rules.Network, d.Network)
			case policy.CodeRecipientNotAllowed:
				require.Equal(t, *c.to, d.To)
				require.Equal(t, c.rules.AllowTo, d.AllowTo)
			}
		})
	}
}

func TestCheckExposure(t *testing.T) {
	unlimited := policy.UnlimitedAllowance
	below := new(big.Int).Sub(unlimited, big.NewInt(1))
	cases := []struct {
		name      string
		amount    *big.Int
		perTx     *big.Int
		denied    bool
		unlimited bool
	}{
		{"exact, no cap", big.NewInt(25), nil, false, false},
		{"at the per-transaction cap", big.NewInt(25), big.NewInt(25), false, false},
		{"above the per-transaction cap", big.NewInt(26), big.NewInt(25), true, false},
		{"2^255 is unlimited", unlimited, nil, true, true},
		{"max uint256 is unlimited, even with a cap", new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)), big.NewInt(25), true, true},
		{"just below 2^255 and uncapped", below, nil, false, false},
		{"a revoke", new(big.Int), big.NewInt(25), false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := policy.CheckExposure(c.amount, c.perTx)
			require.Equal(t, c.denied, d != nil)
			if d == nil {
				return
			}
			require.Equal(t, policy.CodeApprovalTooLarge, d.Code)
			require.Equal(t, c.unlimited, d.Unlimited)
			if !c.unlimited {
				require.Equal(t, c.perTx, d.Limit)
			}
		})
	}
}

func TestTier(t *testing.T) {
	eth := policy.NativeAsset
	usdt := common.HexToAddress("0x00000000000000000000000000000000000000a1")
	dai := common.HexToAddress("0x00000000000000000000000000000000000000b2")
	n := big.NewInt
	spend := func(kv ...any) map[common.Address]*big.Int {
		m := map[common.Address]*big.Int{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(common.Address)] = n(int64(kv[i+1].(int)))
		}
		return m
	}
	limits := spend(eth, 100, usdt, 50)
	cases := []struct {
		name    string
		in      policy.TierInput
		why     string
		asset   common.Address
		byToken bool
	}{
		{"no threshold: the person approves all", policy.TierInput{Spend: spend(eth, 1)}, policy.TierNone, common.Address{}, false},
		{"unknown typed data", policy.TierInput{HumanAbove: limits, UnknownTyped: true}, policy.TierUnknownTyped, common.Address{}, false},
		{"within", policy.TierInput{HumanAbove: limits, Spend: spend(eth, 10, usdt, 50), Day: spend(eth, 90)}, policy.TierWithin, common.Address{}, true},
		{"an asset not named", policy.TierInput{HumanAbove: limits, Spend: spend(eth, 10, dai, 1)}, policy.TierNotNamed, dai, false},
		{"uncapped beats not named", policy.TierInput{HumanAbove: limits, Spend: spend(dai, 1), Uncapped: map[common.Address]bool{dai: true}}, policy.TierUncapped, dai, false},
		{"above on its own", policy.TierInput{HumanAbove: limits, Spend: spend(usdt, 51)}, policy.TierAbove, usdt, false},
		{"above with the day", policy.TierInput{HumanAbove: limits, Spend: spend(eth, 10), Day: spend(eth, 91)}, policy.TierAboveDay, eth, false},
		{"ETH is judged first", policy.TierInput{HumanAbove: limits, Spend: spend(usdt, 51, eth, 101)}, policy.TierAbove, eth, false},
		{"an empty threshold names nothing", policy.TierInput{HumanAbove: spend(), Spend: spend(eth, 1)}, policy.TierNotNamed, eth, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := policy.Tier(c.in)
			require.Equal(t, c.why, d.Why)
			require.Equal(t, c.byToken, d.ByToken)
			require.Equal(t, c.asset, d.Asset)
		})
	}
	d := policy.Tier(policy.TierInput{HumanAbove: limits, Spend: spend(usdt, 5, eth, 10), Day: spend(eth, 90, usdt, 45)})
	require.Equal(t, []policy.TierWithinAsset{{Asset: eth, Total: n(100), Limit: n(100)}, {Asset: usdt, Total: n(50), Limit: n(50)}}, d.Within, "ETH first, totals with the day")
	d = policy.Tier(policy.TierInput{HumanAbove: limits, Spend: spend(eth, 10), Day: spend(eth, 91)})
	require.Equal(t, n(10), d.Spend)
	require.Equal(t, n(91), d.Used)
	require.Equal(t, n(100), d.Limit)
}
