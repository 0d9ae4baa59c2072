package main_test

// A journal written by any earlier build starts under this one: the golden
// journals of every checkpoint format before versions (journal/testdata,
// README.state there), put where walletgate keeps its wallet's journal on
// the dev chain, open, take a send, and verify afterwards.

import (
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

func TestGoldenJournalsOfEveryFormatStart(t *testing.T) {
	info := startDevnet(t)
	view := newChainView(t, info)
	for i, name := range []string{"state-v1", "state-v2", "state-v3", "state-v4", "state-v1-then-v2"} {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			dir := filepath.Join(state, "1337-"+info.DevAccount)
			require.NoError(t, os.Mkdir(dir, 0o700))
			src := filepath.Join("..", "..", "journal", "testdata", name)
			entries, err := os.ReadDir(src)
			require.NoError(t, err)
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(src, e.Name()))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600))
			}
			env := capsEnv(info, state)
			c := startServer(t, env)
			c.initialize()
			to := common.BigToAddress(big.NewInt(0xe2e70 + int64(i)))
			out := confirmUSDT(t, c, to, "5")
			require.Equal(t, "confirmed", out["status"], "%v\nstderr:\n%s", out, c.stderr.String())
			require.Equal(t, big.NewInt(5_000_000), view.usdtOf(to))
			require.Equal(t, "5", dayUsed(t, c, "USDT"))
			c.stop()
			require.NotContains(t, c.stderr.String(), "cannot be used", "the journal was taken")

			cmd := exec.Command(binary, "audit", "verify")
			cmd.Env = env
			verified, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", verified)
			require.Contains(t, string(verified), "checkpoints match the history")
		})
	}
}
