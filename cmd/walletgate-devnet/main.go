// Command walletgate-devnet runs walletgate's embedded dev chain (chain id
// 1337, a real go-ethereum node with a simulated beacon) as a JSON-RPC node on
// loopback, and installs the Uniswap artifacts it deploys.
//
// It is its own binary so that walletgate, which holds keys, links no
// Ethereum node, p2p or database code: `walletgate --dev` and `walletgate demo`
// run this binary as a child process and talk to it over JSON-RPC like any
// node. stdout carries exactly one JSON line (see devnetInfo); everything
// else goes to stderr.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/journal"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const exitUsage = 2

// usageError is a bad command line; it exits with 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func run(argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var err error
	switch {
	case len(argv) > 0 && argv[0] == "install-artifacts":
		err = cmdInstall(argv[1:], stdout)
	case len(argv) > 0 && argv[0] == "version":
		fmt.Fprintln(stdout, "walletgate-devnet", versionString())
		return 0
	case len(argv) > 0 && (argv[0] == "help" || argv[0] == "-h" || argv[0] == "--help"):
		fmt.Fprint(stdout, usageText)
		return 0
	case len(argv) > 0 && !strings.HasPrefix(argv[0], "-"):
		err = usagef("unknown command %q", argv[0])
	default:
		err = cmdServe(argv, stdin, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "walletgate-devnet: %v\n", err)
		var ue *usageError
		var ce *policy.ConfigError
		if errors.As(err, &ue) || errors.As(err, &ce) {
			fmt.Fprint(stderr, usageText)
			return exitUsage
		}
		return 1
	}
	return 0
}

const usageText = `Usage:
  walletgate-devnet [--http 127.0.0.1:PORT] [--chain-id N] [--key-file PATH] [--artifacts DIR]
      serve the dev chain (chain id 1337) as a JSON-RPC node on loopback and print
      one JSON line: its URL, chain id, dev account, contract addresses, the dev
      key file, and whether swaps are on. Ctrl-C (or SIGTERM) stops it.
      --http       loopback host:port (default 127.0.0.1:8545; port 0 picks one)
      --chain-id   1337 (default) or 31337: a second dev chain beside the first
                   (give it another --http port; the dev key file is shared)
      --op-stack   also deploy Optimism's GasPriceOracle and L1Block predeploys
                   (their npm artifacts, testdata/package.json) with L1 fee values
                   set, so the oracle prices a real L1 data fee (geth charges none)
      --key-file   where the dev key is written, 0600 (default: devnet/dev.key under
                   WALLETGATE_STATE_DIR or the user's state directory); kept on stop
      --artifacts  node_modules directory holding the Uniswap npm artifacts
                   (default: WALLETGATE_DEV_ARTIFACTS, else searched for)
      --stop-with-stdin
                   also stop when stdin closes (how walletgate --dev runs it, so
                   the chain never outlives walletgate)
  walletgate-devnet install-artifacts [--from DIR] [--to DIR]
      copy the Uniswap artifacts the dev chain deploys from the source tree's
      testdata/node_modules (after 'cd testdata && npm ci --omit=peer') to the
      user's data directory, where any walletgate --dev finds them
  walletgate-devnet version
`

// devnetInfo is the one JSON line printed on stdout. walletgate --dev reads
// it; keep its field names stable.
type devnetInfo struct {
	RPC        string            `json:"rpc"`
	ChainID    uint64            `json:"chain_id"`
	DevAccount string            `json:"dev_account"`
	KeyFile    string            `json:"key_file"`
	Contracts  map[string]string `json:"contracts"`
	Swaps      string            `json:"swaps"` // "on", or how to turn them on
	OPStack    bool              `json:"op_stack,omitempty"`
	// PriceFeeds are the Chainlink MockV3Aggregator USD feeds by asset
	// (ETH, USDC, USDT, DAI; 8 decimals).
	PriceFeeds map[string]string `json:"price_feeds"`
	// SequencerUptimeFeed is the L2 sequencer uptime feed of an --op-stack chain.
	SequencerUptimeFeed string `json:"sequencer_uptime_feed,omitempty"`
}

