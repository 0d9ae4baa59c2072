package devnet

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// requireArtifacts fails the test, saying how to install them, when the
// Uniswap npm artifacts are not installed.
func requireArtifacts(t *testing.T) string {
	t.Helper()
	dir, ok := FindArtifacts()
	if !ok {
		t.Fatal(SwapTestsNeedArtifacts)
	}
	return dir
}

func startWithUniswap(t *testing.T) *Devnet {
	t.Helper()
	requireArtifacts(t)
	begin := time.Now()
	d, err := Start(context.Background(), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	t.Logf("Start with Uniswap: %v", time.Since(begin))
	require.NotNil(t, d.Contracts.Uniswap, "artifacts are installed, so Start must deploy Uniswap")
	return d
}

// Hand-encoded calls, independent of the ABIs in uniswap.go, so that the
// selectors and layouts walletgate will use are checked against real bytecode.
var (
	selQuoteExactInputSingle = hexutil.MustDecode("0xc6a5026a") // QuoterV2
	selExactInputSingle      = hexutil.MustDecode("0x04e45aaf") // SwapRouter02, no deadline
)

func word(v any) []byte {
	switch v := v.(type) {
	case common.Address:
		return common.LeftPadBytes(v[:], 32)
	case *big.Int:
		return common.LeftPadBytes(v.Bytes(), 32)
	case int:
		return common.LeftPadBytes(big.NewInt(int64(v)).Bytes(), 32)
	}
	panic("word: unsupported type")
}

func calldata(sel []byte, words ...any) []byte {
	out := append([]byte{}, sel...)
	for _, w := range words {
		out = append(out, word(w)...)
	}
	return out
}

func sel(sig string) []byte { return crypto.Keccak256([]byte(sig))[:4] }

func callWord(t *testing.T, d *Devnet, to common.Address, data []byte, index int) *big.Int {
	t.Helper()
	out, err := d.Client().CallContract(context.Background(), ethereum.CallMsg{To: &to, Data: data}, nil)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(out), 32*(index+1))
	return new(big.Int).SetBytes(out[32*index : 32*(index+1)])
}

// quote asks QuoterV2 for an exact-input single-pool quote at PoolFee.
func quote(t *testing.T, d *Devnet, tokenIn, tokenOut common.Address, amountIn *big.Int) *big.Int {
	t.Helper()
	data := calldata(selQuoteExactInputSingle, tokenIn, tokenOut, amountIn, PoolFee, 0)
	return callWord(t, d, d.Contracts.Uniswap.QuoterV2, data, 0)
}

func tokenBalance(t *testing.T, d *Devnet, token, who common.Address) *big.Int {
	t.Helper()
	return callWord(t, d, token, calldata(sel("balanceOf(address)"), who), 0)
}

// requireNear checks |got - want| <= want * bps / 10000.
func requireNear(t *testing.T, want, got *big.Int, bps int64, msg string) {
	t.Helper()
	diff := new(big.Int).Abs(new(big.Int).Sub(got, want))
	tol := new(big.Int).Div(new(big.Int).Mul(want, big.NewInt(bps)), big.NewInt(10_000))
	require.True(t, diff.Cmp(tol) <= 0, "%s: got %s, want %s within %d basis points", msg, got, want, bps)
}

const onePercent = 100 // basis points

func newAccount(t *testing.T) signer.Signer {
	t.Helper()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(path, []byte(hexutil.Encode(crypto.FromECDSA(key))), 0o600))
	s, err := signer.FromKeyFile(path)
	require.NoError(t, err)
	return s
}

