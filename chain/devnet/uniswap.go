// Uniswap v3 on the dev chain.
//
// Rules of this file:
//   - The contracts come from Uniswap's npm packages, installed at build and
//     test time by `cd testdata && npm ci` (testdata/package.json pins them).
//     None of their files is embedded in the binary or committed (licences).
//   - Absent artifacts are not an error: the chain starts without Uniswap
//     (Contracts.Uniswap == nil) and EnableSwapsHint says how to turn swaps on.
//     Artifacts that are there but unusable (unreadable, bad JSON, an
//     unexpected ABI, a reverted deployment) are an error: the chain must not
//     quietly come up without what was installed.
//   - The dev account deploys everything at fixed nonces (2 to 6) right after
//     the two tokens, so every address is the same on every start; policy's
//     chain-1337 tables list them and the tests check that they match.
//   - Seeding the pools leaves the dev account's USDT and DAI balances at
//     exactly DevUSDT and DevDAI: the pools' USDT and DAI are minted for the
//     purpose, and with these seeds the position manager takes all of them
//     (rounding is left over in WETH only; uniswap_test.go checks the
//     balances, so seeds that leave USDT or DAI behind fail there). The dev
//     account's ETH is lower by the ETH it wrapped (uniswapWrap) and the gas;
//     it keeps the WETH the pool did not take.
package devnet

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/txpool"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/walletgate/walletgate/signer"
)

// EnableSwapsHint is what to tell a user when the dev chain came up without
// Uniswap because its artifacts are not installed: the exact step, which
// works for a binary anywhere because it fills DefaultArtifactsDir.
const EnableSwapsHint = "swaps are off: the dev chain found no Uniswap artifacts. To turn swaps on, run ./scripts/demo once in the walletgate source tree, or there run 'cd testdata && npm ci --omit=peer && cd .. && go run ./cmd/walletgate-devnet install-artifacts' (copies them to the user's data directory), or set WALLETGATE_DEV_ARTIFACTS to a node_modules directory that holds them; then restart"

// SwapTestsNeedArtifacts is what a swap test fails with when the dev chain
// came up without Uniswap: the step of README's set-up that installs the
// artifacts (./scripts/test runs it first). The swap tests fail rather than
// skip, so a plain go test never passes without having run them.
const SwapTestsNeedArtifacts = "the swap tests need the Uniswap npm artifacts and the dev chain found none (it looks for testdata/node_modules upward from the test's directory, then in the user's data directory): run 'cd testdata && npm ci --omit=peer' in the walletgate source tree (./scripts/test does it), then test again"

// PoolFee is the fee tier of the dev chain's pools, in hundredths of a basis
// point: 500 is 0.05%, with tick spacing 10.
const PoolFee = 500

// Uniswap is the dev chain's Uniswap v3 deployment. Every address is a CREATE
// address of the dev account at a fixed nonce (WETH9 2, Factory 3,
// PositionManager 4, QuoterV2 5, SwapRouter02 6) or, for the pools, the
// factory's CREATE2 address for the pair at PoolFee.
type Uniswap struct {
	WETH9           common.Address // canonical WETH9
	Factory         common.Address // UniswapV3Factory
	PositionManager common.Address // NonfungiblePositionManager, no token descriptor
	QuoterV2        common.Address // QuoterV2 (swap-router-contracts)
	SwapRouter02    common.Address // SwapRouter02, v3 only (no v2 factory)
	PoolWETHUSDT    common.Address // fee 500, full range, 3000 USDT per WETH
	PoolDAIUSDT     common.Address // fee 500, full range, 1 USDT per DAI
	PoolWETHDAI     common.Address // fee 500, full range, 3000 DAI per WETH
}

// uniswapFirstNonce is the dev account's nonce for the first Uniswap
// deployment: the two tokens take nonces 0 and 1.
const uniswapFirstNonce = 2

