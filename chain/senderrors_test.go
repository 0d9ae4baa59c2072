package chain_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/walletgate/walletgate/chain"
)

// Every wording of the table, as its client says it (with the details the
// client appends), classifies to its family; and the full messages below,
// copied from the clients' formats, do too.
func TestSendFamiliesEveryWording(t *testing.T) {
	for _, row := range chain.SendFamilies {
		for _, w := range row.Wordings {
			t.Run(string(row.Family)+"/"+w.Client+"/"+w.Words, func(t *testing.T) {
				for _, msg := range []string{w.Words, strings.ToUpper(w.Words[:1]) + w.Words[1:] + ": address 0x00000000000000000000000000000000000000aa, detail 7"} {
					got := chain.ClassifySend(msg)
					require.NotNil(t, got, msg)
					require.Equal(t, row.Family, got.Family, msg)
				}
			})
		}
	}
	for msg, want := range map[string]chain.SendFamily{
		"nonce too low: address 0x70997970C51812dc3A010C7d01b50e0d17dc79C8, tx: 3 state: 5": chain.SendNonceTooLow, // geth
		"nonce too low: next nonce 5, tx nonce 3":                                           chain.SendNonceTooLow, // reth
		"OldNonce, Current nonce: 5, nonce of rejected tx: 3":                               chain.SendNonceTooLow, // Nethermind before 2026
		"Nonce too low":                                          chain.SendNonceTooLow, // Besu
		"replacement transaction underpriced":                    chain.SendReplacementUnderpriced,
		"transaction underpriced: tip needed 1, tip permitted 0": chain.SendUnderpriced, // geth
		"max fee per gas less than block base fee: address 0xaa, maxFeePerGas: 1, baseFee: 7": chain.SendFeeCapBelowBaseFee,
		"Gas price below current base fee":                                             chain.SendFeeCapBelowBaseFee, // Besu
		"Gas price below configured minimum gas price":                                 chain.SendUnderpriced,        // Besu
		"insufficient funds for gas * price + value: balance 1, tx cost 2, overshot 1": chain.SendInsufficientFunds,
		"Upfront cost exceeds account balance":                                         chain.SendInsufficientFunds, // Besu
		"InsufficientFunds, Account balance: 1, cumulative cost: 2":                    chain.SendInsufficientFunds, // Nethermind before 2026
		"txpool is full":                                chain.SendPoolFull,
		"pending sub-pool is full":                      chain.SendPoolFull, // Erigon
		"exceeds block gas limit":                       chain.SendGasLimit,
		"Transaction gas limit exceeds block gas limit": chain.SendGasLimit, // Besu
		"already known":                                 chain.SendAlreadyKnown,
		"Known transaction":                             chain.SendAlreadyKnown, // Besu
		"existing txn with same hash":                   chain.SendAlreadyKnown, // Erigon
	} {
		got := chain.ClassifySend(msg)
		require.NotNil(t, got, msg)
		require.Equal(t, want, got.Family, msg)
	}
	require.Nil(t, chain.ClassifySend("execution reverted"), "not a refusal the table knows")
	for _, row := range chain.SendFamilies {
		require.Equal(t, row.Family == chain.SendAlreadyKnown || row.Family == chain.SendNonceTooLow, row.MayHaveIt,
			"only the words saying the node has it, or its nonce is used, keep a refusal from being final: %s", row.Family)
	}
}
