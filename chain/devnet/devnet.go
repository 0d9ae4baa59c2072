// Package devnet runs walletgate's embedded dev chain: an in-process
// go-ethereum node (chain id 1337) whose simulated beacon mines a block as soon
// as a transaction arrives, with a funded dev account and the test tokens
// deployed from their compiled bytecode: a USDT look-alike, a DAI-like
// 18-decimal token and a USD Coin look-alike with EIP-2612 permits and
// EIP-3009 transfer authorizations.
//
// When Uniswap's npm artifacts are installed (`cd testdata && npm ci`), it
// also deploys Uniswap v3 (WETH9, factory, position manager, QuoterV2,
// SwapRouter02) with two seeded fee-500 pools, WETH/USDT at 3000 USDT per WETH
// and DAI/USDT at 1:1, so swaps can be quoted and executed against real
// bytecode. Without them it starts all the same, with no Uniswap
// (Contracts.Uniswap is nil; EnableSwapsHint says how to turn swaps on).
//
// It is the engine behind `walletgate --dev`, `walletgate demo` and
// `walletgate devnet`, and what every integration test runs against: real
// bytecode, real receipts, real reverts. It opens no socket unless asked for
// JSON-RPC over HTTP, and then only on the loopback address it is given.
package devnet

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/event"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
	"github.com/walletgate/walletgate/testdata"
)

// ChainID is the dev chain's id.
const ChainID = 1337

// Ether is 10^18 wei.
var Ether = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// Initial holdings of the dev account.
var (
	DevETH  = new(big.Int).Mul(big.NewInt(10_000), Ether)
	DevUSDT = new(big.Int).Mul(big.NewInt(1_000_000), big.NewInt(1_000_000)) // 1,000,000 USDT, 6 decimals
	DevDAI  = new(big.Int).Mul(big.NewInt(1_000_000), Ether)                 // 1,000,000 DAI, 18 decimals
	DevUSDC = new(big.Int).Mul(big.NewInt(1_000_000), big.NewInt(1_000_000)) // 1,000,000 USDC, 6 decimals
	// FacilitatorETH is what the dev facilitator account (signer.DevFacilitator) holds at genesis:
	// enough to deploy the USDC look-alike and settle payments.
	FacilitatorETH = new(big.Int).Mul(big.NewInt(1_000), Ether)
	feeCap         = new(big.Int).Mul(big.NewInt(20), big.NewInt(params.GWei)) // deploy fee cap
	tipCap         = big.NewInt(params.GWei)                                   // deploy tip
)

// Contracts are the addresses of what the dev chain deploys at start. They
// are CREATE addresses of the dev account at fixed nonces, so they are the same
// on every start (policy's known-token table lists them).
type Contracts struct {
	USDT common.Address // TetherLike: 6 decimals, mainnet-USDT quirks
	DAI  common.Address // TestToken: 18 decimals, standard

	// USDC is a USD Coin look-alike (PermitToken: 6 decimals, EIP-2612
	// permits, EIP-3009 transfer authorizations, EIP-712 domain name
	// USDCName and version USDCVersion as real USDC has them), deployed
	// last, by the dev facilitator account at its nonce 0: its address
	// depends on nothing the dev account deploys (Uniswap or not), and the
	// fixed addresses above do not move. The dev account holds DevUSDC.
	USDC common.Address

	// Uniswap is the Uniswap v3 deployment, deployed right after the tokens
	// (nonces 2 to 6), or nil when its npm artifacts were not found.
	Uniswap *Uniswap

	// PriceFeeds are Chainlink MockV3Aggregator USD price feeds by asset
	// (FeedAssets: ETH at $3,000, USDC, USDT and DAI at $1, FeedDecimals
	// decimals), deployed by the dev facilitator after USDC at the fixed
	// addresses FeedAddress names (see feeds.go).
	PriceFeeds map[string]common.Address

	// SequencerUptimeFeed is, on an OP-stack dev chain, a MockV3Aggregator
	// standing for Chainlink's L2 sequencer uptime feed (answer 0: up, 1:
	// down; startedAt: when that status began), deployed after the price
	// feeds; zero on other dev chains.
	SequencerUptimeFeed common.Address
}

// The EIP-712 domain of the dev USDC: the name and version real USDC (FiatTokenV2) uses.
const (
	USDCName    = "USD Coin"
	USDCVersion = "2"
)

