package engine

// Nodes as they are: writes through a proxy imitating a hosted provider
// (internal/nodeproxy) in front of the real dev chain. Whatever the node
// answers, the outcome is the right one of the three, the caps count what
// moved, and the proxy never sees a broadcast more than the outcome rule
// sends.

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
	"github.com/walletgate/walletgate/chain/devnet"
	"github.com/walletgate/walletgate/internal/nodeproxy"
	"github.com/walletgate/walletgate/policy"
	"github.com/walletgate/walletgate/signer"
)

// providerBed is the dev chain over HTTP behind a provider proxy, with the
// engine's client dialled through the proxy.
func providerBed(t *testing.T) (*testBed, *nodeproxy.Proxy) {
	t.Helper()
	d, err := devnet.Start(context.Background(), devnet.Options{HTTPAddr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	p := nodeproxy.New(d.HTTPURL())
	t.Cleanup(p.Close)
	c, err := chain.Dial(context.Background(), []string{p.URL()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return &testBed{t: t, dev: d, chain: c}, p
}

// Every wording of every client's refusal, answered to the one broadcast of
// an ETH send. A refusal that says the node has the transaction (already
// known, nonce too low) is answered here after the node accepted it, as
// nodes do: the send is confirmed. Every other refusal is final once the
// lookup shows the node lacks it: nothing moved, the caps are released.
// Either way the proxy sees exactly one eth_sendRawTransaction.
func TestEveryRefusalFamilyGetsTheRightAnswer(t *testing.T) {
	b, p := providerBed(t)
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d1")
	for _, row := range chain.SendFamilies {
		for _, w := range row.Wordings {
			t.Run(string(row.Family)+"/"+w.Client+"/"+w.Words, func(t *testing.T) {
				e := b.engine(&memRecorder{now: time.Now})
				token, canonical := b.previewETH(e, to, 1e12)
				p.SendError(w.Words, row.MayHaveIt, 1)
				sends, nonce, before := p.Broadcasts(), b.nonce(), b.balance(to)
				out, ref := e.Confirm(context.Background(), TokenMode{}, token, "wallet_send", canonical)
				require.Equal(t, sends+1, p.Broadcasts(), "one broadcast, never re-sent")
				if row.MayHaveIt {
					require.Nil(t, ref)
					require.Equal(t, StatusConfirmed, out.Status, "the node had it: the lookup finds it, its receipt confirms it")
					require.Equal(t, new(big.Int).Add(before, big.NewInt(1e12)), b.balance(to))
					return
				}
				require.NotNil(t, ref, "a refusal the node shows final")
				require.Equal(t, CodeSendFailed, ref.Code)
				require.Contains(t, ref.Reason(), w.Words)
				require.Equal(t, nonce, b.nonce(), "nothing was sent")
				require.Equal(t, before, b.balance(to))
				require.Zero(t, used(e, policy.NativeAsset)[policy.NativeAsset].Sign(), "the caps are released")
			})
		}
	}
}

// A refusal in words saying the node has the transaction or its nonce is
// used ("already known", "nonce too low", every client's), from a provider
// whose node does not in fact have it (a load balancer's other node): it is
// never ended as not sent on a lookup that does not find it; it stays
// pending and counted, and the next follow-up sends its identical bytes —
// the outcome rule's one re-send, and the only second broadcast.
func TestMayHaveItRefusalsStayPending(t *testing.T) {
	b, p := providerBed(t)
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d2")
	for _, row := range chain.SendFamilies {
		if !row.MayHaveIt {
			continue
		}
		for _, w := range row.Wordings {
			t.Run(string(row.Family)+"/"+w.Client+"/"+w.Words, func(t *testing.T) {
				e := b.engine(&memRecorder{now: time.Now})
				e.receiptTimeout = 300 * time.Millisecond
				token, canonical := b.previewETH(e, to, 1e12)
				p.SendError(w.Words, false, 1)
				sends, before := p.Broadcasts(), b.balance(to)
				out, ref := e.Confirm(context.Background(), TokenMode{}, token, "wallet_send", canonical)
				require.Nil(t, ref, "never called not sent")
				require.Equal(t, StatusPending, out.Status)
				require.Equal(t, sends+1, p.Broadcasts())
				require.Positive(t, used(e, policy.NativeAsset)[policy.NativeAsset].Sign(), "still counted")

				lines, err := e.Reconcile(context.Background())
				require.NoError(t, err)
				require.Len(t, lines, 1)
				require.Contains(t, lines[0], "identical signed bytes were broadcast again")
				require.Equal(t, sends+2, p.Broadcasts(), "the outcome rule's re-send, the only one")
				require.Equal(t, new(big.Int).Add(before, big.NewInt(1e12)), b.balance(to), "sent, moved once")
			})
		}
	}
}

// 429 with Retry-After on every kind of request of a send, a batch limit of
// 10, and a receipt that disappears in a one-block reorg (two confirmations
// asked): the send is confirmed with the receipt that came back, and the proxy
// sees one broadcast.
func TestAHostedProviderConfirmsOnce(t *testing.T) {
	b, p := providerBed(t)
	p.BatchLimit(10, "")
	e := b.engine(&memRecorder{now: time.Now})
	e.confirmations = 2
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d3")
	token, canonical := b.previewETH(e, to, 1e12)
	p.TooManyRequests(2, "1")
	p.ReorgNext()
	sends := p.Broadcasts()
	done := make(chan struct{})
	var (
		out *Outcome
		ref *Refusal
	)
	go func() {
		defer close(done)
		out, ref = e.Confirm(context.Background(), TokenMode{}, token, "wallet_send", canonical)
	}()
	// The broadcast's receipt vanishes once seen (at one confirmation) and
	// comes back; only then are blocks made (another account's sends), until
	// the engine has two confirmations of it.
	var hash common.Hash
	for {
		served := p.Served() // taken before the check: no answer is missed
		if hash = p.LastSent(); hash != (common.Hash{}) && p.Reorged(hash) {
			break
		}
		select {
		case <-done:
			t.Fatalf("finished before its receipt came back: %+v %v", out, ref)
		case <-served:
		}
	}
	other, sink := signer.DevFacilitator(), common.HexToAddress("0x00000000000000000000000000000000000b10c5")
	for i := 0; ; i++ {
		select {
		case <-done:
			require.Nil(t, ref)
			require.Equal(t, StatusConfirmed, out.Status)
			require.Equal(t, hash, out.Tx)
			require.True(t, p.Reorged(hash), "its receipt vanished once and came back before the confirmation: %d receipt lookups, %d blocks made", p.Arrived("eth_getTransactionReceipt"), i)
			require.Equal(t, sends+1, p.Broadcasts(), "one broadcast through 429s, a batch limit and a reorg")
			require.Equal(t, big.NewInt(1e12), b.balance(to))
			rc, err := b.dev.Client().TransactionReceipt(context.Background(), hash)
			require.NoError(t, err)
			require.NotNil(t, out.Block)
			require.Equal(t, rc.BlockNumber.Uint64(), *out.Block, "the receipt that stayed")
			return
		default:
		}
		require.Less(t, i, 200, "confirmed within 200 blocks")
		_, err := b.dev.SendAs(context.Background(), other, &sink, big.NewInt(1), nil, 21000)
		require.NoError(t, err)
	}
}

// A node that serves a batch out of order (the lookup riding after the
// broadcast that waits runs before it, the answers come back last first):
// the write is still right — sent once, confirmed from its own receipt,
// the caps settled to what moved.
func TestANodeThatServesBatchesOutOfOrderStillGetsARightWrite(t *testing.T) {
	b, p := providerBed(t)
	p.ReverseBatches()
	e := b.engine(&memRecorder{now: time.Now})
	to := common.HexToAddress("0x00000000000000000000000000000000000f00d5")
	token, canonical := b.previewETH(e, to, 1e12)
	sends, before := p.Broadcasts(), b.balance(signer.DevAddress)
	out, ref := e.Confirm(context.Background(), TokenMode{}, token, "wallet_send", canonical)
	require.Nil(t, ref)
	require.Equal(t, StatusConfirmed, out.Status)
	require.Equal(t, sends+1, p.Broadcasts(), "sent once")
	require.Equal(t, "1000000000000", b.balance(to).String())
	moved := new(big.Int).Sub(before, b.balance(signer.DevAddress))
	require.Equal(t, moved.String(), used(e, policy.NativeAsset)[policy.NativeAsset].String(), "the caps count what moved")
}