// Full-range ticks for tick spacing 10 (TickMath.MIN_TICK is -887272).
const (
	fullRangeLower = -887270
	fullRangeUpper = 887270
)

// What the dev account puts in: the ETH it wraps, and the two pools' seed
// amounts in base units. 500 WETH against 1,500,000 USDT keeps a 1 WETH quote
// within 0.3% of 3000 USDT (price impact plus the 0.05% fee: 2992.5 USDT);
// 100 WETH would put it more than 1% below.
var (
	uniswapWrap  = new(big.Int).Mul(big.NewInt(1_000), Ether)
	seedWETH     = new(big.Int).Mul(big.NewInt(500), Ether)
	seedWETHUSDT = usdtUnits(1_500_000)
	seedDAI      = new(big.Int).Mul(big.NewInt(300_000), Ether)
	seedDAIUSDT  = usdtUnits(300_000)
	// WETH/DAI: an 18-decimal pair at the same price as WETH/USDT, so a swap
	// can go from WETH to an 18-decimal token in one pool.
	seedWETH2   = new(big.Int).Mul(big.NewInt(300), Ether)
	seedWETHDAI = new(big.Int).Mul(big.NewInt(900_000), Ether)
)

// burnAddress receives what pool seeding leaves over.
var burnAddress = common.HexToAddress("0x000000000000000000000000000000000000dEaD")

var (
	balanceOfABI     = mustABI(`[{"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"owner","type":"address"}],"outputs":[{"name":"","type":"uint256"}]}]`)
	erc20TransferABI = mustABI(`[{"type":"function","name":"transfer","inputs":[{"name":"to","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[]}]`)
)

func usdtUnits(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1_000_000)) }

// Where each artifact lives under node_modules, as the npm tarballs lay them out.
const (
	artifactWETH9   = "@uniswap/v2-periphery/build/WETH9.json"
	artifactFactory = "@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json"
	artifactNPM     = "@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json"
	artifactQuoter  = "@uniswap/swap-router-contracts/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json"
	artifactRouter  = "@uniswap/swap-router-contracts/artifacts/contracts/SwapRouter02.sol/SwapRouter02.json"

	// artifactMarker is what FindArtifacts looks for.
	artifactMarker = "@uniswap/v3-core"
	// maxArtifactSize bounds what is read of one artifact file (the largest is
	// about 130 KB).
	maxArtifactSize = 8 << 20
)