// Options configure a dev chain.
type Options struct {
	// HTTPAddr, when set, serves JSON-RPC over HTTP on this loopback
	// host:port ("127.0.0.1:0" picks a free port).
	HTTPAddr string

	// ChainID is the chain's id: 0 is ChainID (1337); any other must be a
	// local dev chain id of policy's network table (31337), which the public
	// dev keys sign for, so that two dev chains can run side by side.
	ChainID uint64

	// OPStack deploys Optimism's GasPriceOracle and L1Block predeploys at
	// genesis (see opstack.go), with L1 (zero: DefaultL1Values) in L1Block.
	OPStack bool
	L1      L1Values
	// OPArtifactsDir is a node_modules directory holding
	// @eth-optimism/contracts-bedrock; empty: ArtifactsDir's, or
	// FindArtifacts'.
	OPArtifactsDir string

	// ArtifactsDir is the node_modules directory holding Uniswap's npm
	// packages (see testdata/package.json). Empty means FindArtifacts, and
	// no Uniswap if they are not found; when set, they must be there.
	ArtifactsDir string
}

// Devnet is a running dev chain. Close stops it.
type Devnet struct {
	chainID   *big.Int
	stack     *node.Node
	backend   *eth.Ethereum
	beacon    *catalyst.SimulatedBeacon
	client    *ethclient.Client
	Contracts Contracts

	quit, done chan struct{}
	adjust     chan adjustReq
}

type adjustReq struct {
	by  time.Duration
	err chan error
}

// mine is the only goroutine that seals blocks: on every batch of new
// transactions, on a safety tick, and on AdjustTime requests. Apart from
// AdjustTime it seals only while an executable transaction waits, so the
// head moves once per block of transactions and stays put between them: an
// event queued for transactions an earlier block already took seals no
// empty block (tests that need a head of a given parity rely on it).
func (d *Devnet) mine(newTxs chan core.NewTxsEvent, sub event.Subscription) {
	defer close(d.done)
	defer sub.Unsubscribe()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-d.quit:
			return
		case <-newTxs:
			d.commitWaiting()
		case <-tick.C:
			d.commitWaiting()
		case req := <-d.adjust:
			req.err <- d.beacon.AdjustTime(req.by)
		}
	}
}

// commitWaiting seals blocks while an executable transaction waits (at most
// a few, so a transaction the miner will not include cannot spin forever).
func (d *Devnet) commitWaiting() {
	for i := 0; i < 8; i++ {
		if exec, _ := d.backend.TxPool().Stats(); exec == 0 {
			return
		}
		d.beacon.Commit()
		d.backend.TxPool().Sync()
	}
}

// Start boots the chain, deploys the test tokens and, when its artifacts are
// installed, Uniswap (see Contracts.Uniswap), and returns when all is mined.
func Start(ctx context.Context, opts Options) (*Devnet, error) {
	id := opts.ChainID
	if id == 0 {
		id = ChainID
	}
	if n := policy.LookupNetwork(id); n.Kind != policy.Dev {
		return nil, fmt.Errorf("dev chain: chain id %d is %s (%s), not a local dev chain id: walletgate-devnet runs %s", id, n.Name, n.Kind, devIDs())
	}
	nodeConf := node.DefaultConfig
	nodeConf.DataDir = "" // in memory
	nodeConf.IPCPath = ""
	nodeConf.P2P = p2p.Config{NoDiscovery: true, MaxPeers: 0, ListenAddr: ""}
	nodeConf.HTTPHost = ""
	nodeConf.WSHost = ""
	nodeConf.AuthPort = 0
	if opts.HTTPAddr != "" {
		host, port, err := loopback(opts.HTTPAddr)
		if err != nil {
			return nil, err
		}
		nodeConf.HTTPHost, nodeConf.HTTPPort = host, port
		nodeConf.HTTPModules = []string{"eth", "net", "web3"}
		nodeConf.HTTPVirtualHosts = []string{"localhost", "127.0.0.1"}
	}

	alloc := core.SystemContractAllocs()
	maps.Copy(alloc, types.GenesisAlloc{signer.DevAddress: {Balance: DevETH}, signer.DevFacilitatorAddress: {Balance: FacilitatorETH}})
	if opts.OPStack {
		l1 := opts.L1
		if l1.BaseFee == nil {
			l1 = DefaultL1Values()
		}
		op, err := opStackAlloc(opArtifactsDir(opts.OPArtifactsDir, opts.ArtifactsDir), l1)
		if err != nil {
			return nil, err
		}
		maps.Copy(alloc, op)
	}
	// Every start is a new chain, and its genesis says so: 32 random bytes
	// of extra data make its hash this chain's own, so that a walletgate
	// whose journal belongs to an earlier dev chain (same id, same key)
	// tells the two apart (a real chain has one genesis).
	var extra [32]byte
	if _, err := rand.Read(extra[:]); err != nil {
		return nil, fmt.Errorf("dev chain: genesis: %w", err)
	}
	ethConf := ethconfig.Defaults
	chainConf := *params.AllDevChainProtocolChanges
	chainConf.ChainID = new(big.Int).SetUint64(id)
	ethConf.Genesis = &core.Genesis{
		Config:    &chainConf,
		GasLimit:  ethconfig.Defaults.Miner.GasCeil,
		Alloc:     alloc,
		ExtraData: extra[:],
	}
	ethConf.SyncMode = ethconfig.FullSync
	ethConf.TxPool.NoLocals = true

	stack, err := node.New(&nodeConf)
	if err != nil {
		return nil, fmt.Errorf("dev chain: new node: %w", err)
	}
	backend, err := eth.New(stack, &ethConf)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("dev chain: eth service: %w", err)
	}
	stack.RegisterAPIs([]rpc.API{{
		Namespace: "eth",
		Service:   filters.NewFilterAPI(filters.NewFilterSystem(backend.APIBackend, filters.Config{})),
	}})
	// Period 0: the beacon seals a block only when asked; the miner loop
	// below asks whenever transactions arrive.
	beacon, err := catalyst.NewSimulatedBeacon(0, common.Address{}, backend)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("dev chain: simulated beacon: %w", err)
	}
	stack.RegisterLifecycle(beacon)
	if err := stack.Start(); err != nil {
		stack.Close()
		return nil, fmt.Errorf("dev chain: start: %w", err)
	}
	d := &Devnet{chainID: new(big.Int).SetUint64(id), stack: stack, backend: backend, beacon: beacon, client: ethclient.NewClient(stack.Attach()),
		quit: make(chan struct{}), done: make(chan struct{}), adjust: make(chan adjustReq)}
	// Subscribe before anything is sent, so no transaction's arrival is
	// missed. (go-ethereum's own dev-mode loop subscribes in a goroutine: a
	// transaction sent right after start can wait forever.)
	newTxs := make(chan core.NewTxsEvent, 64)
	sub := backend.TxPool().SubscribeTransactions(newTxs, true)
	go d.mine(newTxs, sub)
	if err := d.deploy(ctx); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.startUniswap(ctx, opts.ArtifactsDir); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.deployUSDC(ctx); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.deployFeeds(ctx, opts.OPStack); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// ChainID is the chain's id (Options.ChainID).