func TestUniswapAddressesMatchPolicy(t *testing.T) {
	d := startWithUniswap(t)
	u := d.Contracts.Uniswap
	// Adding Uniswap must not move the tokens.
	require.Equal(t, common.HexToAddress("0x412c113686C5eC57D6DC7A01d0499e93Cc9E8dcC"), d.Contracts.USDT)
	require.Equal(t, common.HexToAddress("0x724E69488a4fbd92D7ef62c614229104D4CeF976"), d.Contracts.DAI)

	n := policy.LookupNetwork(ChainID)
	require.NotNil(t, n.Uniswap)
	require.Equal(t, n.Uniswap.Factory, u.Factory)
	require.Equal(t, n.Uniswap.QuoterV2, u.QuoterV2)
	require.Equal(t, n.Uniswap.SwapRouter02, u.SwapRouter02)
	weth, ok := policy.TokenBySymbol(ChainID, "WETH")
	require.True(t, ok)
	require.Equal(t, weth.Address, u.WETH9)
	require.Equal(t, big.NewInt(int64(weth.Decimals)), callWord(t, d, u.WETH9, sel("decimals()"), 0))

	for name, a := range map[string]common.Address{"WETH9": u.WETH9, "Factory": u.Factory, "PositionManager": u.PositionManager,
		"QuoterV2": u.QuoterV2, "SwapRouter02": u.SwapRouter02, "PoolWETHUSDT": u.PoolWETHUSDT, "PoolDAIUSDT": u.PoolDAIUSDT} {
		code, err := d.Client().CodeAt(context.Background(), a, nil)
		require.NoError(t, err)
		require.NotEmpty(t, code, name)
	}
	// The pools sit at the CREATE2 addresses the periphery computes
	// (PoolAddress.sol's POOL_INIT_CODE_HASH), so the position manager and the
	// routers find them.
	initCodeHash := common.HexToHash("0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54")
	for _, p := range []struct {
		pool, a, b common.Address
	}{{u.PoolWETHUSDT, u.WETH9, d.Contracts.USDT}, {u.PoolDAIUSDT, d.Contracts.DAI, d.Contracts.USDT}} {
		t0, t1, _, _ := poolSeed{tokenA: p.a, tokenB: p.b}.sorted()
		salt := crypto.Keccak256(word(t0), word(t1), word(PoolFee))
		require.Equal(t, crypto.CreateAddress2(u.Factory, [32]byte(salt), initCodeHash[:]), p.pool)
	}
}

func TestUniswapPoolsSeededAtRealisticPrices(t *testing.T) {
	d := startWithUniswap(t)
	u := d.Contracts.Uniswap
	usdt, dai := d.Contracts.USDT, d.Contracts.DAI
	for _, tc := range []struct {
		name         string
		pool         common.Address
		base, quoted common.Address // price of one base token in quoted tokens
		baseDec      int64
		want         *big.Rat // quoted per base, whole tokens
	}{
		{"WETH/USDT", u.PoolWETHUSDT, u.WETH9, usdt, 18, big.NewRat(3000, 1)},
		{"DAI/USDT", u.PoolDAIUSDT, dai, usdt, 18, big.NewRat(1, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			liquidity := callWord(t, d, tc.pool, sel("liquidity()"), 0)
			require.Positive(t, liquidity.Sign(), "pool has liquidity")
			sqrtP := callWord(t, d, tc.pool, sel("slot0()"), 0)
			// price = (sqrtP / 2^96)^2 token1 base units per token0 base unit.
			price := new(big.Rat).SetFrac(new(big.Int).Mul(sqrtP, sqrtP), new(big.Int).Lsh(big.NewInt(1), 192))
			t0, _, _, _ := poolSeed{tokenA: tc.base, tokenB: tc.quoted}.sorted()
			if t0 != tc.base {
				price.Inv(price) // base units of quoted per base unit of base
			}
			// Whole tokens: times 10^baseDec / 10^6 (USDT has 6 decimals).
			price.Mul(price, new(big.Rat).SetFrac(new(big.Int).Exp(big.NewInt(10), big.NewInt(tc.baseDec), nil), big.NewInt(1_000_000)))
			rel := new(big.Rat).Quo(new(big.Rat).Sub(price, tc.want), tc.want)
			require.True(t, new(big.Rat).Abs(rel).Cmp(big.NewRat(1, 1_000_000_000)) < 0, "price %s, want %s", price.FloatString(9), tc.want.FloatString(0))

		})
	}
	// The pools hold what they were seeded with, give or take the rounding
	// of a full-range position.
	requireNear(t, seedWETH, tokenBalance(t, d, u.WETH9, u.PoolWETHUSDT), 1, "WETH/USDT pool's WETH")
	requireNear(t, seedWETHUSDT, tokenBalance(t, d, usdt, u.PoolWETHUSDT), 1, "WETH/USDT pool's USDT")
	requireNear(t, seedDAI, tokenBalance(t, d, dai, u.PoolDAIUSDT), 1, "DAI/USDT pool's DAI")
	requireNear(t, seedDAIUSDT, tokenBalance(t, d, usdt, u.PoolDAIUSDT), 1, "DAI/USDT pool's USDT")

	// Seeding left the dev account's tokens exactly as Start always gave them.
	require.Equal(t, DevUSDT.String(), tokenBalance(t, d, usdt, signer.DevAddress).String())
	require.Equal(t, DevDAI.String(), tokenBalance(t, d, dai, signer.DevAddress).String())
	// It keeps the WETH the pool did not take: at least wrap - seed.
	devWETH := tokenBalance(t, d, u.WETH9, signer.DevAddress)
	left := new(big.Int).Sub(new(big.Int).Sub(uniswapWrap, seedWETH), seedWETH2)
	require.GreaterOrEqual(t, devWETH.Cmp(left), 0, "dev WETH %s", devWETH)
	requireNear(t, left, devWETH, 1, "dev WETH")
}

