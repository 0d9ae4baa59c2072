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
	"syscall"

	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/signer"
)

// devnetInfo is the one JSON line `walletgate devnet` prints on stdout.
type devnetInfo struct {
	RPC        string            `json:"rpc"`
	ChainID    uint64            `json:"chain_id"`
	DevAccount string            `json:"dev_account"`
	KeyFile    string            `json:"key_file"`
	Contracts  map[string]string `json:"contracts"`
	Swaps      string            `json:"swaps"` // "on", or how to turn them on
}

func cmdDevnet(argv []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("walletgate devnet", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	httpAddr := fs.String("http", "127.0.0.1:8545", "loopback host:port to serve JSON-RPC on (port 0 picks a free one)")
	keyFile := fs.String("key-file", "", "where to write the dev key (default: a new private temporary directory)")
	if err := fs.Parse(argv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: walletgate devnet [--http 127.0.0.1:PORT] [--key-file PATH]")
			return nil
		}
		return usagef("devnet: %v (usage: walletgate devnet --http 127.0.0.1:PORT [--key-file PATH])", err)
	}
	if fs.NArg() > 0 {
		return usagef("devnet: unexpected argument %q", fs.Arg(0))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	path := *keyFile
	if path == "" {
		dir, err := os.MkdirTemp("", "walletgate-devnet-")
		if err != nil {
			return fmt.Errorf("devnet: key directory: %w", err)
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "dev.key")
	}
	if err := signer.WriteDevKeyFile(path); err != nil {
		return fmt.Errorf("devnet: %w", err)
	}
	if *keyFile == "" {
		defer os.Remove(path)
	}

	d, err := devnet.Start(ctx, devnet.Options{HTTPAddr: *httpAddr})
	if err != nil {
		return err
	}
	defer d.Close()

	info := devnetInfo{
		RPC:        d.HTTPURL(),
		ChainID:    devnet.ChainID,
		DevAccount: signer.DevAddress.Hex(),
		KeyFile:    path,
		Contracts:  map[string]string{"USDT": d.Contracts.USDT.Hex(), "DAI": d.Contracts.DAI.Hex()},
		Swaps:      "on",
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
	fmt.Fprintf(stderr, "walletgate devnet: serving chain id %d at %s; the dev key is public, for this chain only. Ctrl-C stops it.\n", devnet.ChainID, info.RPC)
	<-ctx.Done()
	return nil
}