func (d *Devnet) ChainID() *big.Int { return new(big.Int).Set(d.chainID) }

// devIDs names the ids a dev chain may have.
func devIDs() string {
	var ids []string
	for _, n := range policy.KnownNetworks() {
		if n.Kind == policy.Dev {
			ids = append(ids, fmt.Sprint(n.ChainID))
		}
	}
	return "chain id " + strings.Join(ids, " or ")
}

// loopback splits a host:port and refuses anything but a loopback address.
func loopback(addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("dev chain: --http %q: expected 127.0.0.1:PORT", addr)
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", 0, fmt.Errorf("dev chain: --http %q: only loopback addresses (127.0.0.1, ::1) are served", addr)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("dev chain: --http %q: bad port", addr)
	}
	return host, port, nil
}

// deploy deploys the test tokens from the dev account at nonces 0 and 1.
func (d *Devnet) deploy(ctx context.Context) error {
	usdt, err := d.Deploy(ctx, "TetherLike", DevUSDT)
	if err != nil {
		return err
	}
	dai, err := d.Deploy(ctx, "TestToken", "Dai Stablecoin (walletgate dev)", "DAI", uint8(18), DevDAI)
	if err != nil {
		return err
	}
	d.Contracts = Contracts{USDT: usdt, DAI: dai}
	return nil
}

// deployUSDC deploys the USD Coin look-alike from the dev facilitator
// account (its nonce 0) and mints DevUSDC of it to the dev account.
func (d *Devnet) deployUSDC(ctx context.Context) error {
	f := signer.DevFacilitator()
	usdc, err := d.DeployAs(ctx, f, "PermitToken", USDCName, "USDC", USDCVersion, uint8(6), new(big.Int))
	if err != nil {
		return err
	}
	abiJSON, _, err := testdata.Contract("PermitToken")
	if err != nil {
		return fmt.Errorf("dev chain: %w", err)
	}
	parsed, err := abi.JSON(strings.NewReader(abiJSON))
	if err != nil {
		return fmt.Errorf("dev chain: PermitToken abi: %w", err)
	}
	mint, err := parsed.Pack("mint", signer.DevAddress, DevUSDC)
	if err != nil {
		return fmt.Errorf("dev chain: USDC mint: %w", err)
	}
	if _, err := d.SendAs(ctx, f, &usdc, nil, mint, 500_000); err != nil {
		return fmt.Errorf("dev chain: USDC mint: %w", err)
	}
	d.Contracts.USDC = usdc
	return nil
}