func TestQuoteEqualsExecutedSwap(t *testing.T) {
	ctx := context.Background()
	d := startWithUniswap(t)
	u := d.Contracts.Uniswap
	usdt, dai := d.Contracts.USDT, d.Contracts.DAI
	oneWETH := new(big.Int).Set(Ether)

	q := quote(t, d, u.WETH9, usdt, oneWETH)
	requireNear(t, usdtUnits(3000), q, onePercent, "1 WETH in USDT")
	requireNear(t, usdtUnits(1000), quote(t, d, dai, usdt, new(big.Int).Mul(big.NewInt(1000), Ether)), onePercent, "1000 DAI in USDT")
	requireNear(t, new(big.Int).Mul(big.NewInt(1000), Ether), quote(t, d, usdt, dai, usdtUnits(1000)), onePercent, "1000 USDT in DAI")

	// The dev account sells 1 WETH through SwapRouter02.exactInputSingle,
	// encoded by hand; nothing touches the pool between quote and swap.
	_, err := d.SendAsDev(ctx, &u.WETH9, nil, calldata(sel("approve(address,uint256)"), u.SwapRouter02, oneWETH), 200_000)
	require.NoError(t, err)
	q = quote(t, d, u.WETH9, usdt, oneWETH)
	before := tokenBalance(t, d, usdt, signer.DevAddress)
	rcpt, err := d.SendAsDev(ctx, &u.SwapRouter02, nil,
		calldata(selExactInputSingle, u.WETH9, usdt, PoolFee, signer.DevAddress, oneWETH, q, 0), 1_000_000)
	require.NoError(t, err)
	t.Logf("exactInputSingle gas used: %d", rcpt.GasUsed)
	got := new(big.Int).Sub(tokenBalance(t, d, usdt, signer.DevAddress), before)
	require.Equal(t, q.String(), got.String(), "USDT received equals the quote")

	// The price moved: the same quote now gives less.
	require.Equal(t, -1, quote(t, d, u.WETH9, usdt, oneWETH).Cmp(q))
}

func TestSwapAsFromAFundedAccount(t *testing.T) {
	ctx := context.Background()
	d := startWithUniswap(t)
	u := d.Contracts.Uniswap
	usdt, dai := d.Contracts.USDT, d.Contracts.DAI
	acct := newAccount(t)

	eth := new(big.Int).Mul(big.NewInt(10), Ether)
	require.NoError(t, d.FundAccount(ctx, acct.Address(), eth, usdtUnits(100_000), new(big.Int).Mul(big.NewInt(5), Ether)))
	bal, err := d.Client().BalanceAt(ctx, acct.Address(), nil)
	require.NoError(t, err)
	require.Equal(t, eth.String(), bal.String())
	require.Equal(t, usdtUnits(100_000).String(), tokenBalance(t, d, usdt, acct.Address()).String())
	require.Equal(t, new(big.Int).Mul(big.NewInt(5), Ether).String(), tokenBalance(t, d, dai, acct.Address()).String())

	// A leftover non-zero allowance: TetherLike refuses to raise it directly,
	// so SwapAs must reset it to zero first.
	_, err = d.SendAs(ctx, acct, &usdt, nil, calldata(sel("approve(address,uint256)"), u.SwapRouter02, usdtUnits(1)), 200_000)
	require.NoError(t, err)

	in := usdtUnits(10_000)
	q := quote(t, d, usdt, u.WETH9, in)
	rcpt, err := d.SwapAs(ctx, acct, usdt, u.WETH9, PoolFee, in)
	require.NoError(t, err)
	t.Logf("SwapAs USDT->WETH gas used: %d", rcpt.GasUsed)
	require.Equal(t, q.String(), tokenBalance(t, d, u.WETH9, acct.Address()).String(), "WETH received equals the quote")
	require.Equal(t, usdtUnits(90_000).String(), tokenBalance(t, d, usdt, acct.Address()).String())
	require.Equal(t, -1, quote(t, d, usdt, u.WETH9, in).Cmp(q), "buying WETH made it dearer")

	// Paying in ETH: tokenIn WETH9 sends msg.value; the account's WETH stays.
	wethBefore := tokenBalance(t, d, u.WETH9, acct.Address())
	one := new(big.Int).Set(Ether)
	q = quote(t, d, u.WETH9, usdt, one)
	_, err = d.SwapAs(ctx, acct, u.WETH9, usdt, PoolFee, one)
	require.NoError(t, err)
	require.Equal(t, new(big.Int).Add(usdtUnits(90_000), q).String(), tokenBalance(t, d, usdt, acct.Address()).String())
	require.Equal(t, wethBefore.String(), tokenBalance(t, d, u.WETH9, acct.Address()).String())
	require.Equal(t, -1, quote(t, d, u.WETH9, usdt, one).Cmp(q), "selling WETH made it cheaper")

	_, err = d.SwapAs(ctx, acct, dai, usdt, PoolFee, new(big.Int).Mul(big.NewInt(6), Ether))
	require.ErrorContains(t, err, "reverted", "more DAI than the account holds")
}