func cmdServe(argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("walletgate-devnet", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	httpAddr := fs.String("http", "127.0.0.1:8545", "")
	keyFile := fs.String("key-file", "", "")
	artifacts := fs.String("artifacts", "", "")
	stopWithStdin := fs.Bool("stop-with-stdin", false, "")
	chainID := fs.Uint64("chain-id", devnet.ChainID, "")
	opStack := fs.Bool("op-stack", false, "")
	if err := fs.Parse(argv); err != nil {
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	cfg, err := policy.Load(os.Environ())
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *stopWithStdin {
		go func() {
			_, _ = io.Copy(io.Discard, stdin)
			stop()
		}()
	}

	path := *keyFile
	if path == "" {
		if path, err = defaultKeyFile(cfg); err != nil {
			return err
		}
	}
	if err := ensureDevKeyFile(path); err != nil {
		return err
	}
	dir := *artifacts
	if dir == "" {
		dir = cfg.DevArtifacts
	}
	d, err := devnet.Start(ctx, devnet.Options{HTTPAddr: *httpAddr, ArtifactsDir: dir, ChainID: *chainID, OPStack: *opStack})
	if err != nil {
		return err
	}
	defer d.Close()

	info := devnetInfo{
		RPC:        d.HTTPURL(),
		ChainID:    d.ChainID().Uint64(),
		DevAccount: signer.DevAddress.Hex(),
		KeyFile:    path,
		Contracts:  map[string]string{"USDT": d.Contracts.USDT.Hex(), "DAI": d.Contracts.DAI.Hex(), "USDC": d.Contracts.USDC.Hex()},
		Swaps:      "on",
		OPStack:    *opStack,
	}
	info.PriceFeeds = make(map[string]string, len(d.Contracts.PriceFeeds))
	for asset, a := range d.Contracts.PriceFeeds {
		info.PriceFeeds[asset] = a.Hex()
	}
	if *opStack {
		info.SequencerUptimeFeed = d.Contracts.SequencerUptimeFeed.Hex()
		info.Contracts["GasPriceOracle"], info.Contracts["L1Block"] = devnet.GasPriceOracle.Hex(), devnet.L1Block.Hex()
	}
	if u := d.Contracts.Uniswap; u != nil {
		for name, a := range map[string]string{"WETH": u.WETH9.Hex(), "UniswapV3Factory": u.Factory.Hex(), "NonfungiblePositionManager": u.PositionManager.Hex(),
			"QuoterV2": u.QuoterV2.Hex(), "SwapRouter02": u.SwapRouter02.Hex(), "PoolWETHUSDT": u.PoolWETHUSDT.Hex(), "PoolDAIUSDT": u.PoolDAIUSDT.Hex(), "PoolWETHDAI": u.PoolWETHDAI.Hex()} {
			info.Contracts[name] = a
		}
	} else {
		info.Swaps = devnet.EnableSwapsHint
	}
	line, err := json.Marshal(info)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", line)
	if !*stopWithStdin {
		fmt.Fprintf(stderr, "walletgate-devnet: serving chain id %d at %s; the dev key (in %s) is public, for the local dev chains only. Ctrl-C stops it.\n", info.ChainID, info.RPC, path)
	}
	<-ctx.Done()
	return nil
}

// defaultKeyFile is devnet/dev.key under the state directory: stable, so a
// client configuration can name it.
func defaultKeyFile(cfg policy.Config) (string, error) {
	root := cfg.StateDir
	if root == "" {
		var err error
		if root, err = journal.DefaultDir(); err != nil {
			return "", usagef("no state directory for the dev key file: %v; set WALLETGATE_STATE_DIR or pass --key-file", err)
		}
	}
	dir := filepath.Join(root, "devnet")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("dev key directory: %w", err)
	}
	return filepath.Join(dir, "dev.key"), nil
}

// ensureDevKeyFile writes the dev key to path, or keeps a file already there
// if it holds exactly the dev key and only its owner may read it (the signer
// checks the mode). Anything else at path is refused, never overwritten: it
// may be someone's real key.
func ensureDevKeyFile(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return signer.WriteDevKeyFile(path)
	}
	s, err := signer.FromKeyFile(path)
	if err != nil {
		return fmt.Errorf("%s exists and is not a usable dev key file (%v); remove it or pass another --key-file", path, err)
	}
	if s.Address() != signer.DevAddress {
		return fmt.Errorf("%s holds a key for %s, not the dev key; refusing to touch it: pass another --key-file", path, s.Address().Hex())
	}
	return nil
}

func cmdInstall(argv []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("walletgate-devnet install-artifacts", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	from := fs.String("from", "", "")
	to := fs.String("to", "", "")
	if err := fs.Parse(argv); err != nil {
		return usagef("install-artifacts: %v", err)
	}
	if fs.NArg() > 0 {
		return usagef("install-artifacts: unexpected argument %q", fs.Arg(0))
	}
	src := *from
	if src == "" {
		found, ok := devnet.FindArtifacts()
		def, _ := devnet.DefaultArtifactsDir()
		if !ok || found == def {
			return usagef("install-artifacts: no testdata/node_modules with the Uniswap artifacts upward from here; run 'cd testdata && npm ci --omit=peer' in the walletgate source tree, then this from there, or pass --from DIR")
		}
		src = found
	}
	dst := *to
	if dst == "" {
		var err error
		if dst, err = devnet.DefaultArtifactsDir(); err != nil {
			return err
		}
	}
	n, err := devnet.InstallArtifacts(src, dst)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "walletgate-devnet: installed %d Uniswap artifact files from %s in %s; walletgate --dev finds them there from any directory\n", n, src, dst)
	return nil
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