// Deploy deploys a compiled test contract from the dev account with the
// given constructor arguments and waits for it to be mined.
func (d *Devnet) Deploy(ctx context.Context, name string, args ...any) (common.Address, error) {
	return d.DeployAs(ctx, signer.Dev(), name, args...)
}

// DeployAs is Deploy from another account.
func (d *Devnet) DeployAs(ctx context.Context, s signer.Signer, name string, args ...any) (common.Address, error) {
	abiJSON, code, err := testdata.Contract(name)
	if err != nil {
		return common.Address{}, fmt.Errorf("dev chain: %w", err)
	}
	parsed, err := abi.JSON(strings.NewReader(abiJSON))
	if err != nil {
		return common.Address{}, fmt.Errorf("dev chain: %s abi: %w", name, err)
	}
	ctor, err := parsed.Pack("", args...)
	if err != nil {
		return common.Address{}, fmt.Errorf("dev chain: %s constructor: %w", name, err)
	}
	rcpt, err := d.SendAs(ctx, s, nil, nil, append(append([]byte{}, code...), ctor...), 5_000_000)
	if err != nil {
		return common.Address{}, fmt.Errorf("dev chain: deploy %s: %w", name, err)
	}
	return rcpt.ContractAddress, nil
}

// SendAsDev signs a transaction from the dev account (to == nil deploys),
// sends it and waits for its receipt. A reverted transaction is an error.
// It is a test and set-up helper, not walletgate's write path.
func (d *Devnet) SendAsDev(ctx context.Context, to *common.Address, value *big.Int, data []byte, gas uint64) (*types.Receipt, error) {
	return d.SendAs(ctx, signer.Dev(), to, value, data, gas)
}

// SendAs is SendAsDev for any signer.
func (d *Devnet) SendAs(ctx context.Context, s signer.Signer, to *common.Address, value *big.Int, data []byte, gas uint64) (*types.Receipt, error) {
	nonce, err := d.client.PendingNonceAt(ctx, s.Address())
	if err != nil {
		return nil, err
	}
	if value == nil {
		value = new(big.Int)
	}
	tx := types.NewTx(&types.DynamicFeeTx{
		ChainID:   d.ChainID(),
		Nonce:     nonce,
		GasTipCap: tipCap,
		GasFeeCap: feeCap,
		Gas:       gas,
		To:        to,
		Value:     value,
		Data:      data,
	})
	signed, err := s.SignTx(tx, d.ChainID())
	if err != nil {
		return nil, err
	}
	if err := d.client.SendTransaction(ctx, signed); err != nil {
		return nil, err
	}
	rcpt, err := d.WaitReceipt(ctx, signed.Hash())
	if err != nil {
		return nil, err
	}
	if rcpt.Status != types.ReceiptStatusSuccessful {
		return rcpt, fmt.Errorf("transaction %s reverted", signed.Hash().Hex())
	}
	return rcpt, nil
}

// WaitReceipt polls for a receipt until ctx ends or 10 s pass.
func (d *Devnet) WaitReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		rcpt, err := d.client.TransactionReceipt(ctx, hash)
		if err == nil {
			// A receipt is visible before the pool resets to its block; a
			// send right after could be checked against the older state.
			return rcpt, d.poolCaughtUp(ctx, hash)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("receipt of %s: %w (last: %v)", hash.Hex(), ctx.Err(), err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// RPC returns a new in-process RPC client for the chain.
func (d *Devnet) RPC() *rpc.Client { return d.stack.Attach() }

// Client is an ethclient over the in-process connection, for tests.
func (d *Devnet) Client() *ethclient.Client { return d.client }

// HTTPURL is the JSON-RPC URL when HTTPAddr was set, else "".
func (d *Devnet) HTTPURL() string {
	if d.stack.Config().HTTPHost == "" {
		return ""
	}
	return d.stack.HTTPEndpoint()
}

// AdjustTime moves the chain's clock forward by sealing an empty block that
// much later. Only valid when no transaction is pending.
func (d *Devnet) AdjustTime(by time.Duration) error {
	req := adjustReq{by: by, err: make(chan error, 1)}
	select {
	case d.adjust <- req:
		return <-req.err
	case <-d.done:
		return errors.New("dev chain: closed")
	}
}

// Close stops the chain.
func (d *Devnet) Close() error {
	if d.quit != nil {
		select {
		case <-d.quit:
		default:
			close(d.quit)
			<-d.done
		}
	}
	if d.client != nil {
		d.client.Close()
	}
	return d.stack.Close()
}
