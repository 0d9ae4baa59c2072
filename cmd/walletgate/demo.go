package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/walletgate/walletgate/internal/demo"
)

// cmdDemo is walletgate demo (internal/demo): it takes no arguments. Ctrl-C
// ends it through its cleanup, which stops the dev chain.
func cmdDemo(argv []string, stdout, _ io.Writer) error {
	if len(argv) > 0 {
		return cmdLinef("demo", "demo takes no arguments")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return demo.Run(ctx, versionString(), stdout)
}