func TestStartWithoutArtifacts(t *testing.T) {
	t.Chdir(t.TempDir())
	if dir, ok := FindArtifacts(); ok {
		t.Skipf("artifacts found beside the test binary (%s); cannot test their absence", dir)
	}
	ctx := context.Background()
	d, err := Start(ctx, Options{})
	require.NoError(t, err, "no artifacts is not an error")
	t.Cleanup(func() { d.Close() })
	require.Nil(t, d.Contracts.Uniswap)
	nonce, err := d.Client().NonceAt(ctx, signer.DevAddress, nil)
	require.NoError(t, err)
	require.Equal(t, uint64(2), nonce, "only the two tokens were deployed")
	require.Equal(t, DevUSDT.String(), tokenBalance(t, d, d.Contracts.USDT, signer.DevAddress).String())

	_, err = d.SwapAs(ctx, signer.Dev(), d.Contracts.USDT, d.Contracts.DAI, PoolFee, big.NewInt(1))
	require.ErrorContains(t, err, EnableSwapsHint)
}

func TestStartFailsOnBrokenArtifacts(t *testing.T) {
	src := requireArtifacts(t)
	files := []string{artifactWETH9, artifactFactory, artifactNPM, artifactQuoter, artifactRouter}
	// editJSON rewrites one field of an artifact.
	editJSON := func(t *testing.T, path, field string, value any) {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		m[field] = value
		raw, err = json.Marshal(m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, raw, 0o644))
	}
	tests := []struct {
		name    string
		breakIt func(t *testing.T, dir string)
		want    []string
	}{
		{"bad JSON", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, artifactNPM), []byte(`{"abi": [`), 0o644))
		}, []string{"NonfungiblePositionManager", "unexpected end of JSON"}},
		{"missing package", func(t *testing.T, dir string) {
			require.NoError(t, os.RemoveAll(filepath.Join(dir, "@uniswap", "v2-periphery")))
		}, []string{"WETH9", "no such file"}},
		{"deployment reverts", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, artifactQuoter), "bytecode", "0x60006000fd") // PUSH1 0 PUSH1 0 REVERT
		}, []string{"deploy QuoterV2", "reverted"}},
		{"unlinked library", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, artifactRouter), "bytecode", "0x6080__$0123456789abcdef$__6000")
		}, []string{"SwapRouter02", "unlinked library"}},
		{"unexpected ABI", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, artifactFactory), "abi", []any{})
		}, []string{"UniswapV3Factory", "getPool"}},
		{"another contract", func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, artifactRouter), "contractName", "SwapRouter")
		}, []string{"SwapRouter02", `"SwapRouter"`}},
		{"not a node_modules directory", func(t *testing.T, dir string) {
			require.NoError(t, os.RemoveAll(filepath.Join(dir, "@uniswap")))
		}, []string{"holds no @uniswap/v3-core", "npm ci"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range files {
				raw, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(f)))
				require.NoError(t, err)
				dst := filepath.Join(dir, filepath.FromSlash(f))
				require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
				require.NoError(t, os.WriteFile(dst, raw, 0o644))
			}
			tc.breakIt(t, dir)
			d, err := Start(context.Background(), Options{ArtifactsDir: dir})
			if d != nil {
				d.Close()
			}
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestStartWithArtifactsDir(t *testing.T) {
	src := requireArtifacts(t)
	t.Chdir(t.TempDir()) // FindArtifacts is not what finds them here
	d, err := Start(context.Background(), Options{ArtifactsDir: src})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	require.NotNil(t, d.Contracts.Uniswap)
	require.Equal(t, policy.LookupNetwork(ChainID).Uniswap.SwapRouter02, d.Contracts.Uniswap.SwapRouter02)
}