// The methods walletgate calls, written out so that SwapAs and FundAccount
// need no artifact. loadArtifact checks that each Uniswap artifact has the
// methods it will be called with.
var (
	erc20ABI = mustABI(`[
	{"type":"function","name":"approve","inputs":[{"name":"spender","type":"address"},{"name":"value","type":"uint256"}],"outputs":[]},
	{"type":"function","name":"allowance","inputs":[{"name":"owner","type":"address"},{"name":"spender","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
	{"type":"function","name":"mint","inputs":[{"name":"to","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[]}]`)
	wethABI = mustABI(`[
	{"type":"function","name":"deposit","stateMutability":"payable","inputs":[],"outputs":[]},
	{"type":"function","name":"approve","inputs":[{"name":"guy","type":"address"},{"name":"wad","type":"uint256"}],"outputs":[{"name":"","type":"bool"}]}]`)
	factoryABI = mustABI(`[
	{"type":"function","name":"getPool","inputs":[{"name":"tokenA","type":"address"},{"name":"tokenB","type":"address"},{"name":"fee","type":"uint24"}],"outputs":[{"name":"","type":"address"}]}]`)
	npmABI = mustABI(`[
	{"type":"function","name":"createAndInitializePoolIfNecessary","stateMutability":"payable","inputs":[{"name":"token0","type":"address"},{"name":"token1","type":"address"},{"name":"fee","type":"uint24"},{"name":"sqrtPriceX96","type":"uint160"}],"outputs":[{"name":"pool","type":"address"}]},
	{"type":"function","name":"mint","stateMutability":"payable","inputs":[{"name":"params","type":"tuple","components":[
		{"name":"token0","type":"address"},{"name":"token1","type":"address"},{"name":"fee","type":"uint24"},
		{"name":"tickLower","type":"int24"},{"name":"tickUpper","type":"int24"},
		{"name":"amount0Desired","type":"uint256"},{"name":"amount1Desired","type":"uint256"},
		{"name":"amount0Min","type":"uint256"},{"name":"amount1Min","type":"uint256"},
		{"name":"recipient","type":"address"},{"name":"deadline","type":"uint256"}]}],
	 "outputs":[{"name":"tokenId","type":"uint256"},{"name":"liquidity","type":"uint128"},{"name":"amount0","type":"uint256"},{"name":"amount1","type":"uint256"}]}]`)
	quoterABI = mustABI(`[
	{"type":"function","name":"quoteExactInputSingle","inputs":[{"name":"params","type":"tuple","components":[
		{"name":"tokenIn","type":"address"},{"name":"tokenOut","type":"address"},{"name":"amountIn","type":"uint256"},
		{"name":"fee","type":"uint24"},{"name":"sqrtPriceLimitX96","type":"uint160"}]}],
	 "outputs":[{"name":"amountOut","type":"uint256"},{"name":"sqrtPriceX96After","type":"uint160"},{"name":"initializedTicksCrossed","type":"uint32"},{"name":"gasEstimate","type":"uint256"}]}]`)
	routerABI = mustABI(`[
	{"type":"function","name":"exactInputSingle","stateMutability":"payable","inputs":[{"name":"params","type":"tuple","components":[
		{"name":"tokenIn","type":"address"},{"name":"tokenOut","type":"address"},{"name":"fee","type":"uint24"},
		{"name":"recipient","type":"address"},{"name":"amountIn","type":"uint256"},
		{"name":"amountOutMinimum","type":"uint256"},{"name":"sqrtPriceLimitX96","type":"uint160"}]}],
	 "outputs":[{"name":"amountOut","type":"uint256"}]}]`)
)

func mustABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic("devnet: bad built-in ABI: " + err.Error())
	}
	return a
}

// Go shapes of the tuples above (field names are the ABI names in CamelCase).
type mintParams struct {
	Token0, Token1                 common.Address
	Fee, TickLower, TickUpper      *big.Int
	Amount0Desired, Amount1Desired *big.Int
	Amount0Min, Amount1Min         *big.Int
	Recipient                      common.Address
	Deadline                       *big.Int
}

type exactInputSingleParams struct {
	TokenIn, TokenOut common.Address
	Fee               *big.Int
	Recipient         common.Address
	AmountIn          *big.Int
	AmountOutMinimum  *big.Int
	SqrtPriceLimitX96 *big.Int
}

// FindArtifacts looks for the installed Uniswap npm packages: the directory
// testdata/node_modules that holds @uniswap/v3-core, searched for in the
// current directory and each parent, then in the running executable's
// directory and each parent, and last DefaultArtifactsDir (what
// InstallArtifacts fills). It returns that node_modules directory.
func FindArtifacts() (dir string, ok bool) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		starts = append(starts, filepath.Dir(exe))
	}
	if dir, ok := findArtifactsFrom(starts...); ok {
		return dir, true
	}
	if dir, err := DefaultArtifactsDir(); err == nil && HasArtifacts(dir) {
		return dir, true
	}
	return "", false
}

