package tools

// Recovery of transactions whose outcome walletgate did not see. Rules: a
// transaction is only ever re-sent as the identical signed bytes that were
// journaled before its first broadcast — never re-signed, so one intent can
// never become two transactions; its caps reservation stays counted until its
// outcome is known (and, conservatively, after it is).

import (
	"context"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/walletgate/walletgate/journal"
)

// KindDropped marks a journaled transaction that never executed: its nonce
// was used by another transaction.
const KindDropped = journal.KindDropped

// pendingTx is a journaled signed transaction with no receipt yet.
type pendingTx struct {
	hash  common.Hash
	raw   []byte
	nonce uint64
	from  common.Address
	tool  string
}

// pendingFrom lists signed transactions without a receipt or a drop record,
// as the journal's live state keeps them.
func pendingFrom(live *journal.Live) ([]pendingTx, error) {
	var out []pendingTx
	for _, p := range live.Pending {
		d := p.Signed
		raw, err := hexutil.Decode(d.Raw)
		if err != nil {
			return nil, fmt.Errorf("journal record %d: raw transaction: %w", p.Seq, err)
		}
		out = append(out, pendingTx{hash: common.HexToHash(d.Tx), raw: raw, nonce: d.Nonce, from: common.HexToAddress(d.From), tool: d.Tool})
	}
	return out, nil
}

// pending reads the open transactions from the journal's live state.
func (s *Server) pending() ([]pendingTx, error) {
	var out []pendingTx
	err := s.journal.View(func(live *journal.Live) (err error) {
		out, err = pendingFrom(live)
		return err
	})
	return out, err
}

// PendingTransactions lists the journaled transactions whose outcome is not
// known yet.
func (s *Server) PendingTransactions() []string {
	if s.journal == nil {
		return nil
	}
	pending, err := s.pending()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(pending))
	for _, p := range pending {
		out = append(out, p.hash.Hex())
	}
	return out
}

// Reconcile settles what the journal left open, typically after a crash or a
// lost connection: for each signed transaction without a receipt, a mined one
// gets its receipt journaled; one the node does not know is re-sent as the
// identical signed bytes, or marked dropped once its nonce was used by another
// transaction. It returns a line per transaction for the log.
func (s *Server) Reconcile(ctx context.Context) ([]string, error) {
	if s.journal == nil {
		return nil, nil
	}
	pending, err := s.pending()
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, p := range pending {
		line, err := s.reconcileOne(ctx, p)
		if err != nil {
			return lines, err
		}
		lines = append(lines, line)
	}
	return lines, nil
}

func (s *Server) reconcileOne(ctx context.Context, p pendingTx) (string, error) {
	info, err := s.chain.Transaction(ctx, p.hash)
	if err != nil {
		return "", err
	}
	switch {
	case info.Mined:
		s.recordReceipt(info)
		return fmt.Sprintf("%s was included in block %d (status %d); its receipt is now journaled", p.hash.Hex(), info.Block, info.Status), nil
	case info.Found:
		return fmt.Sprintf("%s is still waiting in the node's pool", p.hash.Hex()), nil
	}
	acct, err := s.chain.Account(ctx, p.from, nil)
	if err != nil {
		return "", err
	}
	if acct.Nonce > p.nonce {
		_ = s.record(KindDropped, journal.Dropped{V: journal.Version, Tx: p.hash.Hex(), Nonce: p.nonce, Reason: "its nonce was used by another transaction"})
		return fmt.Sprintf("%s never executed: nonce %d was used by another transaction; marked dropped (its reservation stays counted)", p.hash.Hex(), p.nonce), nil
	}
	if err := s.resend(ctx, p.hash, p.raw); err != nil {
		return fmt.Sprintf("%s is unknown to the node and re-sending its signed bytes failed (%s); it stays pending", p.hash.Hex(), err), nil
	}
	if info, err := s.chain.WaitMined(ctx, p.hash, s.cfg.Confirmations, s.cfg.ReceiptTimeout); err == nil && info.Mined {
		s.recordReceipt(info)
		return fmt.Sprintf("%s was unknown to the node: its identical signed bytes were broadcast again and included in block %d", p.hash.Hex(), info.Block), nil
	}
	return fmt.Sprintf("%s was unknown to the node: its identical signed bytes were broadcast again; not included yet", p.hash.Hex()), nil
}

// resend broadcasts journaled signed bytes again, checking they are the
// transaction they claim to be.
func (s *Server) resend(ctx context.Context, hash common.Hash, raw []byte) error {
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(raw); err != nil || tx.Hash() != hash {
		return fmt.Errorf("the journaled bytes are not transaction %s", hash.Hex())
	}
	err := s.chain.SendRaw(ctx, tx)
	_ = s.record(KindBroadcast, broadcastRecord(hash, err))
	return err
}

// settleUnknownBroadcast follows a broadcast whose answer was lost: the node
// may have the transaction. It looks the hash up and, while the node does not
// know it, re-sends the identical bytes, a few times.
func (s *Server) settleUnknownBroadcast(ctx context.Context, tx *types.Transaction) {
	raw, _ := tx.MarshalBinary()
	for attempt := 0; attempt < 3; attempt++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(50*(attempt+1)) * time.Millisecond):
		}
		if info, err := s.chain.Transaction(ctx, tx.Hash()); err == nil && info.Found {
			return
		}
		if err := s.resend(ctx, tx.Hash(), raw); err == nil {
			return
		}
	}
}