func TestFindArtifactsFrom(t *testing.T) {
	root := t.TempDir()
	nm := filepath.Join(root, "src", "testdata", "node_modules")
	require.NoError(t, os.MkdirAll(filepath.Join(nm, "@uniswap", "v3-core"), 0o755))
	deep := filepath.Join(root, "src", "chain", "devnet")
	require.NoError(t, os.MkdirAll(deep, 0o755))
	elsewhere := t.TempDir()
	// A node_modules without v3-core does not count.
	require.NoError(t, os.MkdirAll(filepath.Join(elsewhere, "testdata", "node_modules", "@uniswap", "v3-periphery"), 0o755))

	for _, tc := range []struct {
		name   string
		starts []string
		want   string
	}{
		{"from a subdirectory", []string{deep}, nm},
		{"from the root itself", []string{filepath.Join(root, "src")}, nm},
		{"second start point", []string{elsewhere, deep}, nm},
		{"not found", []string{elsewhere}, ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := findArtifactsFrom(tc.starts...)
			require.Equal(t, tc.want != "", ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestSqrtPriceX96(t *testing.T) {
	q96 := new(big.Int).Lsh(big.NewInt(1), 96)
	// 1 USDT (6 decimals) = 1 DAI (18 decimals): 10^12 DAI units per USDT
	// unit, whose square root is exactly 10^6.
	require.Equal(t, new(big.Int).Mul(big.NewInt(1_000_000), q96).String(), sqrtPriceX96(usdtUnits(300_000), seedDAI).String())
	// And the other way round: 10^-6 * 2^96, rounded down.
	require.Equal(t, new(big.Int).Div(q96, big.NewInt(1_000_000)).String(), sqrtPriceX96(seedDAI, usdtUnits(300_000)).String())

	// In general it is the floor of the square root: s^2 <= a1*2^192/a0 < (s+1)^2.
	for _, c := range [][2]*big.Int{{seedWETHUSDT, seedWETH}, {seedWETH, seedWETHUSDT}, {big.NewInt(3), big.NewInt(7)}} {
		a0, a1 := c[0], c[1]
		s := sqrtPriceX96(a0, a1)
		lhs := new(big.Int).Lsh(a1, 192)
		sq := func(x *big.Int) *big.Int { return new(big.Int).Mul(new(big.Int).Mul(x, x), a0) }
		require.True(t, sq(s).Cmp(lhs) <= 0, "s^2 * a0 <= a1 * 2^192")
		require.True(t, sq(new(big.Int).Add(s, big.NewInt(1))).Cmp(lhs) > 0, "(s+1)^2 * a0 > a1 * 2^192")
	}
}

func TestBuiltInSelectorsMatchHandEncoding(t *testing.T) {
	require.Equal(t, selQuoteExactInputSingle, quoterABI.Methods["quoteExactInputSingle"].ID)
	require.Equal(t, selExactInputSingle, routerABI.Methods["exactInputSingle"].ID)
	require.True(t, strings.HasPrefix(EnableSwapsHint, "swaps are off: "))
}

// A funded account can send at once: FundAccount returns only when the
// transaction pool, not just the chain, has seen the funding (under load the
// pool used to lag and refuse the first send for "insufficient funds").
func TestFundAccountThenSendAtOnce(t *testing.T) {
	ctx := context.Background()
	d, err := Start(ctx, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	to := common.HexToAddress("0x00000000000000000000000000000000000000f1")
	for i := 0; i < 15; i++ {
		acct := newAccount(t)
		require.NoError(t, d.FundAccount(ctx, acct.Address(), Ether, nil, nil))
		_, err := d.SendAs(ctx, acct, &to, big.NewInt(1), nil, 21_000)
		require.NoError(t, err, "send %d", i)
	}
	bal, err := d.Client().BalanceAt(ctx, to, nil)
	require.NoError(t, err)
	require.Equal(t, big.NewInt(15), bal)

	require.NoError(t, d.FundAccount(ctx, to, nil, new(big.Int), nil), "nothing to send is not an error")
	require.ErrorContains(t, d.FundAccount(ctx, common.Address{}, Ether, nil, nil), "zero address")
	require.ErrorContains(t, d.FundAccount(ctx, to, big.NewInt(-1), nil, nil), "negative")
}