func findArtifactsFrom(starts ...string) (string, bool) {
	for _, start := range starts {
		dir, err := filepath.Abs(start)
		if err != nil {
			continue
		}
		for {
			nm := filepath.Join(dir, "testdata", "node_modules")
			if isDir(filepath.Join(nm, filepath.FromSlash(artifactMarker))) {
				return nm, true
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", false
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// startUniswap deploys Uniswap when its artifacts are found (or when dir names
// them) and records it in d.Contracts.Uniswap. Not finding them is not an
// error; an explicit dir without them is.
func (d *Devnet) startUniswap(ctx context.Context, dir string) error {
	if dir == "" {
		found, ok := FindArtifacts()
		if !ok {
			return nil
		}
		dir = found
	} else if !HasArtifacts(dir) {
		return fmt.Errorf("dev chain: uniswap artifacts: %s holds no %s (it should be a node_modules directory, as 'cd testdata && npm ci' or 'walletgate-devnet install-artifacts' leaves it)", dir, artifactMarker)
	}
	u, err := d.deployUniswap(ctx, dir)
	if err != nil {
		return fmt.Errorf("dev chain: uniswap (artifacts in %s): %w", dir, err)
	}
	d.Contracts.Uniswap = u
	return nil
}

// artifact is a loaded contract artifact: its ABI and creation bytecode.
type artifact struct {
	name string
	abi  abi.ABI
	code []byte
}

// loadArtifact reads the JSON artifact rel under dir, whose contract is name
// (checked when the file says), and checks that its ABI has each of the
// methods walletgate will call.
func loadArtifact(dir, rel, name string, calls ...abi.ABI) (*artifact, error) {
	path := filepath.Join(dir, filepath.FromSlash(rel))
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxArtifactSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read %s: %w", name, path, err)
	}
	if len(raw) > maxArtifactSize {
		return nil, fmt.Errorf("%s: %s is larger than %d bytes", name, path, maxArtifactSize)
	}
	var j struct {
		ContractName string          `json:"contractName"`
		ABI          json.RawMessage `json:"abi"`
		Bytecode     string          `json:"bytecode"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, path, err)
	}
	if j.ContractName != "" && j.ContractName != name {
		return nil, fmt.Errorf("%s: %s holds contract %q", name, path, j.ContractName)
	}
	if len(j.ABI) == 0 {
		return nil, fmt.Errorf("%s: %s has no abi", name, path)
	}
	parsed, err := abi.JSON(bytes.NewReader(j.ABI))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: abi: %w", name, path, err)
	}
	hexCode := strings.TrimPrefix(j.Bytecode, "0x")
	if strings.Contains(hexCode, "__") {
		return nil, fmt.Errorf("%s: %s: bytecode has an unlinked library placeholder", name, path)
	}
	code, err := hex.DecodeString(hexCode)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: bytecode: %w", name, path, err)
	}
	if len(code) == 0 {
		return nil, fmt.Errorf("%s: %s: empty bytecode", name, path)
	}
	for _, want := range calls {
		for _, m := range want.Methods {
			if _, err := parsed.MethodById(m.ID); err != nil {
				return nil, fmt.Errorf("%s: %s: abi has no %s (another package version?)", name, path, m.Sig)
			}
		}
	}
	return &artifact{name: name, abi: parsed, code: code}, nil
}

// creation is the artifact's deployment data: bytecode then the ABI-encoded
// constructor arguments.
func (a *artifact) creation(args ...any) ([]byte, error) {
	ctor, err := a.abi.Pack("", args...)
	if err != nil {
		return nil, fmt.Errorf("%s constructor: %w", a.name, err)
	}
	return append(append([]byte{}, a.code...), ctor...), nil
}

// deployUniswap deploys WETH9, the factory, the position manager, QuoterV2
// and SwapRouter02 from the dev account, then creates and seeds the two
// pools. The transactions go out back to back and are waited for together.
func (d *Devnet) deployUniswap(ctx context.Context, dir string) (*Uniswap, error) {
	weth9, err := loadArtifact(dir, artifactWETH9, "WETH9", wethABI)
	if err != nil {
		return nil, err
	}
	factory, err := loadArtifact(dir, artifactFactory, "UniswapV3Factory", factoryABI)
	if err != nil {
		return nil, err
	}
	npm, err := loadArtifact(dir, artifactNPM, "NonfungiblePositionManager", npmABI)
	if err != nil {
		return nil, err
	}
	quoter, err := loadArtifact(dir, artifactQuoter, "QuoterV2", quoterABI)
	if err != nil {
		return nil, err
	}
	router, err := loadArtifact(dir, artifactRouter, "SwapRouter02", routerABI)
	if err != nil {
		return nil, err
	}

	dev := signer.Dev()
	nonce, err := d.client.PendingNonceAt(ctx, dev.Address())
	if err != nil {
		return nil, err
	}
	if nonce != uniswapFirstNonce {
		return nil, fmt.Errorf("dev account nonce is %d, want %d: the deployment would not land at the addresses policy lists", nonce, uniswapFirstNonce)
	}
	at := func(i uint64) common.Address { return crypto.CreateAddress(dev.Address(), nonce+i) }
	u := &Uniswap{WETH9: at(0), Factory: at(1), PositionManager: at(2), QuoterV2: at(3), SwapRouter02: at(4)}
	usdt, dai := d.Contracts.USDT, d.Contracts.DAI

	// Fixed gas limits, since no estimate can see the state the earlier steps
	// of the batch leave: about 1.3 times what each step uses (the rest is
	// refunded). Writing a new storage slot is dear under the dev chain's fork
	// rules: an approve from zero uses about 134,000 gas.
	var b batch
	b.deploy(weth9, 1_150_000)
	b.deploy(factory, 7_500_000)
	b.deploy(npm, 8_000_000, u.Factory, u.WETH9, common.Address{})
	b.deploy(quoter, 2_400_000, u.Factory, u.WETH9)
	b.deploy(router, 7_100_000, common.Address{}, u.Factory, u.PositionManager, u.WETH9)
	b.call("wrap ETH", u.WETH9, uniswapWrap, 200_000, wethABI, "deposit")
	b.call("approve WETH9", u.WETH9, nil, 200_000, wethABI, "approve", u.PositionManager, abi.MaxUint256)
	// TetherLike refuses to change a non-zero allowance to another non-zero
	// one: approve once, from zero, and for good (a max allowance is never
	// decremented).
	b.call("approve USDT", usdt, nil, 200_000, erc20ABI, "approve", u.PositionManager, abi.MaxUint256)
	b.call("approve DAI", dai, nil, 200_000, erc20ABI, "approve", u.PositionManager, abi.MaxUint256)
	b.call("mint USDT for the pools", usdt, nil, 200_000, erc20ABI, "mint", dev.Address(), new(big.Int).Add(seedWETHUSDT, seedDAIUSDT))
	b.call("mint DAI for the pools", dai, nil, 200_000, erc20ABI, "mint", dev.Address(), new(big.Int).Add(seedDAI, seedWETHDAI))
	seeds := []poolSeed{
		{label: "WETH/USDT", tokenA: u.WETH9, amountA: seedWETH, tokenB: usdt, amountB: seedWETHUSDT},
		{label: "DAI/USDT", tokenA: dai, amountA: seedDAI, tokenB: usdt, amountB: seedDAIUSDT},
		{label: "WETH/DAI", tokenA: u.WETH9, amountA: seedWETH2, tokenB: dai, amountB: seedWETHDAI},
	}
	for _, s := range seeds {
		t0, t1, a0, a1 := s.sorted()
		b.call("create pool "+s.label, u.PositionManager, nil, 6_500_000, npmABI, "createAndInitializePoolIfNecessary",
			t0, t1, big.NewInt(PoolFee), sqrtPriceX96(a0, a1))
		b.call("add liquidity "+s.label, u.PositionManager, nil, 3_300_000, npmABI, "mint", mintParams{
			Token0: t0, Token1: t1, Fee: big.NewInt(PoolFee),
			TickLower: big.NewInt(fullRangeLower), TickUpper: big.NewInt(fullRangeUpper),
			Amount0Desired: a0, Amount1Desired: a1, Amount0Min: new(big.Int), Amount1Min: new(big.Int),
			Recipient: dev.Address(), Deadline: abi.MaxUint256,
		})
	}
	receipts, err := d.sendBatch(ctx, dev, b)
	if err != nil {
		return nil, err
	}
	for i, want := range []common.Address{u.WETH9, u.Factory, u.PositionManager, u.QuoterV2, u.SwapRouter02} {
		if got := receipts[i].ContractAddress; got != want {
			return nil, fmt.Errorf("%s deployed at %s, want %s", b.steps[i].label, got.Hex(), want.Hex())
		}
	}

	if u.PoolWETHUSDT, err = d.getPool(ctx, u.Factory, u.WETH9, usdt); err != nil {
		return nil, err
	}
	if u.PoolDAIUSDT, err = d.getPool(ctx, u.Factory, dai, usdt); err != nil {
		return nil, err
	}
	if u.PoolWETHDAI, err = d.getPool(ctx, u.Factory, u.WETH9, dai); err != nil {
		return nil, err
	}
	// A full-range position can leave a few base units of what was minted
	// for it; burn them so the dev account holds exactly DevUSDT and DevDAI.
	for _, t := range []struct {
		token common.Address
		want  *big.Int
	}{{usdt, DevUSDT}, {dai, DevDAI}} {
		out, err := d.view(ctx, t.token, balanceOfABI, "balanceOf", dev.Address())
		if err != nil {
			return nil, err
		}
		if extra := new(big.Int).Sub(out[0].(*big.Int), t.want); extra.Sign() > 0 {
			data, err := erc20TransferABI.Pack("transfer", burnAddress, extra)
			if err != nil {
				return nil, err
			}
			if _, err := d.SendAsDev(ctx, &t.token, nil, data, 300_000); err != nil {
				return nil, fmt.Errorf("burn pool seed residue: %w", err)
			}
		}
	}
	return u, nil
}

// poolSeed is a pool to create, with the amounts that set its price.
type poolSeed struct {
	label            string
	tokenA, tokenB   common.Address
	amountA, amountB *big.Int
}

// sorted returns the pair in Uniswap's order: token0 is the lower address.
func (s poolSeed) sorted() (token0, token1 common.Address, amount0, amount1 *big.Int) {
	if bytes.Compare(s.tokenA[:], s.tokenB[:]) < 0 {
		return s.tokenA, s.tokenB, s.amountA, s.amountB
	}
	return s.tokenB, s.tokenA, s.amountB, s.amountA
}

// sqrtPriceX96 is the Q64.96 square root of the price of token0 in token1
// (amount1/amount0, both in base units), rounded down:
// floor(sqrt(amount1 * 2^192 / amount0)). Flooring the quotient first does
// not change the result, since floor(sqrt(floor(x))) == floor(sqrt(x)).
func sqrtPriceX96(amount0, amount1 *big.Int) *big.Int {
	q := new(big.Int).Lsh(amount1, 192)
	q.Quo(q, amount0)
	return q.Sqrt(q)
}

// getPool asks the factory for the PoolFee pool of a pair; a pool that does
// not exist is an error.
func (d *Devnet) getPool(ctx context.Context, factory, a, b common.Address) (common.Address, error) {
	out, err := d.view(ctx, factory, factoryABI, "getPool", a, b, big.NewInt(PoolFee))
	if err != nil {
		return common.Address{}, err
	}
	pool := out[0].(common.Address)
	if pool == (common.Address{}) {
		return common.Address{}, fmt.Errorf("factory has no pool for %s/%s at fee %d", a.Hex(), b.Hex(), PoolFee)
	}
	return pool, nil
}

// view makes an eth_call at the latest block and unpacks its result.
func (d *Devnet) view(ctx context.Context, to common.Address, a abi.ABI, method string, args ...any) ([]any, error) {
	data, err := a.Pack(method, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	raw, err := d.client.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
	if err != nil {
		return nil, fmt.Errorf("call %s on %s: %w", method, to.Hex(), err)
	}
	out, err := a.Unpack(method, raw)
	if err != nil {
		return nil, fmt.Errorf("call %s on %s: %w", method, to.Hex(), err)
	}
	return out, nil
}

// batch collects transactions to send back to back. The first packing error
// is kept and reported by sendBatch.
type batch struct {
	steps []step
	err   error
}

type step struct {
	label string
	to    *common.Address // nil deploys
	value *big.Int
	data  []byte
	gas   uint64
}

func (b *batch) deploy(a *artifact, gas uint64, args ...any) {
	data, err := a.creation(args...)
	if err != nil {
		b.fail(err)
		return
	}
	b.steps = append(b.steps, step{label: "deploy " + a.name, data: data, gas: gas})
}

func (b *batch) call(label string, to common.Address, value *big.Int, gas uint64, a abi.ABI, method string, args ...any) {
	data, err := a.Pack(method, args...)
	if err != nil {
		b.fail(fmt.Errorf("%s: %w", label, err))
		return
	}
	b.steps = append(b.steps, step{label: label, to: &to, value: value, data: data, gas: gas})
}

func (b *batch) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// sendBatch signs the steps with consecutive nonces from s, sends them all
// without waiting, then waits for every receipt. The first step that did not
// succeed, in order, is the error; steps after it may have been mined.
func (d *Devnet) sendBatch(ctx context.Context, s signer.Signer, b batch) ([]*types.Receipt, error) {
	if b.err != nil {
		return nil, b.err
	}
	if len(b.steps) == 0 {
		return nil, errors.New("nothing to send")
	}
	nonce, err := d.client.PendingNonceAt(ctx, s.Address())
	if err != nil {
		return nil, err
	}
	hashes := make([]common.Hash, len(b.steps))
	for i, st := range b.steps {
		value := st.value
		if value == nil {
			value = new(big.Int)
		}
		tx := types.NewTx(&types.DynamicFeeTx{
			ChainID:   d.ChainID(),
			Nonce:     nonce + uint64(i),
			GasTipCap: tipCap,
			GasFeeCap: feeCap,
			Gas:       st.gas,
			To:        st.to,
			Value:     value,
			Data:      st.data,
		})
		signed, err := s.SignTx(tx, d.ChainID())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.label, err)
		}
		if err := d.client.SendTransaction(ctx, signed); err != nil {
			return nil, fmt.Errorf("%s: send: %w", st.label, err)
		}
		hashes[i] = signed.Hash()
	}
	receipts := make([]*types.Receipt, len(hashes))
	for i, h := range hashes {
		st := b.steps[i]
		rcpt, err := d.WaitReceipt(ctx, h)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.label, err)
		}
		if rcpt.Status != types.ReceiptStatusSuccessful {
			if rcpt.GasUsed >= st.gas {
				return nil, fmt.Errorf("%s: transaction %s ran out of gas (limit %d)", st.label, h.Hex(), st.gas)
			}
			return nil, fmt.Errorf("%s: transaction %s reverted", st.label, h.Hex())
		}
		receipts[i] = rcpt
	}
	if err := d.poolCaughtUp(ctx, hashes[len(hashes)-1]); err != nil {
		return nil, err
	}
	return receipts, nil
}

// poolCaughtUp waits until the transaction pool no longer holds hash, that
// is, until it has reset its state to a block that includes it. A receipt is
// visible before that reset, and a transaction sent in between is checked
// against the older state: without this wait, an account funded by
// FundAccount can be refused "insufficient funds" on its first send.
func (d *Devnet) poolCaughtUp(ctx context.Context, hash common.Hash) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for d.backend.TxPool().Status(hash) != txpool.TxStatusUnknown {
		select {
		case <-ctx.Done():
			return fmt.Errorf("transaction pool still holds mined transaction %s: %w", hash.Hex(), ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// SwapAs swaps amountIn of tokenIn for tokenOut in the dev chain's Uniswap
// pool at fee, through SwapRouter02.exactInputSingle, from any funded signer,
// with no minimum output: a test helper for moving a pool's price, not
// walletgate's swap path. The router receives an allowance of exactly
// amountIn, set from zero first when another allowance is left (as
// TetherLike requires). When tokenIn is WETH9 the signer pays in ETH
// (msg.value) and the router wraps it; its WETH is not touched. The output
// goes to the signer (as WETH when tokenOut is WETH9). It returns the swap's
// receipt; without Uniswap it returns an error carrying EnableSwapsHint.
func (d *Devnet) SwapAs(ctx context.Context, s signer.Signer, tokenIn, tokenOut common.Address, fee uint32, amountIn *big.Int) (*types.Receipt, error) {
	u := d.Contracts.Uniswap
	if u == nil {
		return nil, errors.New("dev chain: swap: " + EnableSwapsHint)
	}
	if amountIn == nil || amountIn.Sign() <= 0 {
		return nil, errors.New("dev chain: swap: amountIn must be positive")
	}
	var b batch
	var value *big.Int
	if tokenIn == u.WETH9 {
		value = amountIn
	} else {
		out, err := d.view(ctx, tokenIn, erc20ABI, "allowance", s.Address(), u.SwapRouter02)
		if err != nil {
			return nil, fmt.Errorf("dev chain: swap: %w", err)
		}
		if allowance := out[0].(*big.Int); allowance.Cmp(amountIn) < 0 {
			if allowance.Sign() != 0 {
				b.call("reset allowance", tokenIn, nil, 200_000, erc20ABI, "approve", u.SwapRouter02, new(big.Int))
			}
			b.call("approve", tokenIn, nil, 200_000, erc20ABI, "approve", u.SwapRouter02, amountIn)
		}
	}
	b.call("exactInputSingle", u.SwapRouter02, value, 1_000_000, routerABI, "exactInputSingle", exactInputSingleParams{
		TokenIn: tokenIn, TokenOut: tokenOut, Fee: new(big.Int).SetUint64(uint64(fee)), Recipient: s.Address(),
		AmountIn: amountIn, AmountOutMinimum: new(big.Int), SqrtPriceLimitX96: new(big.Int),
	})
	receipts, err := d.sendBatch(ctx, s, b)
	if err != nil {
		return nil, fmt.Errorf("dev chain: swap: %w", err)
	}
	return receipts[len(receipts)-1], nil
}

// FundAccount sends to an account eth wei from the dev account and mints it
// usdt and dai base units of the two test tokens (both let their owner, the
// dev account, mint). A nil or zero amount is skipped.
func (d *Devnet) FundAccount(ctx context.Context, to common.Address, eth, usdt, dai *big.Int) error {
	if to == (common.Address{}) {
		return errors.New("dev chain: fund: the zero address")
	}
	var b batch
	for _, a := range []*big.Int{eth, usdt, dai} {
		if a != nil && a.Sign() < 0 {
			return fmt.Errorf("dev chain: fund: negative amount %s", a)
		}
	}
	if eth != nil && eth.Sign() > 0 {
		b.steps = append(b.steps, step{label: "send ETH", to: &to, value: eth, gas: 100_000})
	}
	if usdt != nil && usdt.Sign() > 0 {
		b.call("mint USDT", d.Contracts.USDT, nil, 200_000, erc20ABI, "mint", to, usdt)
	}
	if dai != nil && dai.Sign() > 0 {
		b.call("mint DAI", d.Contracts.DAI, nil, 200_000, erc20ABI, "mint", to, dai)
	}
	if len(b.steps) == 0 && b.err == nil {
		return nil
	}
	if _, err := d.sendBatch(ctx, signer.Dev(), b); err != nil {
		return fmt.Errorf("dev chain: fund %s: %w", to.Hex(), err)
	}
	return nil
}
