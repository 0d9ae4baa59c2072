package main

// `walletgate policy`: what an assistant connected with this environment
// may do right now, from a server built read-only (app.ReadOnly).

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/walletgate/walletgate/internal/app"
	"github.com/walletgate/walletgate/policy"
)

// cmdPolicy explains in plain text what an assistant connected with the
// current environment may do right now.
func cmdPolicy(argv []string, stdout, stderr io.Writer) error {
	dev := len(argv) == 1 && argv[0] == "--dev"
	if len(argv) > 0 && !dev {
		return cmdLinef("policy", "unexpected argument %q (usage: walletgate policy [--dev])", argv[0])
	}
	cfg, err := policy.Load(os.Environ())
	if err != nil {
		return err
	}
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := app.ReadOnly(ctx, app.Options{Config: cfg, Dev: dev, Shared: shared(), Logger: logger, Version: versionString()})
	if err != nil {
		return err
	}
	defer a.Close()
	text, err := a.Server().PolicyText(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, text) // it says so when writes are refused for an unusable journal
	return nil
}
